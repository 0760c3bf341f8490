"""The interactive panel of the Ider notebook: pure functions plus a thin ipywidgets layer.

:func:`evaluate` and :func:`parse_directions` are pure (tested by pytest); the
widget callbacks only read the controls, call :func:`evaluate`, and show the
verdict and the figure of :func:`draw`.  Bad text in the custom entry shows a
message and keeps the last good state.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass

import numpy as np

from . import PRESETS, THETA0, _real, joint_points, simulate
from ..constrained import InfeasibleDirections
from ..errors import StateError

CUSTOM = "custom A"
CHOICES = list(PRESETS) + [CUSTOM]


def parse_directions(text: str) -> np.ndarray:
    """Read a 2 x 3 control-direction matrix from text.

    Accepted forms: ``"0 1 0; 0 0 1"``, ``"0,1,0; 0,0,1"`` and ``"[[0, 1, 0], [0, 0, 1]]"``.

    Raises
    ------
    ValueError
        Naming what is wrong (not numbers, wrong shape, non-finite).

    Examples
    --------
    >>> from opalg.ider.panel import parse_directions
    >>> parse_directions("0 1 0; 0 0 1")
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    if not isinstance(text, str):
        raise ValueError(f"A must be given as text, got {text!r}")
    s = text.strip()
    if s.startswith("["):
        s = s.replace("],", ";").replace("[", "").replace("]", "")
    rows = [r for r in s.split(";") if r.strip()]
    try:
        A = np.array([[float(x) for x in re.split(r"[,\s]+", r.strip())] for r in rows])
    except ValueError:
        raise ValueError(f"A must be numbers, rows separated by ';' (got {text!r})") from None
    if A.shape != (2, 3):
        raise ValueError(f"A must have 2 rows of 3 numbers (got shape {A.shape} from {text!r})")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"A has non-finite entries (got {text!r})")
    return A


@dataclass
class PanelOutput:
    """What the panel shows for one choice: the run (or None), the verdict text and status."""

    result: object
    A: object
    verdict: str
    feasible: bool


def evaluate(preset: str, custom: str = "", inertia: str = "joint", gravity: float = 0.0,
             t_end: float = 1.0, n_points: int = 101) -> PanelOutput:
    """Simulate one choice of the panel and phrase the verdict (pure function).

    Every run becomes a verdict: "feasible: …", "infeasible: …" (a singular choice,
    or the path leaving the arm's reach, with the stop time) or "failed: …" (the
    integrator gave up, with the time and the likely reason).

    Raises
    ------
    ValueError
        For an unknown preset, unreadable custom text or a bad setting (the panel
        keeps its last state); numbers given as strings are refused, not parsed.

    Examples
    --------
    >>> from opalg.ider.panel import evaluate
    >>> out = evaluate("no motor at joint 3", t_end=0.5)
    >>> out.feasible, out.verdict.startswith("infeasible")
    (False, True)
    """
    if not isinstance(preset, str):
        raise ValueError(f"unknown choice {preset!r}; choose one of {CHOICES}")
    if preset == CUSTOM:
        A = parse_directions(custom)
    elif preset in PRESETS:
        A = PRESETS[preset]
    else:
        raise ValueError(f"unknown choice {preset!r}; choose one of {CHOICES}")
    t_end = _real(t_end, "t_end", "a positive number of seconds", lambda v: v > 0)
    if isinstance(n_points, (bool, np.bool_)) or not isinstance(n_points, numbers.Integral) or n_points < 2:
        raise StateError(f"n_points must be an integer >= 2, got {n_points!r}")
    t_eval = np.linspace(0.0, t_end, int(n_points))
    try:
        # rtol 1e-9 keeps one run near 0.1–0.3 s (benchmarks/bench_ider.py); the tip
        # error stays below 1e-9 m.  The verification runs use simulate's tighter default.
        # refine=False for the same budget: locating the singularity beyond a stop costs ~1 s.
        r = simulate(A, t_end=t_end, inertia=inertia, gravity=gravity, t_eval=t_eval, rtol=1e-9,
                     atol=1e-9, refine=False)
    except InfeasibleDirections as e:  # rank-deficient A, or singular already at t = 0
        return PanelOutput(None, A, f"infeasible: {e}", False)
    if r.ok:
        peak = np.abs(r.tau).max(axis=0)
        verdict = (f"feasible: the tip follows the path for {t_end:g} s; peak moments "
                   + ", ".join(f"M{i + 1} = {p:.2f}" for i, p in enumerate(peak)) + " N·m")
        return PanelOutput(r, A, verdict, True)
    return PanelOutput(r, A, f"{'failed' if r.status == 'failed' else 'infeasible'}: {r.message}", False)


