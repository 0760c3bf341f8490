"""The Ider panel's pictures: κ(t) by an independent route, the clipping rule, the ghost, the arm.

What the panel draws is checked against routes that share no code with it: κ by a symmetric
square root of ℳ and scipy's principal angles (and a 40-digit evaluation), ρ by a complex-step
Jacobian of the tip, the ghost against a fresh conventional simulation, the arm against the
joint angles' own geometry.  Runs are short and shared per module (the whole file ~5 s).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.linalg import subspace_angles  # noqa: E402

from opalg import ider
from opalg.algorithms.crba import crba  # noqa: E402
from opalg.errors import StateError  # noqa: E402
from opalg.ider import display_limits, kappa_series  # noqa: E402
from opalg.ider.panel import evaluate  # noqa: E402
from opalg.ider.panel_plots import GHOST_LABEL, ArmFrames, draw, draw_arm  # noqa: E402

from helpers import assert_close, cond_tol, measured  # noqa: E402

#: κ of opalg against the eigh + scipy principal-angles route (absolute, κ <= 1).  Not k·cond(ℳ)·ε:
#: the angles route was seen at up to 185 cond(ℳ)·ε (2.8e-13) where cond(ℳ) was small.
KAPPA_ANGLES_TOL = measured(3e-12, 2.8e-13, "4,995 random states and directions with κ > STOP_TOL "
                                            "under 3 BLAS/SIMD kernels")
#: k of opalg's κ against the 40-digit evaluation, k·cond(ℳ)·ε (seen <= 1.35 over 750 random
#: states and directions with κ > STOP_TOL, under 3 kernels).
K_KAPPA_40 = 20
#: ρ against the complex-step Jacobian's Gram eigenvalues (absolute, ρ <= 1).
REACH_TOL = measured(2e-14, 1.6e-15, "400 random θ under 3 kernels")
PAPER_A = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
#: Not a preset: a motor-free combination of joints 1 and 2 (κ ≈ 0.66–0.72 over 0.3 s).
CUSTOM_A = [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
#: Close to the A whose first row is ℳ(θ0)·null(B(θ0)) (S = B ℳ⁻¹ Aᵀ singular at t = 0): κ dips
#: to ~5e-3, five times the stop threshold, near t = 0.05 s and recovers; forces reach ~500 N·m.
NEAR_A = [[1.0, 0.03, -0.003], [0.0, 0.0, 1.0]]


# ---------------------------------------------------------------- shared runs (module scope)

@pytest.fixture(scope="module")
def runs():
    """Three 0.3-s runs on 13 samples (0.025 s apart, so the near-infeasible dip is sampled)."""
    te = np.linspace(0.0, 0.3, 13)
    return {name: (A, ider.simulate(A, t_span=(0.0, 0.3), t_eval=te, refine=False))
            for name, A in (("paper", PAPER_A), ("custom", CUSTOM_A), ("near-infeasible", NEAR_A),
                            ("no motor at joint 3", ider.PRESETS["no motor at joint 3"]))}


@pytest.fixture(scope="module")
def stopped():
    """The panel's own infeasible run: "no motor at joint 3" over 1 s at 101 samples, with its ghost."""
    return evaluate("no motor at joint 3")


@pytest.fixture(scope="module")
def conventional_reference():
    """The conventional run simulated directly (simulate's tight default tolerances), at the panel's samples."""
    return ider.simulate(None, t_span=(0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 101))


# ---------------------------------------------------------------- κ(t) and ρ(t)

def _kappa_by_angles(M, B, Z):
    """cos of the largest principal angle between span(ℳ^{-1/2}Bᵀ) and span(ℳ^{-1/2}Zᵀ)."""
    w, V = np.linalg.eigh(M)
    M_inv_half = (V / np.sqrt(w)) @ V.T  # the symmetric root, not a Cholesky factor
    return float(np.cos(subspace_angles(M_inv_half @ B.T, M_inv_half @ Z.T).max()))


def _kappa_40_digits(M, B, Z):
    """The same cosine as σ_min(G_B^{-1/2} B ℳ⁻¹ Zᵀ G_Z^{-1/2}), G_X = X ℳ⁻¹ Xᵀ, in 40-digit arithmetic."""
    import mpmath as mp

    with mp.workdps(40):
        M, B, Z = (mp.matrix(np.asarray(X, dtype=float).tolist()) for X in (M, B, Z))
        Mi = M**-1

        def inv_sqrt(G):
            E, Q = mp.eigsy(G)
            return Q * mp.diag([1 / mp.sqrt(e) for e in E]) * Q.T

        K = inv_sqrt(B * Mi * B.T) * (B * Mi * Z.T) * inv_sqrt(Z * Mi * Z.T)
        return float(min(mp.svd_r(K, compute_uv=False)))


