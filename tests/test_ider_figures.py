"""The Ider figure script: deterministic output, and the committed figures/ data is current."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from helpers import assert_close, measured

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = ["ider_fig2_displacements.png", "ider_fig3_rates.png", "ider_fig4_moments.png",
         "ider_fig5_configurations.png", "ider_figures.csv"]


def _run(outdir: pathlib.Path) -> None:
    subprocess.run([sys.executable, "-m", "opalg.ider", "--outdir", str(outdir)], check=True,
                   cwd=ROOT, capture_output=True)


_RUNS: dict[int, pathlib.Path] = {}


@pytest.fixture
def script_run(tmp_path_factory):
    """``script_run(i)``: the output folder of the i-th run of the script in this process, each
    made once in its own subprocess.  The two tests below share run 0 (conftest.py keeps them
    on one worker): the determinism test compares runs 0 and 1, the data test run 0 with the
    committed CSV, so three runs of the script became two."""
    def run(i: int) -> pathlib.Path:
        if i not in _RUNS:
            _RUNS[i] = tmp_path_factory.mktemp(f"ider-script-run{i}")
            _run(_RUNS[i])
        return _RUNS[i]
    return run


def test_figure_script_is_deterministic(script_run):
    """Two runs of `python -m opalg.ider` write byte-identical PNGs and CSV."""
    a, b = script_run(0), script_run(1)
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


#: Largest difference of the unrounded runs behind the CSV (θ, θ̇, T of both) between the default,
#: Sandybridge and Prescott kernels: 3.8e-14, far below the CSV's smallest step (1e-10, the rates').
RUNS_ACROSS_KERNELS = 3.8e-14


def test_committed_csv_matches_a_fresh_run(script_run):
    """figures/ider_figures.csv equals a fresh run to one step of its rounding.

    write_csv rounds each quantity (t, Δθ, θ̇, T) to a step of 1e-9 of the decade of its largest
    value.  The runs differ across machines by far less than a step (RUNS_ACROSS_KERNELS), so an
    entry rounds to the same step or, near a rounding boundary, to the next one: at most one
    step apart (1.01 steps allow for the parsing of the printed decimals).  Motor 1's moment of
    the control-force run is 0 in both (its round-off is far below its step).
    """
    fresh = np.loadtxt(script_run(0) / "ider_figures.csv", delimiter=",", skiprows=1)
    committed = np.loadtxt(ROOT / "figures" / "ider_figures.csv", delimiter=",", skiprows=1)
    assert fresh.shape == committed.shape
    names = (ROOT / "figures" / "ider_figures.csv").read_text().splitlines()[0].split(",")
    kinds = np.array([re.sub(r"^(conv|ctrl)_|\d.*$", "", n) for n in names])   # t_s, dtheta, rate, moment
    step = np.zeros(len(names))
    for kind in set(kinds):
        step[kinds == kind] = 10.0 ** (np.floor(np.log10(np.abs(committed[:, kinds == kind]).max())) - 9)
    assert step.min() >= 1e3 * RUNS_ACROSS_KERNELS
    assert np.all(np.abs(fresh - committed) <= 1.01 * step)
    assert np.all(committed[:, names.index("ctrl_moment1_Nm")] == 0.0)
    for name in FILES:
        assert (ROOT / "figures" / name).is_file(), f"figures/{name} is missing: run make reproduce"


# ----------------------------------------------------------------- opalg.ider.figures (public)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from opalg import ider  # noqa: E402
from opalg.course.display import animation_html  # noqa: E402
from opalg.ider import figures  # noqa: E402


#: np.rad2deg against × 180 / π: one product rounded two ways (relative).
DEG_TOL = measured(2e-15, 1.2e-16, "300 random 31-sample angle series under 3 BLAS/SIMD kernels")


@pytest.fixture(scope="module")
def short_runs():
    """Both runs over 0.3 s on 31 samples: enough for the figures' structure, ~0.3 s."""
    te = np.linspace(0.0, 0.3, 31)
    return (ider.simulate(None, t_span=(0.0, 0.3), t_eval=te),
            ider.simulate(figures.A_PAPER, t_span=(0.0, 0.3), t_eval=te))


