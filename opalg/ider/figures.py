r"""The Ider (1990) figures: the two runs of section 4 and Figures 2–5, plus an animation of the arm.

One source for the notebook (``notebooks/08_ider_control_forces.ipynb`` shows these figures
through :func:`opalg.course.display.show`) and for the figure script ``python -m opalg.ider``, which
writes the same PNG bytes to ``figures/`` (:func:`opalg.course.display.png_bytes`).

* :func:`runs` — the conventional run (Z = B) and the control-force run of eq. 24
  (A = [[0, 1, 0], [0, 0, 1]]: no motor at joint 1), sampled at :data:`T_EVAL`;
* :func:`plot_series` — Fig. 2 (Δθ_i), Fig. 3 (θ̇_i) or Fig. 4 (joint moments T_i) over time;
* :func:`plot_configurations` — Fig. 5: the initial and both final configurations and the tip path;
* :func:`arm_animation` — both arms moving while the tip follows the path (≤ 40 frames).

Conventions of the pictures: solid lines the conventional run, dashed the control-force run,
colour ``C{i}`` joint i + 1; legends sit outside the axes (right), so they never hide a curve.
Nothing here picks a matplotlib backend: the script does (Agg), a notebook keeps its own.
"""

from __future__ import annotations

import numpy as np

from opalg.ider import PRESETS, THETA0, joint_points, path, simulate
from opalg.simulate import Trajectory

#: The paper's control-force directions (eq. 24): no motor at joint 1.
A_PAPER = PRESETS["no motor at joint 1"]
#: Sampling of the figures' runs: 201 points over the 1-s motion.
T_EVAL = np.linspace(0.0, 1.0, 201)
#: Most frames an animation may have (the notebook standard's cap: a notebook stays < 2 MB).
MAX_FRAMES = 40

_SERIES = {
    # kind: (ylabel, title, columns of the control-force run drawn)
    "displacements": (r"$\Delta\theta_i$ (deg)", "Ider Fig. 2: joint displacements", (0, 1, 2)),
    "rates": (r"$\dot\theta_i$ (rad/s)", "Ider Fig. 3: joint rates", (0, 1, 2)),
    "moments": (r"joint moment $T_i$ (N·m)", r"Ider Fig. 4: joint moments (control: $T_1 \equiv 0$)", (1, 2)),
}


def runs(inertia: str = "joint", gravity: float = 0.0) -> tuple[Trajectory, Trajectory]:
    """The conventional and the control-force run of section 4, sampled at :data:`T_EVAL`.

    Both use :func:`opalg.ider.simulate`'s defaults otherwise (DOP853, rtol = atol = 1e-12).

    Parameters
    ----------
    inertia : {"joint", "com"}
        Reading of the paper's moments of inertia (see :mod:`opalg.ider`).
    gravity : float
        Magnitude (m/s²) of gravity along −y; 0 is the paper's horizontal plane.

    Returns
    -------
    (Trajectory, Trajectory)
        ``(conventional, control_force)``.

    Examples
    --------
    >>> from opalg.ider import figures
    >>> conv, ctrl = figures.runs()
    >>> conv.status, ctrl.status, len(ctrl.t)
    ('completed', 'completed', 201)
    """
    conv = simulate(None, inertia=inertia, gravity=gravity, t_eval=T_EVAL)
    ctrl = simulate(A_PAPER, inertia=inertia, gravity=gravity, t_eval=T_EVAL)
    return conv, ctrl


def series(result: Trajectory, kind: str) -> np.ndarray:
    """The plotted quantity of one run, shape (len(t), 3).

    ``"displacements"``: Δθ_i = θ_i(t) − θ_i(0) in degrees; ``"rates"``: θ̇_i (rad/s);
    ``"moments"``: the joint moments T_i (N·m) the motors apply.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.ider import figures, simulate
    >>> r = simulate(None, t_span=(0, 0.1), t_eval=[0.0, 0.1])
    >>> bool(np.all(figures.series(r, "displacements")[0] == 0))
    True
    """
    if kind == "displacements":
        return np.rad2deg(result.q - result.q[0])
    if kind == "rates":
        return result.v
    if kind == "moments":
        return result.tau
    raise ValueError(f"unknown series {kind!r}; choose one of {list(_SERIES)}")