@pytest.mark.parametrize("name", ["paper", "custom", "near-infeasible", "no motor at joint 3"])
def test_kappa_series_equals_principal_angles_by_an_independent_route(runs, name):
    """κ(t) of kappa_series = cos of the largest principal angle by eigh + scipy, at every sample.

    Why the routes agree: opalg whitens with the Cholesky factor, X = L⁻¹Bᵀ (ℳ = L Lᵀ); here
    W = ℳ^{-1/2} from eigh.  U = W L is orthogonal (U Uᵀ = W ℳ W = I), so W Bᵀ = U (L⁻¹ Bᵀ) and
    W Zᵀ = U (L⁻¹ Zᵀ): one rotation of both subspaces, which leaves principal angles unchanged.
    opalg's σ_min(Q_Bᵀ Q_Z) is by definition the cosine of the largest of them (for two planes
    in R³ the other angle is 0).  The two routes share only ℳ (crba) and B.

    Tolerances, absolute: near π/2 a cosine is known to absolute, not relative, precision.  The
    angles route against opalg: KAPPA_ANGLES_TOL (measured).  A 40-digit evaluation of a third
    formula bounds opalg's own error: K_KAPPA_40·cond(ℳ)·ε with cond(ℳ) computed here.
    """
    A, r = runs[name]
    s = kappa_series(r)
    assert len(s.t) == len(r.t) >= 6 and np.array_equal(s.t, r.t)
    Z = np.asarray(A, dtype=float)
    for i, q in enumerate(r.q):
        M = crba(ider.arm(), q)
        B = ider.tip_jacobian(q)
        cond = np.linalg.cond(M)
        k_angles = _kappa_by_angles(M, B, Z)
        assert_close(s.kappa[i], k_angles, KAPPA_ANGLES_TOL, f"κ vs principal angles ({name}, {i})", scale=1.0)
        if i % 4 == 0:  # the 40-digit route costs ~20 ms a state
            assert_close(s.kappa[i], _kappa_40_digits(M, B, Z), cond_tol(cond, k=K_KAPPA_40),
                         f"κ vs 40 digits ({name}, {i})", scale=1.0)
    # The runs span the range the panel shows: far from, near, and at the stop threshold.
    if name == "near-infeasible":
        assert r.ok and s.t_stop is None and s.kappa.min() < 10 * s.stop_tol
    if name == "no motor at joint 3":
        assert not r.ok and s.t_stop == r.t_stop and s.stop_tol < s.kappa.min() < 2 * s.stop_tol


def _tip_jacobian_complex_step(q):
    """∂tip/∂q by complex step of the tip position (h = 1e-30: no subtractive cancellation)."""
    q = np.asarray(q, dtype=float)
    cols = []
    for j in range(3):
        dq = np.zeros(3, dtype=complex)
        dq[j] = 1e-30j
        cols.append(ider.tip(q + dq).imag / 1e-30)
    return np.array(cols).T


def test_reach_series_equals_the_singular_value_ratio_of_a_complex_step_jacobian(runs):
    """ρ(t) = σ_min/σ_max of ∂tip/∂q, here by complex step and the 2x2 Gram matrix's eigenvalues.

    λ_max, λ_min of B Bᵀ in closed form (λ_min = det/λ_max, no cancellation), ρ = √(λ_min/λ_max);
    tolerance REACH_TOL (measured); ρ ≥ 0.2 along these runs.
    """
    _, r = runs["paper"]
    s = kappa_series(r)
    for q, rho in zip(r.q, s.reach):
        B = _tip_jacobian_complex_step(q)
        G = B @ B.T
        tr, det = np.trace(G), np.linalg.det(G)
        lam_max = tr / 2 + np.sqrt(tr**2 / 4 - det)
        assert_close(rho, np.sqrt(det / lam_max / lam_max), REACH_TOL, "ρ vs complex step", scale=1.0)
    assert s.reach.min() > 0.2


def test_kappa_series_threshold_is_the_runs_own():
    """A run simulated with a non-default stop_tol stops at that threshold, and kappa_series
    (hence the κ axis) draws that threshold, not the default STOP_TOL."""
    tol = 0.003   # κ(0) ≈ 0.0049 for this choice: the run starts, then stops earlier than at 0.001
    r = ider.simulate("no motor at joint 3", t_eval=np.linspace(0.0, 0.3, 31), refine=False, stop_tol=tol)
    s = kappa_series(r)
    assert s.stop_tol == tol != ider.STOP_TOL
    assert (r.status, r.event) == ("event", "singular") and tol < s.kappa.min() < 2 * tol   # stopped at this threshold
    assert kappa_series(r, stop_tol=ider.STOP_TOL).stop_tol == ider.STOP_TOL   # an explicit one wins


