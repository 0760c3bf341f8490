"""How the notebooks show figures and animations: PNG at a fixed dpi, with alt text, deterministic.

Every image in the suite goes through :func:`show` (a still figure) or :func:`animate` (a
matplotlib animation), never through ``plt.show()``:

* the PNG is rendered at :data:`DPI` (≥ 110) with a tight bounding box, so figures are legible on
  the static site and in JupyterLab alike, whatever the inline backend's default;
* the alt text travels in the output's metadata (``{"image/png": {"alt": ...}}``), which the static
  site writes into ``<img alt=...>`` and ``tests/test_notebook_standard.py`` requires;
* an animation becomes self-contained JavaScript HTML (frames embedded) whose element ids are a
  hash of its content instead of matplotlib's random ``uuid4``, so re-executing a notebook gives
  the same bytes (``tests/test_notebooks.py``).

IPython is imported only when something is displayed.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
from typing import Any

#: Resolution of every PNG figure (pixels per inch): the issue's floor is 110.
DPI = 120
#: Resolution of animation frames: a little lower, since a notebook holds dozens of them.
ANIMATION_DPI = 110

_UUID = re.compile(r"[0-9a-f]{32}")


def _require_alt(alt: Any, what: str) -> str:
    if not isinstance(alt, str) or len(alt.strip()) < 10:
        raise ValueError(f"{what}: alt must be a sentence describing the picture "
                         f"(at least 10 characters), got {alt!r}")
    return alt.strip()


def png_bytes(fig, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes at ``dpi`` with a tight bounding box.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 1)); _ = ax.plot([0, 1])
    >>> png_bytes(fig)[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    >>> plt.close(fig)
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def png_dpi(data: bytes) -> float | None:
    """Horizontal resolution of a PNG from its pHYs chunk (pixels per metre -> per inch).

    None when the PNG carries no pHYs chunk or gives no unit; the suite's tests use it to check
    the 110-dpi floor of every figure.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(1, 1))
    >>> round(png_dpi(png_bytes(fig, dpi=120)))
    120
    >>> plt.close(fig)
    """
    import struct

    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("png_dpi: the data is not a PNG")
    pos = 8
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        if kind == b"pHYs":
            ppm_x, _, unit = struct.unpack(">IIB", data[pos + 8:pos + 17])
            return ppm_x * 0.0254 if unit == 1 else None
        pos += 12 + length
    return None


def show(fig, alt: str, dpi: int = DPI) -> None:
    """Display ``fig`` as a PNG at ``dpi`` with alt text, then close it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    alt : str
        What the picture shows, for a reader who cannot see it (a sentence or two: the axes, the
        curves, what to notice).  Written into ``<img alt>`` on the static site.
    dpi : int
        Resolution; the suite's floor is 110.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 1)); _ = ax.plot([0, 1])
    >>> show(fig, alt="A straight line from 0 to 1.")  # doctest: +ELLIPSIS
    <IPython.core.display.Image object>
    """
    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    alt = _require_alt(alt, "show")
    if dpi < 110:
        raise ValueError(f"show: dpi must be at least 110, got {dpi}")
    data = png_bytes(fig, dpi)
    plt.close(fig)
    display(Image(data=data, format="png", metadata={"alt": alt}))


def animation_html(anim, alt: str, fps: float = 12.0) -> str:
    """A matplotlib animation as deterministic, self-contained JavaScript HTML.

    The frames are embedded (PNG at :data:`ANIMATION_DPI`); the element ids matplotlib draws
    from ``uuid4`` are replaced by a hash of the content, and the player sits in a
    ``<figure role="img" aria-label=alt>`` with the alt text as its caption.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from matplotlib.animation import FuncAnimation
    >>> fig, ax = plt.subplots(figsize=(1.5, 1)); (line,) = ax.plot([0, 1], [0, 0])
    >>> make = lambda: FuncAnimation(fig, lambda i: line.set_ydata([0, i]), frames=3)
    >>> a, b = animation_html(make(), "A line tilting up."), animation_html(make(), "A line tilting up.")
    >>> a == b and 'aria-label="A line tilting up."' in a
    True
    >>> plt.close(fig)
    """
    import matplotlib as mpl

    alt = _require_alt(alt, "animation_html")
    canvas = anim._fig.canvas
    # matplotlib asks the canvas for a screen refresh after drawing each frame; off screen
    # (Agg, inline) that is a full render into a buffer which the frame's savefig then
    # redraws from scratch: half the cost of an animation, for no pixel.
    canvas.draw_idle = _no_refresh
    try:
        with mpl.rc_context({"savefig.dpi": ANIMATION_DPI, "animation.embed_limit": 40.0}):
            raw = anim.to_jshtml(fps=fps, embed_frames=True, default_mode="once")
    finally:
        del canvas.draw_idle
    ids = list(dict.fromkeys(_UUID.findall(raw)))
    digest = hashlib.sha1(_UUID.sub("", raw).encode()).hexdigest()
    for i, old in enumerate(ids):
        raw = raw.replace(old, f"anim{digest[:12]}{i}")
    label = html.escape(alt, quote=True)
    return (f'<figure class="opalg-animation" role="img" aria-label="{label}">\n{raw}\n'
            f'<figcaption>{html.escape(alt)}</figcaption>\n</figure>')


def _no_refresh(*args, **kwargs) -> None:
    """A canvas's ``draw_idle`` while an animation is rendered to HTML (see :func:`animation_html`)."""


def animate(anim, alt: str, fps: float = 12.0) -> None:
    """Display a matplotlib animation as a JavaScript player (see :func:`animation_html`).

    The figure is closed so that the inline backend does not also show its last frame.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from matplotlib.animation import FuncAnimation
    >>> fig, ax = plt.subplots(figsize=(1.5, 1)); (line,) = ax.plot([0, 1], [0, 0])
    >>> animate(FuncAnimation(fig, lambda i: line.set_ydata([0, i]), frames=2), "A line tilting.")
    <IPython.core.display.HTML object>
    """
    import matplotlib.pyplot as plt
    from IPython.display import HTML, display

    fig = anim._fig
    text = animation_html(anim, alt, fps)
    plt.close(fig)
    display(HTML(text))
