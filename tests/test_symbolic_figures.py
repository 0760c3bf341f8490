"""The deployment figure script: deterministic output, and the committed figures/ data is current."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = ["deployment_strip.png", "deployment_angles.png", "deployment_energy.png", "deployment.csv"]


def _run(outdir: pathlib.Path) -> None:
    subprocess.run([sys.executable, "-m", "opalg.symbolic", "--outdir", str(outdir)], check=True,
                   cwd=ROOT, capture_output=True)


def test_figure_script_is_deterministic_and_committed_data_current(tmp_path):
    """Two runs of `python -m opalg.symbolic` write byte-identical files, and the committed
    CSV equals a fresh run (relative 1e-8: the CSV keeps 11 digits, DOP853 round-off across
    machines of one kind stays far below that)."""
    a, b = tmp_path / "a", tmp_path / "b"
    _run(a)
    _run(b)
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
        assert (ROOT / "figures" / name).is_file(), f"figures/{name} is missing: run make reproduce"
    fresh = np.loadtxt(a / "deployment.csv", delimiter=",", skiprows=1)
    committed = np.loadtxt(ROOT / "figures" / "deployment.csv", delimiter=",", skiprows=1)
    assert fresh.shape == committed.shape == (301, 16)
    scale = np.maximum(np.abs(committed).max(axis=0), 1e-12)
    assert np.all(np.abs(fresh - committed).max(axis=0) <= 1e-8 * scale + 1e-12)


def test_deployment_data_tells_the_story():
    """The committed data: stowed at t = 0, open at 30 s on the fixed root (< 3°: the inner
    panel overshoots and is at 2.2° then), and the springs' energy all dissipated or left as
    motion (balance closed to 1e-8)."""
    d = np.loadtxt(ROOT / "figures" / "deployment.csv", delimiter=",", skiprows=1)
    fixed = np.degrees(d[:, 1:7])
    assert np.allclose(fixed[0], [0, 0, 90, 90, 90, -180])
    assert np.abs(fixed[-1]).max() < 3.0
    kinetic, spring, dissipated = d[:, 13], d[:, 14], d[:, 15]
    E = kinetic + spring + dissipated
    assert np.abs(E - E[0]).max() < 1e-8 * E[0]