def _disjoint(a, b) -> bool:
    return a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0


@pytest.mark.parametrize("kind, label", [("displacements", r"$\Delta\theta_i$ (deg)"),
                                         ("rates", r"$\dot\theta_i$ (rad/s)"),
                                         ("moments", r"joint moment $T_i$ (N·m)")])
def test_series_figures_have_mathtext_labels_and_the_legend_outside(short_runs, kind, label):
    conv, ctrl = short_runs
    fig = figures.plot_series(conv, ctrl, kind)
    ax = fig.axes[0]
    assert ax.get_ylabel() == label and ax.get_xlabel() == r"time $t$ (s)"
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    # The legend box lies outside the data area, so it can hide no curve.
    assert _disjoint(ax.get_legend().get_window_extent(r), ax.get_window_extent(r))
    # Fig. 4 leaves out the control-force T_1 (identically zero): 3 + 2 curves, else 3 + 3.
    assert len(ax.lines) == (5 if kind == "moments" else 6)
    plt.close(fig)


def test_series_are_the_papers_quantities(short_runs):
    """Δθ in degrees from θ(0); rates and moments as simulated (checked by hand-made values)."""
    conv, _ = short_runs
    d = figures.series(conv, "displacements")
    assert_close(d, (conv.q - conv.q[0]) * 180.0 / np.pi, DEG_TOL, "Δθ in degrees")
    assert figures.series(conv, "rates") is conv.v and figures.series(conv, "moments") is conv.tau
    with pytest.raises(ValueError, match="unknown series"):
        figures.series(conv, "torques")


def test_configuration_figure_legend_outside(short_runs):
    fig = figures.plot_configurations(*short_runs)
    ax = fig.axes[0]
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert _disjoint(ax.get_legend().get_window_extent(r), ax.get_window_extent(r))
    assert [ln.get_label() for ln in ax.lines][-1] == "tip path"
    plt.close(fig)


def test_frame_indices():
    assert figures.frame_indices(201, 30)[[0, -1]].tolist() == [0, 200]
    assert len(figures.frame_indices(201, 40)) == 40 and len(figures.frame_indices(3, 40)) == 3
    for bad in (1, 41):
        with pytest.raises(ValueError, match="frames must be between 2 and 40"):
            figures.frame_indices(201, bad)


@pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")
def test_animation_draws_the_arm_with_its_tip_on_the_path(short_runs):
    """Independent of joint_points' own code: the drawn tip of every frame is on eq. 20's path
    (distance ≤ 1e-9 m, the runs' drift bound), and the base stays at the origin."""
    conv, ctrl = short_runs
    anim = figures.arm_animation(ctrl, conv, frames=7)
    fig = anim._fig
    arm_line = next(ln for ln in fig.axes[0].lines if ln.get_gid() == "links")
    ghost = next(ln for ln in fig.axes[0].lines if ln.get_gid() == "ghost-arm")
    for j, k in enumerate(figures.frame_indices(len(ctrl.t), 7)):
        anim._func(j)
        for line in (arm_line, ghost):
            x, y = line.get_data()
            assert (x[0], y[0]) == (0.0, 0.0)
            assert np.hypot(x[-1] - ider.path(ctrl.t[k])[0], y[-1] - ider.path(ctrl.t[k])[1]) <= 1e-9


def test_animation_is_deterministic_and_small(short_runs):
    conv, ctrl = short_runs
    a = animation_html(figures.arm_animation(ctrl, conv, frames=4), alt="The arm moving along the path.")
    b = animation_html(figures.arm_animation(ctrl, conv, frames=4), alt="The arm moving along the path.")
    assert a == b
    assert len(a) < 4 * 40_000, "a frame of the small figure should stay under ~40 kB"
