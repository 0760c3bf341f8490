r"""The pictures of the Ider panel: pure functions of a run, returning matplotlib Figures.

:func:`draw` shows *why* a choice of control-force directions works or fails: the
feasibility measures κ(t) and ρ(t) against the stop threshold, the joint moments T(t) with
the axis clipped at the stop (the moments grow like 1/κ there) and the conventional
solution (Z = B) as a faint ghost behind them, the joint displacements, and the arm with its
tip path.  :func:`draw_arm` draws the arm at one sample (the panel's animation frame).

Every axis carries a ``gid`` (``"kappa"``, ``"moments"``, ``"displacements"``, ``"arm"``) and
the arm's links are the line with gid ``"links"``, so tests can find what was drawn.
"""

from __future__ import annotations

import numpy as np

from opalg.ider.feasibility import display_limits, kappa_series
from opalg.ider.geometry import THETA0, joint_points, path

__all__ = ["draw", "draw_arm", "ArmFrames", "GHOST_LABEL"]

#: Legend text of the ghost curves: Ider's conventional model, force directions Z = B (the tip).
GHOST_LABEL = "conventional ($Z = B$)"
_GHOST = dict(color="0.45", alpha=0.35, lw=2.6, zorder=1)
_STOP = dict(color="C3", ls="--", lw=1.0, zorder=3)
_LEGEND = dict(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=7, frameon=False)


def _t_end(result) -> float:
    """The end of the run's t_span (its last sample if it carries no settings)."""
    settings = getattr(result, "extras", {}).get("settings") or {}
    return float(settings["t_span"][1]) if "t_span" in settings else float(result.t[-1])


def _stop_line(ax, t_stop, label=None) -> None:
    if t_stop is not None:
        ax.axvline(t_stop, label=label, **_STOP)


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=8, wrap=True)