def test_kappa_axis_draws_the_series_the_threshold_and_the_stop(stopped):
    """The κ axis shows kappa_series's κ and ρ, the threshold line and the stop line at t_stop."""
    r = stopped.result
    s = kappa_series(r)
    fig = draw(stopped, arm=False)
    ax = next(a for a in fig.axes if a.get_gid() == "kappa")
    kappa, reach, threshold, stop = ax.lines
    np.testing.assert_array_equal(kappa.get_xydata(), np.column_stack([r.t, r.conditioning]))
    np.testing.assert_array_equal(reach.get_xydata(), np.column_stack([r.t, s.reach]))
    assert set(threshold.get_ydata()) == {ider.STOP_TOL}
    assert set(stop.get_xdata()) == {r.t_stop}
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] < ider.STOP_TOL


# ---------------------------------------------------------------- the clipping rule

T = np.linspace(0.0, 1.0, 11)


def test_display_limits_of_a_completed_run_cover_every_finite_sample():
    """No stop: the range of all samples, widened by pad·range each side (here 0.1·4)."""
    y = np.array([0.0, 1, 2, 3, 4, 3, 2, 1, 0, -0.0, 0])
    # exact: scalar IEEE arithmetic, 0 − 0.1·4 and 4 + 0.1·4 round to the doubles of −0.4 and 4.4.
    assert display_limits(T, y, pad=0.1) == (-0.4, 4.4)
    assert display_limits(T, y, pad=0.0) == (0.0, 4.0)


def test_display_limits_drop_the_tail_before_the_stop_and_everything_after():
    """With t_stop, samples in the last `tail` of [t0, t_stop], the last sample and samples
    after t_stop are left out: a spike there does not set the axis."""
    y = np.r_[np.linspace(1.0, 2.0, 8), 50.0, 1e4, -3e4]  # spike at t = 0.8, then blow-up
    # t_stop = 0.85: keep t < 0.98·0.85 = 0.833, i.e. t ≤ 0.8 (the spike is still inside).
    assert display_limits(T, y, t_stop=0.85, pad=0.0) == (1.0, 50.0)
    # tail 0.1: keep t < 0.765, so the spike at 0.8 goes too.
    assert display_limits(T, y, t_stop=0.85, tail=0.1, pad=0.0) == (1.0, 2.0)
    # A stop beyond the last sample still drops the last sample (it holds the blow-up).
    z = np.r_[np.linspace(-1.0, 1.0, 10), -3e4]
    assert display_limits(T, z, t_stop=1.5, pad=0.0) == (-1.0, 1.0)


def test_display_limits_ignore_non_finite_samples():
    """NaN and ±inf tails (a solver that gave up) never reach the limits."""
    y = np.r_[np.linspace(0.0, 3.0, 8), np.nan, np.inf, -np.inf]
    assert display_limits(T, y, pad=0.0) == (0.0, 3.0)
    assert display_limits(T, np.full(11, np.nan)) == (-1.0, 1.0)


def test_display_limits_give_a_visible_band_to_a_constant_series():
    """A flat curve gets ±max(|c|, 1) around it (T1 ≡ 0 when joint 1 has no motor)."""
    assert display_limits(T, np.zeros(11)) == (-1.0, 1.0)
    assert display_limits(T, np.full(11, -250.0)) == (-500.0, 0.0)


def test_display_limits_share_one_range_across_columns_and_keep_early_stops_whole():
    """Columns share the limits; a stop leaving < 2 samples (or a 2-sample run) shows them all."""
    y = np.column_stack([np.linspace(0.0, 1.0, 11), np.linspace(-2.0, 0.0, 11)])
    assert display_limits(T, y, pad=0.0) == (-2.0, 1.0)
    assert display_limits(T, np.arange(11.0), t_stop=0.1, pad=0.0) == (0.0, 10.0)
    assert display_limits([0.0, 1.0], [0.0, 7.0], t_stop=1.0, pad=0.0) == (0.0, 7.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(tail=1.0), r"tail and pad must be in \[0, 1\)"),
    (dict(pad=-0.1), r"tail and pad must be in \[0, 1\)"),
    (dict(y=np.zeros(5)), r"y must have one row per sample of t \(11\), got shape \(5,\)"),
    (dict(t=np.zeros((11, 2))), r"t must be 1-D"),
])
def test_display_limits_name_bad_arguments(kwargs, match):
    """Bad arguments are a StateError naming the argument, not a numpy reshape error."""
    args = dict(t=T, y=np.zeros(11)) | kwargs
    with pytest.raises(StateError, match=match):
        display_limits(**args)


