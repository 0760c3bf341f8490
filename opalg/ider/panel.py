"""The interactive panel of the Ider notebook: pure functions plus a thin ipywidgets layer.

:func:`evaluate` and :func:`parse_directions` are pure, and so are the pictures
(:func:`~opalg.ider.panel_plots.draw`, :func:`~opalg.ider.panel_plots.draw_arm`, in
:mod:`opalg.ider.panel_plots`); pytest tests them.  The widget callbacks only read the
controls, call :func:`evaluate`, and show the verdict, the figure of ``draw`` and the
frames of the arm.  Bad text in the custom entry shows a message and keeps the last good
state.  ``notebooks/panels/ider_panel.ipynb`` is the panel alone, for Voilà (``make panel``).
"""

from __future__ import annotations

import base64
import functools
import html
import numbers
import re
from dataclasses import dataclass

import numpy as np

from opalg.ider import PRESETS, _real, simulate
from opalg.algorithms.constrained import InfeasibleDirections
from opalg.errors import StateError
from opalg.ider.panel_plots import (  # noqa: F401  (the panel's pictures, re-exported)
    ArmFrames, draw, draw_arm)
from opalg.ider.panel_plots import _frame_canvas

CUSTOM = "custom A"
CHOICES = list(PRESETS) + [CUSTOM]


def parse_directions(text: str) -> np.ndarray:
    """Read a 2 x 3 control-direction matrix from text.

    Accepted forms: ``"0 1 0; 0 0 1"``, ``"0,1,0; 0,0,1"`` and ``"[[0, 1, 0], [0, 0, 1]]"``.

    Raises
    ------
    StateError
        (a ValueError) naming what is wrong (not numbers, an empty field, wrong shape, non-finite).

    Examples
    --------
    >>> from opalg.ider.panel import parse_directions
    >>> parse_directions("0 1 0; 0 0 1")
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    if not isinstance(text, str):
        raise StateError(f"A must be given as text, got {text!r:.60}")
    s = text.strip()
    if s.startswith("["):
        s = s.replace("],", ";").replace("[", "").replace("]", "")
    rows = [r for r in s.split(";") if r.strip()]
    fields = [re.split(r"\s*,\s*|\s+", r.strip()) for r in rows]
    for i, row in enumerate(fields):
        if "" in row:     # "1,,2": a missing number, not one separator
            raise StateError(f"A: row {i + 1} has an empty field between separators (got {text!r:.80})")
    try:
        A = np.array([[float(x) for x in row] for row in fields])
    except ValueError:
        raise StateError(f"A must be numbers, rows separated by ';' (got {text!r:.80})") from None
    if A.shape != (2, 3):
        raise StateError(f"A must have 2 rows of 3 numbers (got shape {A.shape} from {text!r:.80})")
    if not np.all(np.isfinite(A)):
        raise StateError(f"A has non-finite entries (got {text!r:.80})")
    return A


@dataclass
class PanelOutput:
    """What the panel shows for one choice.

    ``result``: the run (None when the choice is singular at t = 0); ``A``: the directions
    (None for the conventional model); ``verdict`` and ``feasible``; ``ghost``: the
    conventional run with the same settings, drawn faint behind the chosen one (None for
    the conventional choice itself, or when not asked for).
    """

    result: object
    A: object
    verdict: str
    feasible: bool
    ghost: object = None


def _run(A, t_end: float, inertia: str, gravity: float, n_points: int, sim=None):
    sim = simulate if sim is None else sim
    t_eval = np.linspace(0.0, t_end, int(n_points))
    # rtol 1e-9 keeps one run near 0.1–0.3 s (benchmarks/bench_ider.py); the tip
    # error stays below 1e-9 m.  The verification runs use simulate's tighter default.
    # refine=False for the same budget: locating the singularity beyond a stop costs ~1 s.
    return sim(A, t_span=(0.0, t_end), inertia=inertia, gravity=gravity, t_eval=t_eval, rtol=1e-9,
               atol=1e-9, refine=False)


@functools.lru_cache(maxsize=16)
def _cached_run(sim, A: tuple | None, t_end: float, inertia: str, gravity: float, n_points: int):
    """A run of the panel, cached: choosing a preset again, or typing its A, reruns nothing.

    ``A`` as a tuple of rows (the same directions, whether a preset's list or parsed text,
    are the same run); the simulating function is part of the key, as for the ghost.
    """
    return _run(None if A is None else [list(r) for r in A], t_end, inertia, gravity, n_points, sim)


@functools.lru_cache(maxsize=16)
def _conventional(sim, t_end: float, inertia: str, gravity: float, n_points: int):
    """The ghost run, cached: it changes only with the settings, not with the choice of A.

    The simulating function is part of the key, so a test that patches ``simulate`` never
    gets, nor leaves behind, a ghost of other settings.
    """
    return _run(None, t_end, inertia, gravity, n_points, sim)


def evaluate(preset: str, custom: str = "", inertia: str = "joint", gravity: float = 0.0,
             t_end: float = 1.0, n_points: int = 101, ghost: bool = True) -> PanelOutput:
    """Simulate one choice of the panel and phrase the verdict (pure function).

    Every run becomes a verdict: "feasible: …" (with the smallest feasibility measure κ
    and the peak moments), "infeasible: …" (a singular choice, or the path leaving the
    arm's reach, with the stop time) or "failed: …" (the integrator gave up, with the
    time and the likely reason).  With ``ghost`` the conventional run (Z = B) with the same
    settings comes along, for the picture (cached: it does not depend on the choice).

    Raises
    ------
    ValueError
        For an unknown preset, unreadable custom text or a bad setting (the panel
        keeps its last state); numbers given as strings are refused, not parsed.

    Examples
    --------
    >>> from opalg.ider.panel import evaluate
    >>> out = evaluate("no motor at joint 3", t_end=0.5)
    >>> out.feasible, out.verdict.startswith("infeasible"), out.ghost.status
    (False, True, 'completed')
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
    if not isinstance(ghost, (bool, np.bool_)):
        raise StateError(f"ghost must be True or False, got {ghost!r}")
    try:
        if isinstance(inertia, str) and isinstance(gravity, (int, float)) and not isinstance(gravity, bool):
            key = None if A is None else tuple(map(tuple, np.asarray(A, dtype=float).tolist()))
            r = _cached_run(simulate, key, t_end, inertia, gravity, int(n_points))
        else:   # simulate names the bad setting (nothing to cache)
            r = _run(A, t_end, inertia, gravity, n_points)
    except InfeasibleDirections as e:  # rank-deficient A, or singular already at t = 0
        return PanelOutput(None, A, f"infeasible: {e}", False)
    g = _conventional(simulate, t_end, inertia, float(gravity), int(n_points)) if ghost and A is not None else None
    if r.ok:
        peak = np.abs(r.tau).max(axis=0)
        verdict = (f"feasible: the tip follows the path for {t_end:g} s; smallest κ = "
                   f"{r.conditioning.min():.3g}; peak moments "
                   + ", ".join(f"|T{i + 1}| = {p:.2f}" for i, p in enumerate(peak)) + " N·m")
        return PanelOutput(r, A, verdict, True, g)
    return PanelOutput(r, A, f"{'failed' if r.status == 'failed' else 'infeasible'}: {r.message}", False, g)