def draw(out: PanelOutput, fig=None):
    """Joint angles, joint moments and the final configuration of one panel output."""
    import matplotlib.pyplot as plt

    if fig is None:
        fig = plt.figure(figsize=(9.0, 3.0))
    axes = fig.subplots(1, 3)
    r = out.result
    if r is not None and len(r.t):
        for i in range(3):
            axes[0].plot(r.t, np.rad2deg(r.q[:, i] - r.q[0, i]), color=f"C{i}", label=f"Δθ{i + 1}")
            axes[1].plot(r.t, r.tau[:, i], color=f"C{i}", label=f"M{i + 1}")
        P0, P1 = joint_points(THETA0), joint_points(r.q[-1])
        axes[2].plot(P0[:, 0], P0[:, 1], "k-o", ms=3, label="initial")
        axes[2].plot(P1[:, 0], P1[:, 1], "C3-o", ms=3, label=f"t = {r.t[-1]:.2f} s")
    axes[0].set(xlabel="t (s)", ylabel="deg", title="joint displacements")
    axes[1].set(xlabel="t (s)", ylabel="N·m", title="joint moments")
    axes[2].set(xlabel="x (m)", ylabel="y (m)", title="configuration")
    axes[2].set_aspect("equal")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


class IderPanel:
    """ipywidgets controls for choosing A; ``panel.widget`` is the box to display.

    Each control carries a stable CSS class (``w-preset``, ``w-custom``,
    ``w-inertia``, ``w-gravity``, ``w-duration``, ``w-verdict``, ``w-plot``) for
    browser tests.
    """

    def __init__(self):
        import ipywidgets as w

        self.preset = w.Dropdown(options=CHOICES, value="no motor at joint 1", description="A")
        self.custom = w.Text(value="0 1 0; 0 0 1", description="custom A", continuous_update=False)
        self.inertia = w.Dropdown(options=["joint", "com"], value="joint", description="inertia")
        self.gravity = w.FloatSlider(value=0.0, min=0.0, max=9.81, step=0.01, description="g (m/s²)")
        self.duration = w.FloatSlider(value=1.0, min=0.1, max=1.0, step=0.05, description="t_end (s)")
        self.verdict = w.HTML(value="")
        self.plot = w.Output()
        for ctl, css in ((self.preset, "w-preset"), (self.custom, "w-custom"), (self.inertia, "w-inertia"),
                         (self.gravity, "w-gravity"), (self.duration, "w-duration"),
                         (self.verdict, "w-verdict"), (self.plot, "w-plot")):
            ctl.add_class(css)
        self.last = None
        for ctl in (self.preset, self.custom, self.inertia, self.gravity, self.duration):
            ctl.observe(self._changed, names="value")
        self.widget = w.VBox([w.HBox([self.preset, self.custom]), w.HBox([self.inertia, self.gravity]),
                              self.duration, self.verdict, self.plot])
        self.update()

    def _changed(self, _change) -> None:
        self.update()

    def update(self) -> PanelOutput | None:
        """Re-evaluate from the controls; on bad input show the message, keep the last state."""
        import matplotlib.pyplot as plt

        try:
            out = evaluate(self.preset.value, self.custom.value, self.inertia.value,
                           self.gravity.value, self.duration.value)
        except ValueError as e:
            self.verdict.value = f"<b>input error:</b> {e} (showing the last valid choice)"
            return None
        self.last = out
        self.verdict.value = out.verdict
        from IPython.display import display

        with self.plot:
            self.plot.clear_output(wait=True)
            fig = draw(out)
            display(fig)
            plt.close(fig)
        return out


def build_panel() -> IderPanel:
    """Create the panel (call in a notebook and display ``panel.widget``)."""
    return IderPanel()