def test_moments_axis_of_a_real_infeasible_run_is_clipped_at_the_stop(stopped):
    """"no motor at joint 3" (panel settings): the samples before the stop fit, the blow-up is cut.

    The moments grow like 1/κ: |T1| is 324 N·m at 0.24 s and 692 N·m at the last sample (0.25 s,
    0.009 s before the stop); the axis ends near −350 N·m and the title names the peak.
    """
    r = stopped.result
    assert r.status == "event" and 0.25 < r.t_stop < 0.26 and r.t[-1] < r.t_stop
    fig = draw(stopped, arm=False)
    ax = next(a for a in fig.axes if a.get_gid() == "moments")
    lo, hi = ax.get_ylim()
    early = r.t <= 0.9 * r.t_stop
    assert lo <= r.tau[early].min() and r.tau[early].max() <= hi  # nothing before the tail is cut
    assert -400.0 < lo < -324.0 and r.tau[-1, 0] < -650.0 and r.tau[-1, 0] < 1.8 * lo  # the last is cut
    assert np.abs(stopped.ghost.tau).max() < -lo  # the ghost completed and fits inside
    notes = [t for t in ax.texts if t.get_gid() == "clip-note"]
    assert len(notes) == 1 and "clipped: peak $|T_1| = 692$" in notes[0].get_text()
    # The displacements stay bounded at the stop: nothing of them is cut.
    dx = next(a for a in fig.axes if a.get_gid() == "displacements")
    d = np.rad2deg(r.q - r.q[0])
    assert dx.get_ylim()[0] <= d.min() and d.max() <= dx.get_ylim()[1]
    assert not [t for t in dx.texts if t.get_gid() == "clip-note"]


def test_no_title_or_note_is_cut_off_on_a_run_that_stops(stopped):
    """With the panel's size and margins, every title and the clip note lie inside the figure."""
    from matplotlib.figure import Figure
    from opalg.ider.panel import PANEL_FIGSIZE, PANEL_MARGINS

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=PANEL_FIGSIZE)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(**PANEL_MARGINS)
    fig = draw(stopped, fig=fig, arm=False)
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    box = fig.bbox
    for ax in fig.axes:
        for text in [ax.title] + [t for t in ax.texts if t.get_gid() == "clip-note"]:
            e = text.get_window_extent(renderer)
            assert box.x0 <= e.x0 and e.x1 <= box.x1 and box.y0 <= e.y0 and e.y1 <= box.y1, \
                f"{ax.get_gid()}: {text.get_text()!r} reaches outside the figure ({e} vs {box})"


# ---------------------------------------------------------------- the ghost

def test_ghost_curves_are_the_conventional_run(stopped, conventional_reference):
    """Behind T(t) and Δθ(t): three grey curves, the conventional run (simulate(None) directly).

    The panel simulates at rtol 1e-9, the reference at 1e-12: relative agreement 1e-6.
    """
    g, ref = stopped.ghost, conventional_reference
    assert g.status == ref.status == "completed" and np.array_equal(g.t, ref.t)
    fig = draw(stopped, arm=False)
    for gid, values in (("moments", ref.tau), ("displacements", np.rad2deg(ref.q - ref.q[0]))):
        ax = next(a for a in fig.axes if a.get_gid() == gid)
        ghosts = [ln for ln in ax.lines if ln.get_color() == "0.45"]
        assert len(ghosts) == 3 and ghosts[0].get_label() == GHOST_LABEL
        assert all(ln.get_zorder() < 2 for ln in ghosts)  # drawn behind the chosen run's curves
        for i, ln in enumerate(ghosts):
            np.testing.assert_array_equal(ln.get_xdata(), ref.t)
            scale = np.abs(values[:, i]).max() or 1.0
            assert np.abs(ln.get_ydata() - values[:, i]).max() <= 1e-6 * scale, (gid, i)