#: The controls' initial values; :meth:`IderPanel.reset` returns to them.
DEFAULTS = {"preset": "no motor at joint 1", "custom": "0 1 0; 0 0 1", "inertia": "joint",
            "gravity": 0.0, "duration": 1.0}
#: Resolution of the PNGs the panel shows (the suite's floor is 110 dpi; 110 keeps the plots and
#: the arm side by side in 1280 px).
PANEL_DPI = 110
#: Size (in) of the panel's figure without the arm, and the most frames the Play widget steps
#: through (each frame is a kernel round trip and a PNG: ~0.05–0.15 s).
PANEL_FIGSIZE = (8.6, 3.4)
MAX_FRAMES = 40
ARM_FIGSIZE = (3.3, 3.4)
#: Margins of that figure (fractions), room for the titles above and the legends below the axes.
PANEL_MARGINS = dict(left=0.075, right=0.975, top=0.9, bottom=0.34, wspace=0.42)


def _png(fig) -> bytes:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PANEL_DPI, metadata={"Software": None})
    return buf.getvalue()


def _alt(out: PanelOutput, choice: str) -> str:
    return (f"Ider's arm with {choice}: feasibility κ(t) against the stop threshold, joint moments "
            f"T(t) and displacements Δθ(t), the conventional solution faint behind; {out.verdict}")


