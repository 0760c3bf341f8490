"""The Ider figure script: deterministic output, and the committed figures/ data is current."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = ["ider_fig2_displacements.png", "ider_fig3_rates.png", "ider_fig4_moments.png",
         "ider_fig5_configurations.png", "ider_figures.csv"]


def _run(outdir: pathlib.Path) -> None:
    subprocess.run([sys.executable, "-m", "opalg.ider", "--outdir", str(outdir)], check=True,
                   cwd=ROOT, capture_output=True)


def test_figure_script_is_deterministic(tmp_path):
    """Two runs of `python -m opalg.ider` write byte-identical PNGs and CSV."""
    a, b = tmp_path / "a", tmp_path / "b"
    _run(a)
    _run(b)
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_committed_csv_matches_a_fresh_run(tmp_path):
    """figures/ider_figures.csv equals a fresh run (relative 1e-8: the CSV keeps 10 digits;
    integrator round-off across machines of one kind stays far below that)."""
    _run(tmp_path)
    fresh = np.loadtxt(tmp_path / "ider_figures.csv", delimiter=",", skiprows=1)
    committed = np.loadtxt(ROOT / "figures" / "ider_figures.csv", delimiter=",", skiprows=1)
    assert fresh.shape == committed.shape
    scale = np.maximum(np.abs(committed).max(axis=0), 1e-12)
    assert np.all(np.abs(fresh - committed).max(axis=0) <= 1e-8 * scale + 1e-12)
    for name in FILES:
        assert (ROOT / "figures" / name).is_file(), f"figures/{name} is missing: run make reproduce"
