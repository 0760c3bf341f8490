"""opalg.course.display's animations: rendering without the per-frame screen refresh gives the same
HTML as with it, and leaves the canvas as it was (also on an error)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402

from opalg.course import display  # noqa: E402

ALT = "A sine wave moving to the right, its title counting the frames."


def _animation(layout):
    fig, ax = plt.subplots(figsize=(2.4, 1.6), layout=layout)
    x = np.linspace(0.0, 6.0, 60)
    (line,) = ax.plot(x, np.sin(x))

    def frame(i):
        line.set_ydata(np.sin(x + i / 3))
        ax.set_title(f"frame {i}: $t$ = {i / 6:.2f} s", fontsize=8)   # a title that changes size

    return fig, FuncAnimation(fig, frame, frames=6)


@pytest.mark.parametrize("layout", [None, "constrained", "tight"])
def test_animation_html_without_the_refresh_is_the_html_with_it(monkeypatch, layout):
    fig, anim = _animation(layout)
    fast = display.animation_html(anim, ALT)
    plt.close(fig)

    # The reference: matplotlib's own refresh after each frame (a full render on Agg).
    fig, anim = _animation(layout)
    monkeypatch.setattr(display, "_no_refresh", lambda *a, **k: type(fig.canvas).draw_idle(fig.canvas))
    slow = display.animation_html(anim, ALT)
    plt.close(fig)
    assert fast == slow
    assert fast.count("data:image/png;base64") == 6


def test_animation_html_gives_the_canvas_back_even_when_a_frame_fails():
    fig, ax = plt.subplots(figsize=(2.0, 1.5))
    (line,) = ax.plot([0, 1], [0, 0])

    def frame(i):
        if i == 2:
            raise RuntimeError("frame 2 is broken")
        line.set_ydata([0, i])

    with pytest.raises(RuntimeError, match="frame 2"):
        display.animation_html(FuncAnimation(fig, frame, frames=4), ALT)
    assert "draw_idle" not in vars(fig.canvas)          # the class's own method again
    plt.close(fig)
