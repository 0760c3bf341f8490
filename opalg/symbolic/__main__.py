"""Regenerate the deployment figures of the 1998 tree: ``python -m opalg.symbolic [--outdir DIR]``.

Writes, deterministically (fixed sampling, Agg PNGs without software metadata, by
:func:`opalg.course.display.png_bytes`: the notebooks' DPI, a tight bounding box):

* ``deployment_strip.png`` — top views of the mechanism from stowed to open;
* ``deployment_angles.png`` — hinge angles (deg) on a fixed root and on a root spinning at
  :data:`SPIN` rad/s;
* ``deployment_energy.png`` — T, U_springs, W_dampers and their sum (fixed root);
* ``deployment.csv`` — the plotted data.

The deployment mechanism (body roles, hinges, springs, dampers) is the suite's own illustrative
choice built on the paper's topology T = (0, 1, 1, 1, 2): the 1998 scan holds no deployment data.

Both runs use :func:`opalg.symbolic.deployment_setup`'s springs and dampers, DOP853 at
rtol = atol = 1e-10 over :data:`T_EVAL` (:func:`opalg.symbolic.simulate`, through
:func:`opalg.simulate.integrate`); a run that stops early is an error, not a figure.
"""

from __future__ import annotations

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from opalg.course.display import png_bytes  # noqa: E402
from opalg.symbolic import (
    ROLES, RootMotion, box_outlines, deployable_example, deployment_setup, draw_outlines, pose_function, t)

T_EVAL = np.linspace(0.0, 30.0, 301)
SPIN = 0.1
SNAPSHOTS = (0.0, 2.0, 4.0, 6.0, 10.0, 30.0)


def runs():
    """(fixed-root run, spinning-root run, fixed-root system) sampled at :data:`T_EVAL`."""
    systems = [deployable_example("deploy", base=base) for base in ("fixed", RootMotion(angles=(SPIN * t, 0, 0)))]
    out = []
    for system in systems:
        setup = deployment_setup(system)
        run = system.simulate(setup.stowed, np.zeros(6), (T_EVAL[0], T_EVAL[-1]), springs=setup.springs,
                              dampers=setup.dampers, t_eval=T_EVAL)
        if not run.ok:                   # a figure of part of the run would pass for the whole
            raise RuntimeError(f"the deployment run stopped early: {run.message}")
        out.append(run)
    return out[0], out[1], systems[0]


def plot_strip(run, system):
    """Top views (inertial x-y) of the fixed-root run at :data:`SNAPSHOTS`."""
    setup, poses = deployment_setup(system), pose_function(system)
    fig, axes = plt.subplots(2, len(SNAPSHOTS) // 2, figsize=(9.0, 4.6), sharex=True, sharey=True)
    for ax, ts in zip(axes.flat, SNAPSHOTS):
        k = int(np.argmin(np.abs(run.t - ts)))
        draw_outlines(ax, box_outlines(poses, run.q[k], setup.boxes, view="xy"), labels=ROLES)
        ax.set_title(f"t = {run.t[k]:.0f} s", fontsize=9)
        ax.set_xlim(-3.2, 5.0)
        ax.set_ylim(-2.4, 2.4)
        ax.tick_params(labelsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel(r"$y$ (m)", fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel(r"$x$ (m)", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle(r"deployment seen from above (inertial $x$-$y$ plane), fixed root", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.subplots_adjust(hspace=0.35)   # equal-aspect axes: tight_layout leaves the titles on the row above
    fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=7, frameon=False)
    return fig


def plot_angles(fixed, spinning, system):
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, s in enumerate(system.q):
        j, k = str(s)[1], str(s)[3]
        ax.plot(fixed.t, np.degrees(fixed.q[:, i]), "-", color=f"C{i}", label=rf"$H_{{{j}{k}}}$")
        ax.plot(spinning.t, np.degrees(spinning.q[:, i]), "--", color=f"C{i}", lw=0.9)
    ax.set_xlabel(r"$t$ (s)")
    ax.set_ylabel(r"hinge angle $H_{ji}$ (deg)")
    ax.set_title(rf"solid: fixed root; dashed: root spinning at $\omega_0$ = {SPIN} rad/s", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    return fig


def plot_energy(run):
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for y, lab in ((run.kinetic, r"kinetic $\mathcal{K}$"), (run.spring, r"springs $\mathcal{U}_s$"),
                   (run.dissipated, r"dissipated by dampers $W_d$"), (run.energy, "sum")):
        ax.plot(run.t, y, "k--" if lab == "sum" else "-", label=lab)
    ax.set_xlabel(r"$t$ (s)")
    ax.set_ylabel("energy (J)")
    ax.set_title(f"energy balance, relative drift {run.energy_error:.0e}", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
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
    ap.add_argument("--outdir", type=pathlib.Path, default=pathlib.Path("build/figures"),
                    help="where to write (default build/figures, git-ignored; `make reproduce` passes figures/, the committed copies)")
    args = ap.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    fixed, spinning, system = runs()
    for name, fig in (("deployment_strip.png", plot_strip(fixed, system)),
                      ("deployment_angles.png", plot_angles(fixed, spinning, system)),
                      ("deployment_energy.png", plot_energy(fixed))):
        (args.outdir / name).write_bytes(png_bytes(fig))   # the notebooks' DPI, tight box, no metadata
        plt.close(fig)
    write_csv(args.outdir / "deployment.csv", fixed, spinning, system)
    print(f"wrote deployment figures and CSV to {args.outdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