def plot_series(conv: Trajectory, ctrl: Trajectory, kind: str):
    """Figure 2 (``"displacements"``), 3 (``"rates"``) or 4 (``"moments"``) of the paper.

    Solid: the conventional run, all three joints; dashed: the control-force run (for the
    moments only T_2 and T_3: T_1 ≡ 0 without a motor at joint 1).  The legend is outside the
    axes, on the right.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from opalg.ider import figures, simulate
    >>> conv = simulate(None, t_span=(0, 0.1), t_eval=[0.0, 0.05, 0.1])
    >>> ctrl = simulate(figures.A_PAPER, t_span=(0, 0.1), t_eval=[0.0, 0.05, 0.1])
    >>> fig = figures.plot_series(conv, ctrl, "rates")
    >>> print(fig.axes[0].get_ylabel())
    $\\dot\\theta_i$ (rad/s)
    """
    import matplotlib.pyplot as plt

    if kind not in _SERIES:
        raise ValueError(f"unknown series {kind!r}; choose one of {list(_SERIES)}")
    ylabel, title, cols_ctrl = _SERIES[kind]
    yc, yk = series(conv, kind), series(ctrl, kind)
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for i in range(3):
        ax.plot(conv.t, yc[:, i], "-", color=f"C{i}", label=f"conventional, joint {i + 1}")
    for i in cols_ctrl:
        ax.plot(ctrl.t, yk[:, i], "--", color=f"C{i}", label=f"control force, joint {i + 1}")
    ax.set_xlabel(r"time $t$ (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig


def plot_configurations(conv: Trajectory, ctrl: Trajectory):
    """Figure 5: the initial configuration, both final ones and the tip path (legend outside).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from opalg.ider import figures, simulate
    >>> conv = simulate(None, t_span=(0, 0.1), t_eval=[0.0, 0.1])
    >>> ctrl = simulate(figures.A_PAPER, t_span=(0, 0.1), t_eval=[0.0, 0.1])
    >>> len(figures.plot_configurations(conv, ctrl).axes[0].lines)
    4
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    for q, style, label in ((THETA0, "k-o", "initial"),
                            (conv.q[-1], "C0-o", f"conventional, t = {conv.t[-1]:g} s"),
                            (ctrl.q[-1], "C1--o", f"control force, t = {ctrl.t[-1]:g} s")):
        P = joint_points(q)
        ax.plot(P[:, 0], P[:, 1], style, label=label, ms=4)
    pth = path(conv.t)
    ax.plot(pth[:, 0], pth[:, 1], ":", color="0.4", lw=1.5, label="tip path")
    ax.set_aspect("equal")
    ax.set_xlabel(r"$x$ (m)")
    ax.set_ylabel(r"$y$ (m)")
    ax.set_title("Ider Fig. 5: configurations")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig


def frame_indices(n_samples: int, frames: int) -> np.ndarray:
    """Sample indices of an animation's frames: ``frames`` evenly spaced, first and last included.

    Examples
    --------
    >>> from opalg.ider.figures import frame_indices
    >>> frame_indices(201, 5).tolist()
    [0, 50, 100, 150, 200]
    """
    if not 2 <= frames <= MAX_FRAMES:
        raise ValueError(f"frames must be between 2 and {MAX_FRAMES}, got {frames!r}")
    if n_samples < 2:
        raise ValueError(f"a run needs at least 2 samples to animate, got {n_samples}")
    return np.unique(np.round(np.linspace(0, n_samples - 1, frames)).astype(int))


def arm_animation(ctrl: Trajectory, conv: Trajectory | None = None, frames: int = 30):
    """A ``FuncAnimation`` of the arm while its tip follows the path (for :func:`opalg.course.display.animate`).

    The frames are the panel's arm picture (:class:`opalg.ider.panel_plots.ArmFrames`, one
    drawing whose links, tip trace, ghost and title move): the tip path, the initial
    configuration, the control-force arm, its tip so far and, given ``conv``, the conventional
    arm at the same time as a grey ghost, at ``frames`` evenly spaced samples of ``ctrl.t``.

    Parameters
    ----------
    ctrl : Trajectory
        The run to animate.
    conv : Trajectory, optional
        The ghost (its sample nearest to each frame's time is drawn).
    frames : int
        Number of frames, 2 … :data:`MAX_FRAMES`.

    Returns
    -------
    matplotlib.animation.FuncAnimation

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from opalg.ider import figures, simulate
    >>> r = simulate(figures.A_PAPER, t_span=(0, 0.2), t_eval=[0.0, 0.1, 0.2])
    >>> anim = figures.arm_animation(r, frames=3)
    >>> len(list(anim.new_frame_seq()))
    3
    """
    from matplotlib.animation import FuncAnimation

    from opalg.ider.panel_plots import ArmFrames

    idx = frame_indices(len(ctrl.t), frames)
    arm = ArmFrames(ctrl, ghost=conv)

    def step(j):
        arm.update(int(idx[j]))
        return ()

    return FuncAnimation(arm.fig, step, frames=len(idx), interval=80, blit=False)


def write_csv(path_, conv: Trajectory, ctrl: Trajectory) -> None:
    """The plotted data as CSV: t, then per run and joint Δθ (deg), θ̇ (rad/s), T (N·m); ten
    digits relative to the largest value of that quantity over both runs and all joints."""
    cols, names, kinds = [conv.t], ["t_s"], ["t"]
    for tag, r in (("conv", conv), ("ctrl", ctrl)):
        d, rate, T = (series(r, kind) for kind in ("displacements", "rates", "moments"))
        for i in range(3):
            cols += [d[:, i], rate[:, i], T[:, i]]
            names += [f"{tag}_dtheta{i + 1}_deg", f"{tag}_rate{i + 1}_rad_s", f"{tag}_moment{i + 1}_Nm"]
            kinds += ["dtheta", "rate", "moment"]
    data = np.column_stack(cols)
    # Rounded to a step set by the quantity's own size, not by each entry's: an entry that is
    # zero in theory (motor 1's moment in the control-force run) is round-off, whose digits
    # differ from CPU to CPU, and is written as the 0 it is.
    kinds = np.array(kinds)
    for kind in set(kinds):
        scale = np.abs(data[:, kinds == kind]).max()
        if scale > 0:
            step = 10.0 ** (np.floor(np.log10(scale)) - 9)
            data[:, kinds == kind] = np.round(data[:, kinds == kind] / step) * step + 0.0
    np.savetxt(path_, data, delimiter=",", header=",".join(names), comments="", fmt="%.9e")