class IderPanel:
    """ipywidgets controls for choosing A; ``panel.widget`` is the box to display.

    Row 1: the choice of A, the custom-A text, the Apply button, the inertia reading.  Enter in
    the text box (:meth:`enter`) or the Apply button chooses "custom A" and runs the text,
    whatever was chosen before; typing alone runs nothing.  Row 2: gravity and duration sliders (``continuous_update=False``: a drag
    runs one simulation, at the release), and a ``Play`` jslinked to a sample slider that
    animate the arm.  Then the verdict, and the plots: κ(t), moments and displacements (an
    ``<img>`` in an ``HTML`` widget) beside the arm (an ``Image``).  Each control carries a stable CSS class for browser tests:
    ``w-preset``, ``w-custom``, ``w-apply``, ``w-inertia``, ``w-gravity``, ``w-duration``,
    ``w-verdict``, ``w-plot`` (plus ``w-axes-<gid>`` for each axis of the figure shown, e.g.
    ``w-axes-kappa``), ``w-arm``, ``w-play``, ``w-frame``.

    ``runs`` counts the simulations (a repeated choice is not rerun); ``last`` is the last
    valid :class:`PanelOutput`, ``png`` the figure on show.  Every call of :func:`build_panel`
    makes a new, independent panel.
    """

    def __init__(self):
        import ipywidgets as w

        d = DEFAULTS
        row = dict(width="auto")
        narrow = {"description_width": "initial"}
        self.preset = w.Dropdown(options=CHOICES, value=d["preset"], description="A", style=narrow,
                                 layout=w.Layout(width="220px"))
        # continuous_update: the text is synced as it is typed (it runs only on Enter or Apply), so
        # the front end's "submit" message on Enter never arrives before the text it submits.
        self.custom = w.Text(value=d["custom"], description="custom A", continuous_update=True, style=narrow,
                             placeholder="two rows of 3: 0 1 0; 0 0 1 — Enter runs it",
                             tooltip="two rows of three numbers, rows separated by ';' — Enter chooses "
                                     "custom A and runs it",
                             layout=w.Layout(width="340px"))
        self.apply = w.Button(description="Apply", tooltip="run the custom A (same as Enter)",
                              icon="play", layout=w.Layout(width="90px"))
        self.inertia = w.Dropdown(options=["joint", "com"], value=d["inertia"], description="inertia",
                                  style=narrow, layout=w.Layout(width="150px"))
        self.gravity = w.FloatSlider(value=d["gravity"], min=0.0, max=9.81, step=0.01, description="g (m/s²)",
                                     continuous_update=False, layout=w.Layout(width="320px"))
        self.duration = w.FloatSlider(value=d["duration"], min=0.1, max=1.0, step=0.05,
                                      description="t_end (s)", continuous_update=False,
                                      layout=w.Layout(width="320px"))
        self.verdict = w.HTML(value="")
        self.plot = w.HTML(value="")
        self.arm = w.Image(format="png", layout=w.Layout(**row))
        self.play = w.Play(value=0, min=0, max=1, interval=200, description="play the run")
        self.frame = w.IntSlider(value=0, min=0, max=1, description="sample", continuous_update=False,
                                 layout=w.Layout(width="260px"))
        w.jslink((self.play, "value"), (self.frame, "value"))
        for ctl, css in ((self.preset, "w-preset"), (self.custom, "w-custom"), (self.apply, "w-apply"),
                         (self.inertia, "w-inertia"), (self.gravity, "w-gravity"),
                         (self.duration, "w-duration"), (self.verdict, "w-verdict"), (self.plot, "w-plot"),
                         (self.arm, "w-arm"), (self.play, "w-play"), (self.frame, "w-frame")):
            ctl.add_class(css)
        self.last: PanelOutput | None = None
        self.png: bytes | None = None  # the PNG shown in self.plot
        self.runs = 0
        self._shown = None      # the key of the choice on show (None: rerun on the next update)
        self._frames = None     # ArmFrames of the run on show
        self._hold = False      # reset() sets several controls, then updates once
        for ctl in (self.preset, self.inertia, self.gravity, self.duration):
            ctl.observe(self._changed, names="value")
        self.custom.on_msg(self._custom_message)      # Enter: the front end sends {"event": "submit"}
        self.apply.on_click(self._apply)
        self.frame.observe(self._frame_changed, names="value")
        self.widget = w.VBox([
            w.HBox([self.preset, self.custom, self.apply, self.inertia]),
            w.HBox([self.gravity, self.duration, self.play, self.frame]),
            self.verdict,
            w.HBox([self.plot, self.arm]),
        ])
        self.update()

    def _changed(self, _change) -> None:
        if not self._hold:
            self.update()

    def _repr_mimebundle_(self, **kwargs) -> dict:
        """The live widget where a widget manager runs (JupyterLab, Voilà); elsewhere (a static
        page, nbconvert) a still of the figure on show with its alt text, and a one-line text."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        note = "a still of the panel: open the notebook in JupyterLab, or run `make panel`, to use it"
        if self.png is not None and self.last is not None:
            alt = html.escape(_alt(self.last, self.preset.value), quote=True)
            bundle["text/html"] = (f'<figure><img src="data:image/png;base64,{base64.b64encode(self.png).decode()}" '
                                   f'alt="{alt}" style="max-width: 100%; height: auto" />'
                                   f"<figcaption>{html.escape(note)}</figcaption></figure>")
        bundle["text/plain"] = f"Ider panel ({note})"
        return bundle

    def _custom_message(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("event") == "submit":
            self.enter()

    def enter(self) -> PanelOutput | None:
        """What Enter in the custom-A box does: choose "custom A" and run its text (as Apply)."""
        self._apply()
        return self.last

    def _apply(self, _button=None) -> None:
        """The Apply button: choose "custom A" and run the text in the box (as Enter does)."""
        if self.preset.value != CUSTOM:
            self.preset.value = CUSTOM  # its observer runs the update
        else:
            self.update()

    def _key(self):
        custom = self.custom.value if self.preset.value == CUSTOM else None
        return (self.preset.value, custom, self.inertia.value, self.gravity.value, self.duration.value)

    def update(self) -> PanelOutput | None:
        """Re-evaluate from the controls; on bad input show the message, keep the last state.

        A choice already on show is not rerun (the Apply button after Enter costs nothing).
        """
        key = self._key()
        if key == self._shown:
            return self.last
        try:
            out = evaluate(self.preset.value, self.custom.value, self.inertia.value,
                           self.gravity.value, self.duration.value)
        except ValueError as e:
            self.verdict.value = f"<b>input error:</b> {html.escape(str(e))} (showing the last valid choice)"
            self._shown = None
            return None
        self.runs += 1
        self.last, self._shown = out, key
        self.verdict.value = html.escape(out.verdict)
        self._show_plot(out)
        self._show_arm(out)
        return out

    def _show_plot(self, out: PanelOutput) -> None:
        from matplotlib.figure import Figure

        # A Figure outside pyplot: nothing for the inline backend to show twice, nothing to leak.
        # Fixed margins instead of the constrained layout, which draws the figure ~3 times over.
        fig = Figure(figsize=PANEL_FIGSIZE)
        _frame_canvas()(fig)   # off-screen Agg, its renderer (and text caches) shared across updates
        fig.subplots_adjust(**PANEL_MARGINS)
        fig = draw(out, fig=fig, arm=False)
        for css in [c for c in self.plot._dom_classes if c.startswith("w-axes-")]:
            self.plot.remove_class(css)
        for ax in fig.axes:
            self.plot.add_class(f"w-axes-{ax.get_gid()}")
        self.png = _png(fig)
        # An <img> with a data URL in an HTML widget, not display() into an Output widget: the
        # PNG (and its alt text) is widget state, so the cell that shows the panel has no
        # output but the widget's, wherever it runs (Voilà, JupyterLab, nbval, the executor).
        alt = html.escape(_alt(out, self.preset.value), quote=True)
        self.plot.value = (f'<img src="data:image/png;base64,{base64.b64encode(self.png).decode()}" '
                           f'alt="{alt}" title="{alt}" style="max-width: 100%; height: auto" />')

    def _show_arm(self, out: PanelOutput) -> None:
        r = out.result
        if r is None or not len(r.t):
            from matplotlib.figure import Figure

            fig = Figure(figsize=ARM_FIGSIZE)
            _frame_canvas()(fig)
            draw_arm(r, ax=fig.add_subplot())
            self._frames = None
            self.arm.value = _png(fig)
            return
        self._frames = ArmFrames(r, ghost=out.ghost, dpi=PANEL_DPI, figsize=ARM_FIGSIZE)
        n = len(r.t)
        self.play.step = max(1, -(-(n - 1) // MAX_FRAMES))
        # Show the end of the run (where it stops); Play restarts from sample 0.
        self.play.max = self.frame.max = n - 1
        if self.frame.value == n - 1:
            self._draw_frame(n - 1)
        else:
            self.frame.value = n - 1  # its observer draws the frame
        self.play.value = n - 1

    def _frame_changed(self, change) -> None:
        if self._frames is not None:
            self._draw_frame(int(change["new"]))

    def _draw_frame(self, i: int) -> None:
        if self._frames is not None and 0 <= i < self._frames.n:
            self.arm.value = self._frames.png(i)

    def reset(self) -> PanelOutput | None:
        """Put every control back to its initial value (:data:`DEFAULTS`) and show that run."""
        self._hold = True
        try:
            for name, value in DEFAULTS.items():
                getattr(self, name).value = value
        finally:
            self._hold = False
        return self.update()


def build_panel() -> IderPanel:
    """A new, independent panel (display it: the last line of a cell, ``panel``).

    Examples
    --------
    >>> from opalg.ider.panel import build_panel
    >>> a, b = build_panel(), build_panel()
    >>> a is not b and a.preset is not b.preset, a.last.feasible, a.runs
    (True, True, 1)
    """
    return IderPanel()
