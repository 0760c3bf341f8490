"""Regenerate the deployment figures of the 1998 tree: ``python -m opalg.symbolic [--outdir figures]``.

Writes, deterministically (fixed sampling, Agg PNGs without software metadata):

* ``deployment_strip.png`` — top views of the mechanism from stowed to open;
* ``deployment_angles.png`` — hinge angles (deg) on a fixed root and on a root spinning at
  :data:`SPIN` rad/s;
* ``deployment_energy.png`` — T, U_springs, W_dampers and their sum (fixed root);
* ``deployment.csv`` — the plotted data.

Both runs use :func:`opalg.symbolic.deployment_setup`'s springs and dampers, DOP853 at
rtol = atol = 1e-10 over :data:`T_EVAL`.
"""

from __future__ import annotations

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Polygon  # noqa: E402

from . import RootMotion, box_outlines, deployable_example, deployment_setup, pose_function, t  # noqa: E402

T_EVAL = np.linspace(0.0, 30.0, 301)
SPIN = 0.1
SNAPSHOTS = (0.0, 2.0, 4.0, 6.0, 10.0, 30.0)
PNG_META = {"Software": None}
LABELS = {1: "platform", 2: "inner panel", 3: "boom", 4: "radiator", 5: "outer panel"}


def runs():
    """(fixed-root run, spinning-root run, fixed-root system) sampled at :data:`T_EVAL`."""
    systems = [deployable_example("deploy", base=base) for base in ("fixed", RootMotion(angles=(SPIN * t, 0, 0)))]
    out = []
    for system in systems:
        setup = deployment_setup(system)
        out.append(system.simulate(setup.stowed, np.zeros(6), (T_EVAL[0], T_EVAL[-1]), springs=setup.springs,
                                   dampers=setup.dampers, t_eval=T_EVAL))
    return out[0], out[1], systems[0]


def draw(ax, outlines: dict, alpha: float = 0.8) -> None:
    """Fill the 2-D body outlines from :func:`box_outlines` (B0 grey, then C0..C4); edges in
    the fill colour so that thin panels seen edge-on stay visible in their colour."""
    for j, poly in sorted(outlines.items()):
        color = "0.55" if j == 0 else f"C{j - 1}"
        ax.add_patch(Polygon(poly, closed=True, facecolor=color, edgecolor=color, lw=1.5, alpha=alpha,
                             label=LABELS.get(j, "truss B0")))
    ax.set_aspect("equal")
    ax.autoscale_view()


def plot_strip(run, system):
    """Top views (inertial x-y) of the fixed-root run at :data:`SNAPSHOTS`."""
    setup, poses = deployment_setup(system), pose_function(system)
    fig, axes = plt.subplots(2, len(SNAPSHOTS) // 2, figsize=(9.0, 4.6), sharex=True, sharey=True)
    for ax, ts in zip(axes.flat, SNAPSHOTS):
        k = int(np.argmin(np.abs(run.t - ts)))
        draw(ax, box_outlines(poses, run.q[k], setup.boxes, view="xy"))
        ax.set_title(f"t = {run.t[k]:.0f} s", fontsize=9)
        ax.set_xlim(-3.2, 5.0)
        ax.set_ylim(-2.4, 2.4)
        ax.tick_params(labelsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("y (m)", fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("x (m)", fontsize=8)
    axes.flat[0].legend(fontsize=6, loc="lower left", ncol=2)
    fig.suptitle("deployment seen from above (inertial x-y), fixed root", fontsize=10)
    fig.tight_layout()
    return fig


def plot_angles(fixed, spinning, system):
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, s in enumerate(system.q):
        ax.plot(fixed.t, np.degrees(fixed.q[:, i]), "-", color=f"C{i}", label=f"{s}, fixed root")
        ax.plot(spinning.t, np.degrees(spinning.q[:, i]), "--", color=f"C{i}", lw=0.9)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("hinge angle (deg)")
    ax.set_title(f"solid: fixed root; dashed: root spinning at {SPIN} rad/s", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    return fig


def plot_energy(run):
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for y, lab in ((run.kinetic, "kinetic T"), (run.spring, "springs"), (run.dissipated, "dissipated by dampers"),
                   (run.energy, "sum")):
        ax.plot(run.t, y, "k-" if lab == "sum" else "-", label=lab)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("energy (J)")
    ax.set_title(f"energy balance, relative drift {run.energy_error:.0e}", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def write_csv(path: pathlib.Path, fixed, spinning, system) -> None:
    names = [str(s) for s in system.q]
    cols = [fixed.t, *fixed.q.T, *spinning.q.T, fixed.kinetic, fixed.spring, fixed.dissipated]
    header = ",".join(["t"] + [f"{n}_fixed" for n in names] + [f"{n}_spinning" for n in names]
                      + ["kinetic", "spring", "dissipated"])
    np.savetxt(path, np.column_stack(cols), delimiter=",", header=header, comments="", fmt="%.10e")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outdir", type=pathlib.Path, default=pathlib.Path("figures"))
    args = ap.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    fixed, spinning, system = runs()
    for name, fig in (("deployment_strip.png", plot_strip(fixed, system)),
                      ("deployment_angles.png", plot_angles(fixed, spinning, system)),
                      ("deployment_energy.png", plot_energy(fixed))):
        fig.savefig(args.outdir / name, dpi=90, metadata=PNG_META)
        plt.close(fig)
    write_csv(args.outdir / "deployment.csv", fixed, spinning, system)
    print(f"wrote deployment figures and CSV to {args.outdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
