"""Regenerate the Ider (1990) figures: ``python -m opalg.ider [--outdir figures]``.

Writes, deterministically (fixed sampling, Agg PNGs without software metadata):

* ``ider_fig2_displacements.png`` — Δθ_i (deg) for both methods (paper Fig. 2);
* ``ider_fig3_rates.png`` — θ̇_i (rad/s) (Fig. 3);
* ``ider_fig4_moments.png`` — joint moments (N·m): conventional M1–M3, control M2–M3 (Fig. 4);
* ``ider_fig5_configurations.png`` — initial and both final configurations (Fig. 5);
* ``ider_figures.csv`` — the plotted data.

Both runs use the defaults of :func:`opalg.ider.simulate` (inertia about the
proximal joint, gravity off); the control-force run uses A = [[0,1,0],[0,0,1]]
(no motor at joint 1, eq. 24).
"""

from __future__ import annotations

import argparse
import pathlib

import matplotlib.pyplot as plt
import numpy as np

from . import PRESETS, THETA0, joint_points, path, simulate

A_PAPER = PRESETS["no motor at joint 1"]
T_EVAL = np.linspace(0.0, 1.0, 201)
PNG_META = {"Software": None}


def runs(inertia: str = "joint", gravity: float = 0.0):
    """(conventional, control-force) results sampled at :data:`T_EVAL`."""
    conv = simulate(None, inertia=inertia, gravity=gravity, t_eval=T_EVAL)
    ctrl = simulate(A_PAPER, inertia=inertia, gravity=gravity, t_eval=T_EVAL)
    return conv, ctrl


def _lines(ax, t, conv, ctrl, cols_conv, cols_ctrl, ylabel):
    for i in cols_conv:
        ax.plot(t, conv[:, i], "-", color=f"C{i}", label=f"conventional, joint {i + 1}")
    for i in cols_ctrl:
        ax.plot(t, ctrl[:, i], "--", color=f"C{i}", label=f"control force, joint {i + 1}")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)


def plot_series(conv, ctrl, kind: str):
    """Figure 2 (``"displacements"``), 3 (``"rates"``) or 4 (``"moments"``); returns the Figure."""
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    if kind == "displacements":
        dc, dk = np.rad2deg(conv.q - conv.q[0]), np.rad2deg(ctrl.q - ctrl.q[0])
        _lines(ax, conv.t, dc, dk, range(3), range(3), "Δθ (deg)")
        ax.set_title("Ider Fig. 2: joint displacements")
    elif kind == "rates":
        _lines(ax, conv.t, conv.qd, ctrl.qd, range(3), range(3), "θ̇ (rad/s)")
        ax.set_title("Ider Fig. 3: joint rates")
    elif kind == "moments":
        _lines(ax, conv.t, conv.tau, ctrl.tau, range(3), (1, 2), "joint moment (N·m)")
        ax.set_title("Ider Fig. 4: joint moments (control: M1 ≡ 0)")
    else:
        raise ValueError(f"unknown series {kind!r}")
    fig.tight_layout()
    return fig


def plot_configurations(conv, ctrl):
    """Figure 5: initial configuration, both final configurations and the tip path."""
    fig, ax = plt.subplots(figsize=(5.0, 4.0))
    for q, style, label in ((THETA0, "k-o", "initial"), (conv.q[-1], "C0-o", "conventional, t = 1 s"),
                            (ctrl.q[-1], "C1--o", "control force, t = 1 s")):
        P = joint_points(q)
        ax.plot(P[:, 0], P[:, 1], style, label=label, ms=4)
    pth = path(conv.t)
    ax.plot(pth[:, 0], pth[:, 1], ":", color="0.5", label="tip path")
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title("Ider Fig. 5: configurations")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def write_csv(path_: pathlib.Path, conv, ctrl) -> None:
    cols, names = [conv.t], ["t_s"]
    for tag, r in (("conv", conv), ("ctrl", ctrl)):
        for i in range(3):
            cols += [np.rad2deg(r.q[:, i] - r.q[0, i]), r.qd[:, i], r.tau[:, i]]
            names += [f"{tag}_dtheta{i + 1}_deg", f"{tag}_rate{i + 1}_rad_s", f"{tag}_moment{i + 1}_Nm"]
    np.savetxt(path_, np.column_stack(cols), delimiter=",", header=",".join(names), comments="",
               fmt="%.9e")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Regenerate the Ider (1990) figures.")
    ap.add_argument("--outdir", type=pathlib.Path, default=pathlib.Path("figures"))
    args = ap.parse_args(argv)
    # Only the command-line entry point picks a backend: importing this module from a
    # notebook must leave the inline backend alone.
    plt.switch_backend("Agg")
    args.outdir.mkdir(parents=True, exist_ok=True)
    conv, ctrl = runs()
    for fig, name in ((plot_series(conv, ctrl, "displacements"), "ider_fig2_displacements.png"),
                      (plot_series(conv, ctrl, "rates"), "ider_fig3_rates.png"),
                      (plot_series(conv, ctrl, "moments"), "ider_fig4_moments.png"),
                      (plot_configurations(conv, ctrl), "ider_fig5_configurations.png")):
        fig.savefig(args.outdir / name, dpi=110, metadata=PNG_META)
        plt.close(fig)
    write_csv(args.outdir / "ider_figures.csv", conv, ctrl)
    print(f"wrote 4 figures and ider_figures.csv to {args.outdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