def _plot_kappa(ax, r) -> None:
    ax.set_gid("kappa")
    ax.set(xlabel="$t$ (s)", ylabel=r"$\kappa$, $\rho$ (dimensionless)", yscale="log",
           title=r"why: feasibility $\kappa(t)$")
    ax.title.set_fontsize(10)
    if r is None or not len(r.t):
        _empty(ax, "no run: singular at $t = 0$")
        return
    s = kappa_series(r)
    ax.plot(s.t, s.kappa, "k-", lw=1.6, label=r"$\kappa$: $Z$ vs $B$ in the $\mathcal{M}^{-1}$ metric")
    ax.plot(s.t, s.reach, "-.", color="C4", lw=1.2, label=r"$\rho = \sigma_{min}/\sigma_{max}(B)$ (reach)")
    ax.axhline(s.stop_tol, color="C3", ls=":", lw=1.2, label=rf"stop threshold $\kappa = {s.stop_tol:g}$")
    _stop_line(ax, s.t_stop, label=None if s.t_stop is None else f"stop, $t = {s.t_stop:.3f}$ s")
    ax.set_ylim(s.stop_tol / 3, 1.6)
    # Decades only, no minor ticks: each log tick label is mathtext, the costliest part to draw.
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.yaxis.set_major_locator(FixedLocator(10.0 ** np.arange(np.floor(np.log10(s.stop_tol / 3)), 1)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlim(0.0, _t_end(r))


def _plot_series(ax, r, ghost, values, ylabel: str, title: str, symbol: str, gid: str) -> None:
    """Three joint curves of ``values(run)`` (and the ghost's), y clipped at a stop."""
    ax.set_gid(gid)
    ax.set(xlabel="$t$ (s)", ylabel=ylabel)
    ax.set_title(title, fontsize=10)
    if r is None or not len(r.t):
        _empty(ax, "no run: singular at $t = 0$")
        return
    y = values(r)
    t_stop = None if r.ok else r.t_stop
    if ghost is not None and len(ghost.t):
        gy = values(ghost)
        for i in range(3):
            ax.plot(ghost.t, gy[:, i], label=GHOST_LABEL if i == 0 else None, **_GHOST)
    for i in range(3):
        ax.plot(r.t, y[:, i], color=f"C{i}", lw=1.4, zorder=2, label=f"${symbol}_{i + 1}$")
    _stop_line(ax, t_stop)
    lo, hi = display_limits(r.t, y, t_stop)
    if ghost is not None and len(ghost.t):  # the ghost completed: all of it fits
        glo, ghi = display_limits(ghost.t, values(ghost))
        lo, hi = min(lo, glo), max(hi, ghi)
    ax.set_ylim(lo, hi)
    ax.set_xlim(0.0, _t_end(r))
    out = np.abs(y).max(axis=0)
    cut = [i for i in range(3) if y[:, i].max() > hi or y[:, i].min() < lo]
    if cut:  # say what the frame hides (the blow-up as κ → 0), inside the axes: a second title
        # line would rise above the figure's top margin and be cut off
        ax.text(0.02, 0.97, "clipped: peak " + ", ".join(f"$|{symbol}_{i + 1}| = {out[i]:.0f}$" for i in cut),
                transform=ax.transAxes, ha="left", va="top", fontsize=8, gid="clip-note", zorder=3,
                bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="0.7", alpha=0.9))


def _moments(r):
    return r.tau


def _displacements(r):
    return np.rad2deg(r.q - r.q[0])


def _arm_state(result, i: int, ghost):
    """What changes from frame to frame: links, tip trace, ghost links (or None), title."""
    G = None
    if ghost is not None and len(ghost.t):
        G = joint_points(ghost.q[int(np.argmin(np.abs(ghost.t - result.t[i])))])
    title = rf"arm at $t = {result.t[i]:.2f}$ s (sample {i + 1}/{len(result.t)})"
    return joint_points(result.q[i]), result.tip[: i + 1], G, title


def draw_arm(result, i: int = -1, ax=None, ghost=None):
    r"""The arm at sample ``i`` of a run, with the tip path and the time (an animation frame).

    Draws the initial configuration θ0 (faint), the desired tip path of eq. 20 over the whole
    run (dotted), the tip's trace up to sample i, the links at θ(t_i) (the line with gid
    ``"links"``: the points :func:`opalg.ider.joint_points` of θ(t_i)) and, given ``ghost``
    (the conventional run), its arm at the same time, faint.  The axis limits cover the
    whole run, so frames do not jump.

    Parameters
    ----------
    result : opalg.simulate.Trajectory or None
        None (a choice singular at t = 0) or a run without samples draws a "no run" placeholder.
    i : int
        Sample index (negative counts from the end).
    ax : matplotlib Axes, optional
        Draw into it; default a new 3.6 x 3.4 in Figure (not registered with pyplot).
    ghost : opalg.simulate.Trajectory, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import ider
    >>> from opalg.ider.panel_plots import draw_arm
    >>> r = ider.simulate(ider.PRESETS["no motor at joint 1"], t_span=(0, 0.2), t_eval=[0.0, 0.1, 0.2])
    >>> fig = draw_arm(r, 1)
    >>> links = next(l for l in fig.axes[0].lines if l.get_gid() == "links")
    >>> bool(np.allclose(links.get_xydata(), ider.joint_points(r.q[1])))
    True
    """
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(3.6, 3.4), layout="constrained")
        ax = fig.add_subplot()
    fig = ax.figure
    ax.set_gid("arm")
    n = 0 if result is None else len(result.t)
    if n == 0:
        _empty(ax, "no run")
        return fig
    if not -n <= i < n:
        raise IndexError(f"sample {i} out of range for a run of {n} samples")
    i = i % n
    t_end = _t_end(result)
    pth = path(np.linspace(0.0, t_end, 50))
    P0 = joint_points(THETA0)
    P, trace, G, title = _arm_state(result, i, ghost)
    ax.plot(pth[:, 0], pth[:, 1], ":", color="0.35", lw=1.2, label="tip path (eq. 20)")
    ax.plot(P0[:, 0], P0[:, 1], "-o", color="0.7", ms=3, lw=1.5, label="initial", zorder=1)
    if G is not None:
        ax.plot(G[:, 0], G[:, 1], "-o", ms=3, label=GHOST_LABEL + " at $t$", gid="ghost-arm", **_GHOST)
    ax.plot(trace[:, 0], trace[:, 1], "-", color="C3", lw=1.0, label="tip so far", gid="trace", zorder=3)
    ax.plot(P[:, 0], P[:, 1], "-o", color="C0", ms=4, lw=2.4, gid="links", zorder=4, label="arm at $t$")
    ax.plot([0.0], [0.0], "ks", ms=6, zorder=5)
    # Limits over the whole run (every configuration, the path), so frames do not jump.
    pts = np.vstack([pth, P0] + [joint_points(q) for q in result.q[:: max(1, n // 20)]] + [P])
    lo, hi = pts.min(axis=0) - 0.2, pts.max(axis=0) + 0.2
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set(xlabel="$x$ (m)", ylabel="$y$ (m)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(ncol=2, **{**_LEGEND, "bbox_to_anchor": (0.5, -0.17), "fontsize": 6.5, "columnspacing": 1.0})
    return fig


def draw(out, fig=None, arm: bool = True, ghost=None):
    r"""The panel's figure for one :class:`~opalg.ider.panel.PanelOutput`: why it works or fails.

    Axes, left to right: κ(t) and ρ(t) on a log scale with the stop threshold
    (:func:`opalg.ider.kappa_series`) and the stop time; the joint moments T(t) (N·m) with
    the y-range clipped at a stop (:func:`opalg.ider.display_limits`); the joint displacements
    Δθ(t) (deg); and, with ``arm=True``, the final configuration with the tip path
    (:func:`draw_arm`).  ``ghost`` (default ``out.ghost``), the conventional run, is drawn
    faint behind the chosen one; the stop is a dashed vertical line.

    Parameters
    ----------
    out : PanelOutput
    fig : matplotlib Figure, optional
        Draw into it (it should be empty); default a new pyplot figure.
    arm : bool
        Include the configuration axis (the panel shows the arm in its own animated view).
    ghost : opalg.simulate.Trajectory, optional

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from opalg.ider.panel import evaluate
    >>> from opalg.ider.panel_plots import draw
    >>> fig = draw(evaluate("no motor at joint 3", t_end=0.5))
    >>> [ax.get_gid() for ax in fig.axes]
    ['kappa', 'moments', 'displacements', 'arm']
    """
    if fig is None:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(13.0, 3.6) if arm else (10.0, 3.6), layout="constrained")
    r = out.result
    ghost = getattr(out, "ghost", None) if ghost is None else ghost
    axes = fig.subplots(1, 4 if arm else 3, width_ratios=[1, 1, 1, 0.9] if arm else None)
    _plot_kappa(axes[0], r)
    _plot_series(axes[1], r, ghost, _moments, "$T_i$ (N·m)", "joint moments $T(t)$", "T", "moments")
    _plot_series(axes[2], r, ghost, _displacements, r"$\Delta\theta_i$ (deg)",
                 r"joint displacements $\Delta\theta(t)$", r"\Delta\theta", "displacements")
    for ax in axes[:3]:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(ncol=2 if ax.get_gid() != "kappa" else 1, **_LEGEND)
    if arm:
        draw_arm(r, -1, ax=axes[3], ghost=ghost)
    return fig


def _frame_canvas():
    """The Agg canvas class of the panel's off-screen figures (made on first use).

    One difference from ``FigureCanvasAgg``, which changes no pixel: the renderer is shared
    by every such canvas of the same pixel size and dpi.  A draw clears it and paints
    everything, and the PNG is written from it right after; sharing keeps its caches (the
    laid-out text, the parsed mathtext) warm from one figure of the panel to the next, where a
    new renderer would lay out and parse all of it again.  (The redundant render matplotlib asks
    for after each animation frame is skipped by :func:`opalg.course.display.animation_html`.)
    """
    global _FrameCanvasClass
    if _FrameCanvasClass is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

        class FrameCanvas(FigureCanvasAgg):
            def get_renderer(self):
                w, h = self.get_width_height(physical=True)
                key = w, h, self.figure.dpi
                r = _RENDERERS.get(key)
                if r is None:
                    if len(_RENDERERS) >= 8:  # a few sizes are in use; keep memory bounded
                        _RENDERERS.clear()
                    r = _RENDERERS[key] = RendererAgg(w, h, self.figure.dpi)
                self.renderer, self._lastKey = r, key
                return r

        _FrameCanvasClass = FrameCanvas
    return _FrameCanvasClass


_FrameCanvasClass = None
_RENDERERS: dict = {}   # (width px, height px, dpi) -> the RendererAgg those canvases share


class ArmFrames:
    """PNG frames of :func:`draw_arm` for one run, fast enough for a Play widget.

    The figure is drawn once (its layout then frozen); a frame moves only what changes (the
    links, the tip trace, the ghost's links, the title), ~5x cheaper than a new figure.
    ``png(i)`` equals, artist for artist, ``draw_arm(result, i, ghost=ghost)``.

    Examples
    --------
    >>> from opalg import ider
    >>> from opalg.ider.panel_plots import ArmFrames
    >>> r = ider.simulate(ider.PRESETS["no motor at joint 1"], t_span=(0, 0.2), t_eval=[0.0, 0.1, 0.2])
    >>> frames = ArmFrames(r)
    >>> frames.png(1)[:4] == b"\\x89PNG", frames.n
    (True, 3)
    """

    def __init__(self, result, ghost=None, dpi: int = 110, figsize=(3.6, 3.4)):
        if dpi < 110:
            raise ValueError(f"ArmFrames: dpi must be at least 110, got {dpi}")
        self.result, self.ghost, self.dpi, self.n = result, ghost, dpi, len(result.t)
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        draw_arm(result, -1, ax=self.fig.add_subplot(), ghost=ghost)
        _frame_canvas()(self.fig)
        self.fig.draw_without_rendering()  # the constrained layout, once, for the longest title
        # Frozen for good: no engine at all, rather than the "none" placeholder, with which every
        # savefig of an animation frame lays the figure out once more before drawing it.
        self.fig.set_layout_engine(None)
        if self.fig.get_layout_engine() is not None:   # rcParams ask for one: keep a placeholder
            self.fig.set_layout_engine("none")
        ax = self.fig.axes[0]
        self._lines = {ln.get_gid(): ln for ln in ax.lines if ln.get_gid()}
        self.ax = ax

    def update(self, i: int) -> None:
        """Move the artists to sample ``i``."""
        if not -self.n <= i < self.n:
            raise IndexError(f"sample {i} out of range for a run of {self.n} samples")
        P, trace, G, title = _arm_state(self.result, i % self.n, self.ghost)
        self._lines["links"].set_data(P[:, 0], P[:, 1])
        self._lines["trace"].set_data(trace[:, 0], trace[:, 1])
        if G is not None:
            self._lines["ghost-arm"].set_data(G[:, 0], G[:, 1])
        self.ax.set_title(title, fontsize=10)

    def png(self, i: int) -> bytes:
        """The frame at sample ``i`` as PNG bytes (no software metadata, so bytes are stable)."""
        import io

        self.update(i)
        buf = io.BytesIO()
        self.fig.canvas.print_png(buf, metadata={"Software": None})
        return buf.getvalue()
