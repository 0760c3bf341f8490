"""Regenerate the Ider (1990) figures: ``python -m opalg.ider [--outdir DIR]``.

Writes, deterministically (fixed sampling, Agg PNGs without software metadata, at the
notebooks' :data:`opalg.course.display.DPI` with a tight bounding box — the same bytes the notebook
shows):

* ``ider_fig2_displacements.png`` — Δθ_i (deg) for both methods (paper Fig. 2);
* ``ider_fig3_rates.png`` — θ̇_i (rad/s) (Fig. 3);
* ``ider_fig4_moments.png`` — joint moments T_i (N·m): conventional T1–T3, control T2–T3 (Fig. 4);
* ``ider_fig5_configurations.png`` — initial and both final configurations (Fig. 5);
* ``ider_figures.csv`` — the plotted data.

The runs and the plots are :mod:`opalg.ider.figures` (public, tested; the notebook uses them
too): the defaults of :func:`opalg.ider.simulate` (inertia about the proximal joint, gravity
off); the control-force run uses A = [[0,1,0],[0,0,1]] (no motor at joint 1, eq. 24).
"""

from __future__ import annotations

import argparse
import pathlib

from opalg.course.display import png_bytes
from opalg.ider.figures import plot_configurations, plot_series, runs, write_csv

FIGURES = ("ider_fig2_displacements.png", "ider_fig3_rates.png", "ider_fig4_moments.png",
           "ider_fig5_configurations.png")


def main(argv=None) -> int:
    import matplotlib.pyplot as plt

    ap = argparse.ArgumentParser(description="Regenerate the Ider (1990) figures.")
    ap.add_argument("--outdir", type=pathlib.Path, default=pathlib.Path("build/figures"),
                    help="where to write (default build/figures, git-ignored; `make reproduce` passes figures/, the committed copies)")
    args = ap.parse_args(argv)
    # Only the command-line entry point picks a backend: importing opalg.ider.figures from a
    # notebook must leave the inline backend alone.
    plt.switch_backend("Agg")
    args.outdir.mkdir(parents=True, exist_ok=True)
    conv, ctrl = runs()
    figs = (plot_series(conv, ctrl, "displacements"), plot_series(conv, ctrl, "rates"),
            plot_series(conv, ctrl, "moments"), plot_configurations(conv, ctrl))
    for fig, name in zip(figs, FIGURES):
        (args.outdir / name).write_bytes(png_bytes(fig))
        plt.close(fig)
    write_csv(args.outdir / "ider_figures.csv", conv, ctrl)
    print(f"wrote 4 figures and ider_figures.csv to {args.outdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