def test_ghost_arm_is_the_conventional_state_at_the_nearest_sample():
    """With differently sampled runs, the ghost arm at sample i is the ghost's nearest sample.

    Chosen run every 0.05 s, ghost every 0.03 s: nearest ghost samples worked out by hand.
    """
    r = ider.simulate(PAPER_A, t_span=(0.0, 0.3), t_eval=np.linspace(0.0, 0.3, 7))
    g = ider.simulate(None, t_span=(0.0, 0.3), t_eval=np.linspace(0.0, 0.3, 11))
    # t = 0, .05, .10, .15, .20, .25, .30  ->  ghost t = 0, .06, .09, .15, .21, .24, .30
    nearest = [0, 2, 3, 5, 7, 8, 10]
    frames = ArmFrames(r, ghost=g)
    for i, j in enumerate(nearest):
        ax = draw_arm(r, i, ghost=g).axes[0]
        drawn = next(ln for ln in ax.lines if ln.get_gid() == "ghost-arm")
        # exact: the drawn points are joint_points of that sample.
        np.testing.assert_array_equal(drawn.get_xydata(), ider.joint_points(g.q[j]))
        frames.update(i)
        np.testing.assert_array_equal(frames._lines["ghost-arm"].get_xydata(), drawn.get_xydata())


# ---------------------------------------------------------------- the arm

def _points_from_angles(q):
    """Base, elbow, wrist, tip: unit links (LENGTHS = 1) at absolute angles θ1, θ1+θ2, θ1+θ2+θ3."""
    phi = np.cumsum(q)
    return np.array([[0.0, 0.0]] + [[sum(np.cos(phi[: k + 1])), sum(np.sin(phi[: k + 1]))] for k in range(3)])


def test_draw_arm_links_and_trace_follow_the_run(runs):
    """Links = joint_points(θ(t_i)) (and those = the unit links at the absolute angles); the trace =
    tip(θ) up to t_i, on the path x0 + v_A t (tip error < 1e-9 m at simulate's rtol 1e-12)."""
    assert ider.LENGTHS == (1.0, 1.0, 1.0)
    _, r = runs["paper"]
    for i in (0, 5, -1):
        ax = draw_arm(r, i).axes[0]
        lines = {ln.get_gid(): ln for ln in ax.lines if ln.get_gid()}
        P = ider.joint_points(r.q[i])
        np.testing.assert_array_equal(lines["links"].get_xydata(), P)
        # exact: the same cosines and sines of the same cumulative sums, added in the same order.
        np.testing.assert_array_equal(P, _points_from_angles(r.q[i]))
        k = i % len(r.t)
        trace = lines["trace"].get_xydata()
        assert trace.shape == (k + 1, 2)
        # exact: the trace is the run's tip(θ), the same batched call row by row.
        np.testing.assert_array_equal(trace, ider.tip(r.q[: k + 1]))
        assert np.abs(trace - ider.path(r.t[: k + 1])).max() < 1e-9
        assert f"$t = {r.t[k]:.2f}$ s (sample {k + 1}/{len(r.t)})" in ax.get_title()
        assert "ghost-arm" not in lines
    with pytest.raises(IndexError, match=r"sample 13 out of range for a run of 13 samples"):
        draw_arm(r, 13)


def test_arm_frames_frame_i_shows_state_i_in_any_order(runs):
    """ArmFrames.update(i) moves every artist to draw_arm(result, i)'s data, whatever came before;
    png(i) is the same bytes however it is reached, and differs from frame to frame."""
    _, r = runs["custom"]
    frames = ArmFrames(r)
    assert frames.n == len(r.t)
    for i in (7, 0, 12, 3, 7):
        frames.update(i)
        ref = {ln.get_gid(): ln for ln in draw_arm(r, i).axes[0].lines if ln.get_gid()}
        for gid in ("links", "trace"):
            np.testing.assert_array_equal(frames._lines[gid].get_xydata(), ref[gid].get_xydata())
        np.testing.assert_array_equal(frames._lines["links"].get_xydata(), ider.joint_points(r.q[i]))
        assert frames.ax.get_title() == draw_arm(r, i).axes[0].get_title()
    first = frames.png(4)
    frames.png(11)
    assert frames.png(4) == first != frames.png(5)
    assert first == ArmFrames(r).png(4)
    with pytest.raises(IndexError, match=r"sample -14 out of range"):
        frames.update(-14)


def test_no_run_draws_placeholders_on_every_axis():
    """A choice singular at t = 0 (PanelOutput.result None): draw() and draw_arm(None) put a
    placeholder text on each axis and draw no curve."""
    from opalg.ider.panel import PanelOutput

    fig = draw(PanelOutput(None, None, "infeasible: singular at t = 0", False))
    assert [ax.get_gid() for ax in fig.axes] == ["kappa", "moments", "displacements", "arm"]
    for ax in fig.axes:
        assert not ax.lines and [t.get_text() for t in ax.texts] in (["no run: singular at $t = 0$"], ["no run"])
    ax = draw_arm(None).axes[0]
    assert ax.get_gid() == "arm" and not ax.lines and [t.get_text() for t in ax.texts] == ["no run"]
