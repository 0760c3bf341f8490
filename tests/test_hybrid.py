r"""Hybrid dynamics (docs/REFERENCE.md §9, G1/G2): ``opalg.hybrid``, ``opalg.reduced_inertia``
and the hybrid operators of ``opalg.operators(..., passive=)``, against independent routes only.

Routes (none of them runs the hybrid recursion):

* the dense partitioned solve from ``opalg.crba`` / ``opalg.bias`` (composite-body and
  Newton–Euler recursions, C2/C3/D1):
  θ̈_p = ℳ_pp⁻¹(τ_p − C_p − ℳ_pa θ̈_a),  τ_a = ℳ_ap θ̈_p + ℳ_aa θ̈_a + C_a,
  where ℳq̈ + C = τ + Σ J_kᵀ f_ext(k) and ``bias(..., f_ext)`` returns C − Σ Jᵀ f_ext;
* the exact answer of a drawn problem: draw q̈, compute τ = rnea(q, q̇, q̈) in extended
  precision (``np.longdouble``) and round it; the hybrid problem (τ_p, q̈_a) then has the
  drawn q̈_p as its solution up to the rounding of τ to float64;
* the ABA and RNEA (the all-passive / all-active limits);
* dense matrices of the operators (``.dense()``; φ, ψ by a dense inverse of I − ℰφ, I − ℰψ);
* sympy: the closed-form Lagrangian of the 2-link arm (Spong's textbook expressions).

Tolerances (each stated where it is used):

* ``C_COND`` = 64: θ̈_p of a backward-stable method has relative error ≲ γ ε κ_p with κ_p the
  normwise condition number of the partitioned problem (:meth:`Dense.kappa_p`, ≥ cond(ℳ_pp)).
  Over 2,052 drawn problems (chains, trees, forests of 1–30 bodies in three label orders, every
  joint kind, mass ratios up to 1e6, random and joint-splitting masks, gravity and f_ext on and
  off; cond(ℳ_pp) up to 9e7) the largest γ was 15.2 for the recursion — and 19.7 for LU on the
  same problem (a helical joint whose gravity torque is a small difference: the norms in κ_p
  miss the size of C's intermediate terms, equally for both routes).  64 is 3x LU's worst;
* ``FACTOR`` = 10, ``FLOOR`` = 1e-13 against the dense LU error of the same problem (the worst of
  ``NRHS`` = 4 right-hand sides), as in tests/test_exactness.py and tests/test_property.py: 10
  covers the fluctuation between two different rounding patterns (measured: ≤ 0.36 of the
  allowance over the 2,052 problems, ≤ 0.59 near a gimbal lock), FLOOR (≈ 450 ε) the
  accumulation when LU happens to be exact to the last bit;
* ``C_FWD`` = 64: a forward evaluation (τ_a from a given θ̈_p, an RNEA) has relative error
  ≲ γ ε (sum of the norms of its terms); measured γ ≤ 10.4 (6x margin).

Beyond the range tested here: with mass ratios of 1e10–1e12 in one model, 2 of 720 problems
were 12x and 22x worse than LU — and so is ``opalg.aba`` on the same model and state (11x, 10x),
so that is the articulated-body recursion's behaviour, not the hybrid split's
(tests/test_property.py judges such models against several perturbed dense routes).

The property test runs 60 derandomized examples (profile "opalg"); ``--hypothesis-profile=thorough``
runs 1,000 new ones (about 20 s; all passed when this file was written).

test_batch_of_forces_on_one_state[all active] found a bug (with no passive dof the result took
the states' batch, not the forces'); fixed in ``_hybrid``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.linalg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opalg
from opalg import Joint, Model

from helpers import no_string_evaluated  # noqa: F401  (autouse fixture: no string is ever evaluated)
from helpers import EVIL, assert_close, make_model, rel_err, sblk

EPS = float(np.finfo(float).eps)
LD = np.longdouble
EXTENDED = float(np.finfo(LD).eps) < 1e-18
C_COND = 64.0
C_FWD = 64.0
FACTOR = 10.0
FLOOR = 1e-13
NRHS = 4


# ---------------------------------------------------------------------------
# models, states, masks
# ---------------------------------------------------------------------------
def scaled(model: Model, factors) -> Model:
    """The same mechanism with body k's mass and inertia tensor multiplied by factors[k]
    (mass centre unchanged): mass ratios up to max/min of the factors."""
    inert = [(i.mass * f, np.asarray(i.com), np.asarray(i.I_com) * f)
             for i, f in zip(model.inertias, factors)]
    return Model(model.parents, model.joints, model.placements, inert, model.gravity, model.names)


def build(kind: str, n: int, seed: int, joints: str, ratio: float = 0.0) -> Model:
    """make_model(kind, n, seed, joints), with masses log-uniform over 10^±ratio if ratio > 0."""
    m = make_model(kind, n, seed, joints)
    if ratio:
        m = scaled(m, 10.0 ** np.random.default_rng(500 + seed).uniform(-ratio, ratio, m.n))
    return m


def exact_tau(m: Model, q, qd, qdd, f_ext=None, gravity=True) -> np.ndarray:
    """τ of the drawn q̈: the RNEA in extended precision, rounded to float64 (last-bit correct).

    A float64 τ would share its rounding with bias(q, q̇), which the dense route cancels and the
    recursion does not (tests/test_property.py, ``exact_tau``)."""
    if not EXTENDED:
        return opalg.rnea(m, q, qd, qdd, f_ext=f_ext, gravity=gravity)
    ld = [np.asarray(x).astype(LD) for x in (q, qd, qdd)]
    f = None if f_ext is None else np.asarray(f_ext).astype(LD)
    return np.asarray(opalg.rnea(m, *ld, f_ext=f, gravity=gravity), dtype=float)


def multi_axis_dofs(m: Model) -> list:
    """The dof index ranges of the joints with more than one axis."""
    return [range(sl.start, sl.stop) for sl in m.dof_slice if sl.stop - sl.start > 1]


def masks(m: Model, rng, count: int) -> list:
    """``count`` masks: random per-dof ones (passive fraction 0.2–0.8, never all active), and,
    if the model has a multi-axis joint, one that splits every multi-axis joint (alternating
    passive / active axes, starting with either)."""
    out = []
    multi = multi_axis_dofs(m)
    if multi:
        p = rng.random(m.ndof) < 0.5
        for r in multi:
            start = bool(rng.integers(2))
            for j, i in enumerate(r):
                p[i] = start ^ bool(j % 2)
        out.append(p)
    while len(out) < count:
        p = rng.random(m.ndof) < rng.uniform(0.2, 0.8)
        if not p.any():
            p[rng.integers(m.ndof)] = True
        out.append(p)
    return out


def splits_a_joint(m: Model, p) -> bool:
    return any(0 < p[list(r)].sum() < len(r) for r in multi_axis_dofs(m))


# ---------------------------------------------------------------------------
# the dense route and the yardsticks
# ---------------------------------------------------------------------------
class Dense:
    """ℳ, C (with f_ext: C − ΣJᵀf) and the norms of the terms, from crba and bias."""

    def __init__(self, m, q, qd, f_ext=None, gravity=True):
        self.M = opalg.crba(m, q)
        self.C = opalg.bias(m, q, qd, f_ext=f_ext, gravity=gravity)
        # The terms of C separately — gravity, velocity products, Σ Jᵀ f_ext — so that
        # cancellation between them does not make the yardstick smaller than their rounding.
        Cg = opalg.bias(m, q, np.zeros_like(q), gravity=gravity)
        Cv = opalg.bias(m, q, qd, gravity=False)
        self.C_terms = [Cg, Cv, self.C - Cg - Cv]

    def solve(self, p, tau, qdd):
        """θ̈_p (LU, LAPACK gesv) and τ_a of the partitioned system; rows are right-hand sides."""
        a = ~p
        M = self.M
        rhs = tau[..., p] - self.C[p] - qdd[..., a] @ M[np.ix_(p, a)].T
        x = np.linalg.solve(M[np.ix_(p, p)], rhs.T).T
        return x, self.forward_a(p, x, qdd)

    def forward_a(self, p, x, qdd):
        """τ_a = ℳ_ap θ̈_p + ℳ_aa θ̈_a + C_a for given θ̈_p = x."""
        a = ~p
        M = self.M
        return x @ M[np.ix_(a, p)].T + qdd[..., a] @ M[np.ix_(a, a)].T + self.C[a]

    def kappa_p(self, p, tau, qdd):
        r"""Normwise condition number of θ̈_p, per right-hand side:

        κ_p = ‖ℳ_pp⁻¹‖ (‖ℳ_pp‖‖θ̈_p‖ + ‖τ_p‖ + Σ‖C_p terms‖ + ‖ℳ_pa‖‖θ̈_a‖) / ‖θ̈_p‖ ≥ cond(ℳ_pp).

        The exact solution of (ℳ_pp + δℳ)x = r + δr, with ‖δℳ‖ ≤ ε‖ℳ_pp‖ and ‖δr‖ ≤ ε × the
        sum of the norms of the terms of r = τ_p − C_p − ℳ_paθ̈_a, differs from θ̈_p by at most
        ε κ_p ‖θ̈_p‖ to first order: the accuracy a backward-stable solver can promise."""
        a = ~p
        M = self.M
        Mpp, Mpa = M[np.ix_(p, p)], M[np.ix_(p, a)]
        nrm = lambda v: np.linalg.norm(v, axis=-1)  # noqa: E731
        terms = (np.linalg.norm(Mpp, 2) * nrm(qdd[..., p]) + nrm(tau[..., p])
                 + sum(np.linalg.norm(c[p]) for c in self.C_terms)
                 + (np.linalg.norm(Mpa, 2) * nrm(qdd[..., a]) if a.any() else 0.0))
        return np.linalg.norm(np.linalg.inv(Mpp), 2) * terms / nrm(qdd[..., p])

    def fwd_scale(self, p, x, qdd):
        """Σ of the norms of the terms of τ_a = ℳ_ap x + ℳ_aa θ̈_a + C_a (rounding yardstick)."""
        a = ~p
        M = self.M
        nrm = lambda v: np.linalg.norm(v, axis=-1)  # noqa: E731
        return (np.linalg.norm(M[np.ix_(a, p)], 2) * nrm(x) + np.linalg.norm(M[np.ix_(a, a)], 2)
                * nrm(qdd[..., a]) + sum(np.linalg.norm(c[a]) for c in self.C_terms))


def rows_rel(a, b):
    """Relative 2-norm error per row (right-hand side) of a against b."""
    return np.linalg.norm(a - b, axis=-1) / np.linalg.norm(b, axis=-1)


def check_problem(m, q, qd, qdd, p, f_ext=None, gravity=True, rng=None, label=""):
    """Hybrid vs the dense partitioned solve on NRHS drawn problems; returns the measurements.

    qdd: (NRHS, N) drawn accelerations; τ = exact_tau(q̈).  Asserts
      (1) θ̈_p error (vs the drawn q̈_p) ≤ C_COND κ_p ε;
      (2) θ̈_p error ≤ FACTOR × LU's error + FLOOR (worst of the NRHS problems each);
      (3) τ_a = the forward evaluation ℳ_ap θ̈_p + ℳ_aa θ̈_a + C_a at the returned θ̈_p, to
          C_FWD ε × the norms of its terms (no conditioning enters a forward evaluation);
      (4) the given entries are returned bitwise, and the ignored ones do not matter (junk in
          τ_a and q̈_p gives the same result bit for bit as zeros there).
    """
    rng = np.random.default_rng(0) if rng is None else rng
    a = ~p
    tau = exact_tau(m, q, qd, qdd, f_ext, gravity)
    dn = Dense(m, q, qd, f_ext, gravity)
    junk_tau = np.where(p, tau, 1e3 * rng.normal(size=tau.shape))
    junk_qdd = np.where(p, -1e3 * rng.normal(size=qdd.shape), qdd)
    qh, th = opalg.hybrid(m, q, qd, junk_tau, junk_qdd, p, f_ext=f_ext, gravity=gravity)
    qz, tz = opalg.hybrid(m, q, qd, np.where(p, tau, 0.0), np.where(p, 0.0, qdd), p,
                          f_ext=f_ext, gravity=gravity)
    assert np.array_equal(qh, qz) and np.array_equal(th, tz), f"{label}: ignored entries changed the result"
    assert np.array_equal(qh[..., a], qdd[..., a]), f"{label}: the given q̈_a were not copied"
    assert np.array_equal(th[..., p], tau[..., p]), f"{label}: the given τ_p were not copied"

    x_lu, _ = dn.solve(p, tau, qdd)
    err = rows_rel(qh[..., p], qdd[..., p]).max()
    err_lu = rows_rel(x_lu, qdd[..., p]).max()
    kappa = dn.kappa_p(p, tau, qdd).max()
    cond = np.linalg.cond(dn.M[np.ix_(p, p)])
    assert err <= C_COND * kappa * EPS, (
        f"{label}: θ̈_p error {err:.2e} > {C_COND:g} κ_p ε = {C_COND * kappa * EPS:.2e} "
        f"(cond ℳ_pp {cond:.1e})")
    assert err <= FACTOR * err_lu + FLOOR, (
        f"{label}: θ̈_p error {err:.2e} > {FACTOR:g} × LU error {err_lu:.2e} + {FLOOR:g}")
    fwd = 0.0
    if a.any():
        ta_fwd = dn.forward_a(p, qh[..., p], qdd)
        scale = dn.fwd_scale(p, qh[..., p], qdd)
        fwd = (np.linalg.norm(th[..., a] - ta_fwd, axis=-1) / scale).max()
        assert fwd <= C_FWD * EPS, (
            f"{label}: τ_a is not ℳ_apθ̈_p + ℳ_aaθ̈_a + C_a: {fwd / EPS:.1f} ε > {C_FWD:g} ε")
    return dict(err=err, err_lu=err_lu, kappa=kappa, cond=cond, gamma=err / (kappa * EPS), fwd=fwd / EPS)


# ---------------------------------------------------------------------------
# 1. dense partitioned solve
# ---------------------------------------------------------------------------
# (kind, n, seed, joints, log10 mass ratio half-range): chains and trees, labels in
# topological, random (relabeled) and tip-to-base (jain) order, a forest; every joint kind.
DENSE_CASES = [
    ("chain", 1, 0, "all", 0), ("chain", 3, 1, "all", 0), ("chain", 8, 2, "mixed", 3),
    ("chain", 16, 3, "all", 3), ("chain", 30, 4, "mixed", 0), ("chain", 30, 5, "all", 3),
    ("tree", 5, 6, "all", 0), ("tree", 12, 7, "mixed", 3), ("tree", 30, 8, "all", 0),
    ("relabeled", 8, 9, "all", 3), ("relabeled", 30, 1, "mixed", 3), ("relabeled", 20, 10, "all", 0),
    ("jain-tree", 10, 11, "all", 3), ("jain-chain", 12, 12, "mixed", 0), ("forest", 9, 13, "all", 3),
]


@pytest.mark.parametrize("kind, n, seed, joints, ratio", DENSE_CASES,
                         ids=[f"{c[0]}{c[1]}-{c[3]}-s{c[2]}{'-ratio' if c[4] else ''}" for c in DENSE_CASES])
def test_matches_dense_partitioned_solve(kind, n, seed, joints, ratio):
    """θ̈_p and τ_a equal the dense partitioned solve of crba/bias (within C_COND κ_p ε and
    10x LU's error), per-dof masks that split multi-axis joints included; the four masks
    without / with external forces, with gravity on (masks 0, 1) and off (2, 3)."""
    m = build(kind, n, seed, joints, ratio)
    rng = np.random.default_rng(seed)
    q, qd = rng.normal(size=(2, m.ndof))
    f = rng.normal(size=(m.n, 6))
    ps = masks(m, rng, 4)
    if multi_axis_dofs(m):
        assert splits_a_joint(m, ps[0])
    for i, p in enumerate(ps):
        qdd = rng.normal(size=(NRHS, m.ndof))
        check_problem(m, q, qd, qdd, p, f_ext=f if i % 2 else None, gravity=i < 2, rng=rng,
                      label=f"{kind}{n} seed {seed} mask {p.astype(int)}")


def test_models_cover_what_they_claim():
    """Guard on DENSE_CASES: prismatic, helical and multi-axis joints occur, a relabeled tree
    has parents with larger labels than a child, and the mass ratios reach 1e5."""
    kinds, non_topological, ratio = set(), False, 1.0
    for kind, n, seed, joints, r in DENSE_CASES:
        m = build(kind, n, seed, joints, r)
        for j in m.joints:
            kinds.update(j.kinds)
            kinds.add("multi" if j.ndof > 1 else "single")
        non_topological |= any(par > k for k, par in enumerate(m.parents))
        masses = [float(i.mass) for i in m.inertias]
        ratio = max(ratio, max(masses) / min(masses))
    assert {"R", "P", "H", "multi", "single"} <= kinds, kinds
    assert non_topological
    assert ratio > 1e5, ratio


def spherical_chain(n: int) -> Model:
    """n links of 0.3 m / 1 kg on spherical (XYZ) joints (as in tests/test_exactness.py)."""
    rod = 1.0 * 0.3 ** 2 / 12 * np.diag([0.01, 1.0, 1.0]) + 1e-4 * np.eye(3)
    return opalg.serial_chain(
        [Joint.spherical(name=f"ball{k}") for k in range(n)],
        [(np.eye(3), np.zeros(3) if k == 0 else np.array([0.3, 0, 0])) for k in range(n)],
        [(1.0, np.array([0.15, 0, 0]), rod)] * n)


#: A mask on spherical_chain(3) that splits the middle joint: its x and z axes passive, its y
#: axis (the one that brings x and z together at q_y = π/2) prescribed.
GIMBAL_SPLIT = np.array([1, 0, 0, 1, 0, 1, 1, 1, 0], bool)


@pytest.mark.parametrize("delta", [1e-2, 1e-3, 1e-4, 1e-5, 1e-6])
def test_ill_conditioned_split_mask(delta):
    """A mask that splits a spherical joint near its gimbal lock (x, z passive, y active at
    q_y = π/2 − δ): cond(ℳ_pp) ≈ 0.46/δ² … 10/δ², i.e. 5e5 … 1e15 (4.6e9 at δ = 1e-4).
    θ̈_p is within 20 cond(ℳ_pp) ε (measured ≤ 7.3, LU alike ≤ 5.3), within C_COND κ_p ε,
    within 10x the worse of LU and Cholesky (LAPACK potrs) on the same ℳ_pp, and on average
    within 3x of it; no refusal (the pivots stay above 32 ε of their diagonal down to δ = 1e-6).

    Measured (3 states × 4 right-hand sides, worst per state), recursion / LU:
    δ = 1e-4 (cond 4.6e9, 1.0e11, 4.6e9): 2.0e-6 / 2.3e-6, 1.0e-5 / 4.8e-6, 6.8e-6 / 5.5e-6;
    δ = 1e-5 (cond 4.6e11 …): 7.5e-4 / 1.2e-4 (the largest ratio, 6x), 9.9e-4 / 9.6e-4;
    δ = 1e-6 (cond 4.6e13 …): 6.7e-2 / 4.0e-2 — both have lost all but one digit."""
    m = spherical_chain(3)
    p = GIMBAL_SPLIT
    errs = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        q, qd = rng.uniform(-1, 1, (2, m.ndof))
        qdd = rng.uniform(-1, 1, (NRHS, m.ndof))
        q[4] = np.pi / 2 - delta
        tau = exact_tau(m, q, qd, qdd)
        dn = Dense(m, q, qd)
        qh, th = opalg.hybrid(m, q, qd, tau, qdd, p)
        x_lu, _ = dn.solve(p, tau, qdd)
        a = ~p
        rhs = tau[:, p] - dn.C[p] - qdd[:, a] @ dn.M[np.ix_(p, a)].T
        x_ch = scipy.linalg.cho_solve(scipy.linalg.cho_factor(dn.M[np.ix_(p, p)]), rhs.T).T
        err = rows_rel(qh[:, p], qdd[:, p]).max()
        dense = max(rows_rel(x_lu, qdd[:, p]).max(), rows_rel(x_ch, qdd[:, p]).max())
        kappa = dn.kappa_p(p, tau, qdd).max()
        cond = np.linalg.cond(dn.M[np.ix_(p, p)])
        assert cond > 0.4 / delta ** 2, cond          # the mask really is ill-conditioned
        assert err <= 20 * cond * EPS, (err, cond)
        assert err <= C_COND * kappa * EPS, (err, kappa, cond)
        assert err <= FACTOR * dense + FLOOR, (err, dense, cond)
        errs.append((err, dense))
    assert np.mean([e[0] for e in errs]) <= 3 * np.mean([e[1] for e in errs]) + FLOOR, errs


# ---------------------------------------------------------------------------
# 2. limits: all passive = ABA, all active = RNEA
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind, n, seed", [("tree", 7, 0), ("relabeled", 9, 1), ("chain", 5, 2)])
@pytest.mark.parametrize("forces, gravity", [(False, True), (True, True), (True, False), (False, False)])
def test_limits_aba_and_rnea(kind, n, seed, forces, gravity):
    """Every dof passive: opalg.aba, to 1e-14 relative (it is the same arithmetic: measured
    identical bit for bit); every dof active: opalg.rnea to C_FWD ε (a different forward
    evaluation — T from the hinge forces P_h α + z with P_h = R, the composite inertia — against
    Newton–Euler; measured ≤ 3e-16 relative)."""
    m = make_model(kind, n, seed, "all")
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.normal(size=(3, m.ndof))
    f = rng.normal(size=(m.n, 6)) if forces else None
    tau = opalg.rnea(m, q, qd, qdd, f_ext=f, gravity=gravity)
    junk = 1e3 * rng.normal(size=m.ndof)
    allp = np.ones(m.ndof, bool)
    qh, th = opalg.hybrid(m, q, qd, tau, junk, allp, f_ext=f, gravity=gravity)
    assert_close(qh, opalg.aba(m, q, qd, tau, f_ext=f, gravity=gravity), 1e-14, "all passive vs aba")
    assert np.array_equal(th, tau)
    qh, th = opalg.hybrid(m, q, qd, junk, qdd, ~allp, f_ext=f, gravity=gravity)
    assert np.array_equal(qh, qdd)
    assert_close(th, tau, C_FWD * EPS, "all active vs rnea")


# ---------------------------------------------------------------------------
# 3. round trip with the RNEA
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind, n, seed, joints", [
    ("chain", 6, 20, "all"), ("tree", 10, 21, "all"), ("relabeled", 10, 22, "mixed"),
    ("jain-tree", 8, 23, "all"), ("forest", 12, 24, "single")])
def test_round_trip_with_rnea(kind, n, seed, joints):
    """τ = rnea(q, q̇, q̈) (float64, with and without f_ext); hybrid with τ_p and q̈_a gives back
    q̈ (θ̈_p to C_COND κ_p ε: the float64 τ_p is exact to ε‖terms‖, which κ_p accounts for) and
    τ (τ_a to C_FWD ε of the norms of its terms + ‖ℳ_ap‖ times the θ̈_p error allowance)."""
    m = make_model(kind, n, seed, joints)
    rng = np.random.default_rng(seed)
    for p in masks(m, rng, 3):
        q, qd, qdd = rng.normal(size=(3, m.ndof))
        for f in (None, rng.normal(size=(m.n, 6))):
            tau = opalg.rnea(m, q, qd, qdd, f_ext=f)
            qh, th = opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=f)
            dn = Dense(m, q, qd, f)
            kappa = dn.kappa_p(p, tau, qdd)
            err = rel_err(qh[p], qdd[p])
            assert err <= C_COND * kappa * EPS, (err, kappa)
            a = ~p
            if a.any():
                allow = (C_FWD * EPS * dn.fwd_scale(p, qdd[p], qdd)
                         + np.linalg.norm(dn.M[np.ix_(a, p)], 2) * C_COND * kappa * EPS * np.linalg.norm(qdd[p]))
                assert np.linalg.norm(th[a] - tau[a]) <= allow, (np.linalg.norm(th[a] - tau[a]), allow)
            assert np.array_equal(qh[~p], qdd[~p]) and np.array_equal(th[p], tau[p])


# ---------------------------------------------------------------------------
# 4. G1 operator identities (dense)
# ---------------------------------------------------------------------------
IDENTITY_CASES = [("chain", 5, 30), ("relabeled", 7, 31), ("jain-tree", 6, 32), ("forest", 7, 33),
                  ("tree", 9, 34), ("chain", 8, 35), ("relabeled", 10, 36), ("jain-chain", 6, 37)]


def _subtrees(m):
    """{k: the set of bodies in the subtree of k} from the parent array."""
    sub = {k: {k} for k in range(m.n)}
    for k in reversed(m.order):
        if m.parents[k] != -1:
            sub[m.parents[k]] |= sub[k]
    return sub


def _ops_case(kind, n, seed):
    """A model, a state and a mask with (pitfall 10) a subtree of >= 2 bodies that is all
    active, and passive dofs elsewhere, one multi-axis joint split where there is one."""
    m = make_model(kind, n, seed, "all")
    rng = np.random.default_rng(seed)
    q, qd = rng.normal(size=(2, m.ndof))
    p = masks(m, rng, 1)[0]
    sub = _subtrees(m)
    k = next(k for k in rng.permutation(m.n) if 2 <= len(sub[k]) < m.n)
    for j in sub[k]:
        p[m.dof_slice[j]] = False
    if not p.any():   # make the first dof outside that subtree passive
        p[next(m.dof_slice[j].start for j in range(m.n) if j not in sub[k])] = True
    return m, q, qd, p


@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
def test_G1_operator_identities(kind, n, seed):
    """G1 with dense matrices: ℳ_pp (crba block) = L D_h L* = mass_matrix_pp; ℳ_pp⁻¹ (LAPACK
    inverse of the crba block) = L⁻¹* D_h⁻¹ L⁻¹ = mass_matrix_pp_inv; L_inv = L⁻¹; ψ_h (the SPO)
    = (I − ℰφ τ̄_h)⁻¹ (dense inverse) with ℰψ_h = ℰφ τ̄_h; P_h = M + ℰφ τ̄_h P_h ℰφ*; D_h = H_p P_h H_p*;
    D_h⁻¹ and G_h (from the one-axis-at-a-time pivots) = inv(D_h) and P_h H_p* D_h⁻¹; τ̄_h a
    projector with H_p τ̄_h = 0; P_h⁺ = τ̄_h P_h; K_h = ℰφ G_h.

    Tolerance 1e-12 relative for the products (O(n) 6x6 products of O(1) entries; measured
    ≤ 6.6e-16 over the 8 cases), 20 cond ε for the inverses (a dense inverse is itself off by
    ≈ cond·ε; measured ≤ 0.02 of that)."""
    m, q, qd, p = _ops_case(kind, n, seed)
    ops = opalg.operators(m, q, qd, passive=p)
    I6, Np = np.eye(6 * m.n), int(p.sum())
    E_phi, M, Hp, Ha = (getattr(ops, nm).dense() for nm in ("E_phi", "M", "H_p", "H_a"))
    P, Pp, D, Dinv, G, tb, K, E_psi, psi, L, Linv = (getattr(ops, nm).dense() for nm in (
        "P", "P_plus", "D", "Dinv", "G", "tau_bar", "K", "E_psi", "psi", "L", "L_inv"))
    H = opalg.operators(m, q).H.dense()
    assert np.array_equal(Hp, H[p]) and np.array_equal(Ha, H[~p])
    Mq = opalg.crba(m, q)
    Mpp = Mq[np.ix_(p, p)]
    cond = np.linalg.cond(Mpp)
    tol_inv = 20 * cond * EPS
    assert_close(L @ D @ L.T, Mpp, 1e-12, "ℳ_pp = L D_h L*")
    assert_close(ops.mass_matrix_pp.dense(), Mpp, 1e-12, "mass_matrix_pp = crba_pp")
    Mpp_inv = np.linalg.inv(Mpp)
    assert_close(Linv.T @ Dinv @ Linv, Mpp_inv, tol_inv, "ℳ_pp⁻¹ = L⁻¹* D_h⁻¹ L⁻¹")
    assert_close(ops.mass_matrix_pp_inv.dense(), Mpp_inv, tol_inv, "mass_matrix_pp_inv")
    assert_close(Linv @ L, np.eye(Np), 1e-12, "L_inv L = I", scale=1.0)
    assert_close(psi, np.linalg.inv(I6 - E_phi @ tb), 1e-12, "ψ_h = (I − ℰφ τ̄_h)⁻¹")
    assert_close(E_psi, E_phi @ tb, 1e-12, "ℰψ_h = ℰφ τ̄_h")
    assert_close(P, M + E_phi @ tb @ P @ E_phi.T, 1e-12, "P_h = M + ℰφ τ̄_h P_h ℰφ*")
    assert_close(D, Hp @ P @ Hp.T, 1e-12, "D_h = H_p P_h H_p*")
    assert_close(Dinv, np.linalg.inv(D), 20 * np.linalg.cond(D) * EPS, "D_h⁻¹")
    assert_close(G, P @ Hp.T @ np.linalg.inv(D), 1e-12, "G_h = P_h H_p* D_h⁻¹")
    assert_close(tb @ tb, tb, 1e-12, "τ̄_h² = τ̄_h")
    assert_close(Hp @ tb, 0 * Hp, 1e-12, "H_p τ̄_h = 0", scale=np.linalg.norm(Hp) * np.linalg.norm(tb))
    assert_close(Pp, tb @ P, 1e-12, "P_h⁺ = τ̄_h P_h")
    assert_close(K, E_phi @ G, 1e-12, "K_h = ℰφ G_h")
    with pytest.raises(AttributeError, match="mass_matrix_pp_inv"):
        ops.mass_matrix_inv


@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
def test_pitfall_10_bodies_without_passive_dofs(kind, n, seed):
    """A body with no passive dof: τ̄_h(k) = I, G_h(k) empty, P_h⁺(k) = P_h(k) — its articulated
    inertia passes inward unprojected; if its whole subtree is active, P_h(k) is the composite
    inertia R(k) (D1: R = M + ℰφ R ℰφ*, from the CRBA's operators), the body moves rigidly with
    its prescribed joints.  Bodies with a passive dof have τ̄_h(k) ≠ I."""
    m, q, qd, p = _ops_case(kind, n, seed)
    ops = opalg.operators(m, q, passive=p)
    art = opalg.articulated(m, q, passive=p)
    R = opalg.operators(m, q).R
    sub = _subtrees(m)
    seen_none = seen_rigid = False
    for k, sl in enumerate(m.dof_slice):
        assert art.axes[k] == tuple(i for i in range(sl.stop - sl.start) if p[sl.start + i])
        tb, P, Pp = ops.tau_bar.block(k, k), ops.P.block(k, k), ops.P_plus.block(k, k)
        if p[sl].any():
            assert not np.allclose(tb, np.eye(6))
            continue
        seen_none = True
        assert np.array_equal(tb, np.eye(6)), k
        assert np.array_equal(Pp, P), k
        assert art.G[k].shape[-1] == 0 and art.D[k].shape[-1] == 0
        if not any(p[m.dof_slice[j]].any() for j in sub[k]):
            seen_rigid = True
            assert_close(P, R.block(k, k), 1e-12, f"P_h({k}) = R({k}) for an all-active subtree")
    assert seen_none and seen_rigid


@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
def test_hybrid_Omega_and_Upsilon(kind, n, seed):
    """Ω_h = ψ_h* H_p* D_h⁻¹ H_p ψ_h (dense ψ_h) = φ* H_p* ℳ_pp⁻¹ H_p φ (the F1 analogue, with φ a
    dense inverse of I − ℰφ and ℳ_pp⁻¹ a LAPACK inverse of the crba block); Υ_h(k) = Ω_h(k, k)
    (the F2 recursion with H_p).  Tolerance 20 cond(ℳ_pp) ε relative to ‖Ω_h‖ (ℳ_pp⁻¹ inside)."""
    m, q, qd, p = _ops_case(kind, n, seed)
    ops = opalg.operators(m, q, passive=p)
    I6 = np.eye(6 * m.n)
    phi = np.linalg.inv(I6 - ops.E_phi.dense())
    psi = np.linalg.inv(I6 - ops.E_psi.dense())
    Hp, Dinv = ops.H_p.dense(), ops.Dinv.dense()
    Mpp = opalg.crba(m, q)[np.ix_(p, p)]
    tol = 20 * np.linalg.cond(Mpp) * EPS
    Om_f1 = phi.T @ Hp.T @ np.linalg.inv(Mpp) @ Hp @ phi
    Om = psi.T @ Hp.T @ Dinv @ Hp @ psi
    assert_close(Om, Om_f1, tol, "ψ_h*H_p*D_h⁻¹H_pψ_h = φ*H_p*ℳ_pp⁻¹H_pφ")
    assert_close(ops.Omega.dense(), Om_f1, tol, "ops.Omega (hybrid)")
    Y = ops.Upsilon.dense()
    for k in range(m.n):
        s = slice(6 * k, 6 * k + 6)
        assert_close(Y[s, s], Om_f1[s, s], tol, f"Υ_h({k}) = Ω_h({k},{k})", scale=np.linalg.norm(Om_f1))


@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
@pytest.mark.parametrize("forces", [False, True])
def test_hybrid_output_equals_the_operator_expression(kind, n, seed, forces):
    """θ̈_p = ℳ_pp⁻¹[T_p − H_pφ(Mφ*a′ + b)], a′ = a + H_a*θ̈_a and T_a = H_aφ(Mα + b),
    α = φ*(H_p*θ̈_p + a′) (G1/G2 in operator form; b − f_ext with external forces), with dense φ,
    M, H_p, H_a, the a and b of ops (with qd) and a LAPACK solve with the crba block.
    Tolerances: θ̈_p C_COND κ_p ε; T_a C_FWD ε × (‖H_aφ‖(‖M‖‖α‖ + ‖b‖))."""
    m, q, qd, p = _ops_case(kind, n, seed)
    rng = np.random.default_rng(seed + 1)
    qdd, tau = rng.normal(size=(2, m.ndof))
    f = rng.normal(size=(m.n, 6)) if forces else None
    ops = opalg.operators(m, q, qd, passive=p)
    I6 = np.eye(6 * m.n)
    phi = np.linalg.inv(I6 - ops.E_phi.dense())
    M, Hp, Ha = ops.M.dense(), ops.H_p.dense(), ops.H_a.dense()
    b = ops.b - (0 if f is None else f.ravel())
    a_prime = ops.a + Ha.T @ qdd[~p]
    Mpp = opalg.crba(m, q)[np.ix_(p, p)]
    x = np.linalg.solve(Mpp, tau[p] - Hp @ phi @ (M @ phi.T @ a_prime + b))
    alpha = phi.T @ (Hp.T @ x + a_prime)
    Ta = Ha @ phi @ (M @ alpha + b)
    qh, th = opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=f)
    dn = Dense(m, q, qd, f)
    kappa = dn.kappa_p(p, tau, qdd)
    assert rel_err(qh[p], x) <= C_COND * kappa * EPS
    scale = np.linalg.norm(Ha @ phi, 2) * (np.linalg.norm(M, 2) * np.linalg.norm(alpha) + np.linalg.norm(b))
    # T_a also inherits the difference of the two θ̈_p through ℳ_ap = H_aφMφ*H_p*
    Map = Ha @ phi @ M @ phi.T @ Hp.T
    allow = C_FWD * EPS * scale + np.linalg.norm(Map, 2) * C_COND * kappa * EPS * np.linalg.norm(x)
    assert np.linalg.norm(th[~p] - Ta) <= allow


@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES[:4])
def test_innovations_passes_hybrid_mode_columns(kind, n, seed):
    """innovations_passes in hybrid mode with r = 3 right-hand sides at once and a = b = 0:
    θ̈_p = ℳ_pp⁻¹(T_p − ℳ_pa θ̈_a), T_a = ℳ_ap θ̈_p + ℳ_aa θ̈_a (dense crba blocks) per column;
    keep=True returns the same bits as keep=False, and its hinge forces f(k) (E9d) give the
    active forces in their active rows, H_a(k) f(k) = T_a(k), and the given forces in their
    passive rows, H_p(k) f(k) = T_p(k).  Tolerances: θ̈_p C_COND ε κ_p (the κ_p of Dense without
    Coriolis terms), T_a C_FWD ε × the norms of its terms, the hinge-force rows C_FWD ε ‖f‖
    (measured ≤ 2.3e-16 ‖f‖)."""
    m, q, qd, p = _ops_case(kind, n, seed)
    rng = np.random.default_rng(seed + 2)
    a = ~p
    Tp = rng.normal(size=(int(p.sum()), 3))
    qa = rng.normal(size=(int(a.sum()), 3))
    art = opalg.articulated(m, q, passive=p)
    res = opalg.innovations_passes(m, art, Tp, qdd_a=qa)
    kept = opalg.innovations_passes(m, art, Tp, keep=True, qdd_a=qa)
    assert np.array_equal(res.qdd, kept.qdd) and np.array_equal(res.tau, kept.tau)
    assert res.qdd.shape == (p.sum(), 3) and res.tau.shape == (a.sum(), 3)
    Mq = opalg.crba(m, q)
    Mpp, Mpa, Maa = Mq[np.ix_(p, p)], Mq[np.ix_(p, a)], Mq[np.ix_(a, a)]
    x = np.linalg.solve(Mpp, Tp - Mpa @ qa)
    terms = (np.linalg.norm(Tp) + np.linalg.norm(Mpa, 2) * np.linalg.norm(qa)
             + np.linalg.norm(Mpp, 2) * np.linalg.norm(x))
    assert np.linalg.norm(res.qdd - x) <= C_COND * EPS * np.linalg.norm(np.linalg.inv(Mpp), 2) * terms
    Ta = Mpa.T @ res.qdd + Maa @ qa
    assert np.linalg.norm(res.tau - Ta) <= C_FWD * EPS * (np.linalg.norm(Mpa, 2) * np.linalg.norm(res.qdd)
                                                         + np.linalg.norm(Maa, 2) * np.linalg.norm(qa))
    S = opalg.operators(m, q).H.dense().T          # columns: every axis, in dof order
    fs = np.concatenate([kept.f[k] for k in range(m.n)])     # (6n, 3), label order
    T_all = np.concatenate([S[sblk(k), m.dof_slice[k]].T @ fs[sblk(k)] for k in range(m.n)])
    assert np.linalg.norm(T_all[a] - res.tau) <= C_FWD * EPS * np.linalg.norm(fs)
    assert np.linalg.norm(T_all[p] - Tp) <= C_FWD * EPS * np.linalg.norm(fs)


# ---------------------------------------------------------------------------
# 5. reduced inertia
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind, n, seed, ratio", [("chain", 8, 40, 0), ("relabeled", 12, 41, 3),
                                                  ("tree", 20, 42, 0), ("jain-tree", 9, 43, 3)])
def test_reduced_inertia(kind, n, seed, ratio):
    """((ℳ⁻¹)_aa)⁻¹ = ℳ_aa − ℳ_apℳ_pp⁻¹ℳ_pa: against the dense Schur complement of crba
    (tolerance 20 cond(ℳ_pp) ε relative: the Schur complement's own rounding) and against
    inv((ℳ⁻¹)_aa) (20 cond(ℳ) ε); exactly symmetric and positive definite; a (4, 3) batch
    equals the per-state calls (1e-13, see test_batch_equals_loop); all active: ℳ; all passive:
    an empty (0, 0) matrix."""
    m = build(kind, n, seed, "all", ratio)
    rng = np.random.default_rng(seed)
    qs = rng.normal(size=(4, 3, m.ndof))
    for p in masks(m, rng, 3):
        if p.all():
            continue
        a = ~p
        S = opalg.reduced_inertia(m, qs, p)
        assert S.shape == (4, 3, a.sum(), a.sum())
        for i in range(4):
            for j in range(3):
                Mq = opalg.crba(m, qs[i, j])
                Mpp = Mq[np.ix_(p, p)]
                schur = Mq[np.ix_(a, a)] - Mq[np.ix_(a, p)] @ np.linalg.solve(Mpp, Mq[np.ix_(p, a)])
                assert_close(S[i, j], schur, 20 * np.linalg.cond(Mpp) * EPS + 1e-14, "Schur complement")
                alt = np.linalg.inv(np.linalg.inv(Mq)[np.ix_(a, a)])
                assert_close(S[i, j], alt, 20 * np.linalg.cond(Mq) * EPS + 1e-14, "inv((ℳ⁻¹)_aa)")
                assert np.array_equal(S[i, j], S[i, j].T)
                assert np.linalg.eigvalsh(S[i, j]).min() > 0
                assert_close(opalg.reduced_inertia(m, qs[i, j], p), S[i, j], 1e-13, "batch vs single")
    q = qs[0, 0]
    assert_close(opalg.reduced_inertia(m, q, np.zeros(m.ndof, bool)), opalg.crba(m, q), 1e-13, "all active")
    assert opalg.reduced_inertia(m, q, np.ones(m.ndof, bool)).shape == (0, 0)


# ---------------------------------------------------------------------------
# 6. batch vs loop
# ---------------------------------------------------------------------------
def _pair_err(a, b, a1, b1):
    return np.linalg.norm(np.r_[a - a1, b - b1]) / np.linalg.norm(np.r_[a1, b1])


def test_batch_equals_loop():
    """A (4, 3) batch of states and external forces equals the per-state calls to 1e-13 relative.

    Both run the same arithmetic per state; only the summation order inside the stacked 6x6
    products can differ (numpy's batched matmul vs the single-matrix kernels): differences of
    a few ε per product, which the passes amplify by at most cond(ℳ_pp) (< 1e5 here, asserted)
    and in practice far less — measured 2.6e-15 at most (cond 2.8e4).  1e-13 is 40x that; a
    bug that mixes states or broadcasts wrongly gives O(1) differences.
    Also: one state with a batch of forces, and broadcasting of τ / q̈ against q."""
    m = make_model("relabeled", 8, 50, "all")
    rng = np.random.default_rng(50)
    p = masks(m, rng, 1)[0]
    q, qd, qdd, tau = rng.normal(size=(4, 4, 3, m.ndof))
    f = rng.normal(size=(4, 3, m.n, 6))
    qh, th = opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=f)
    assert qh.shape == th.shape == (4, 3, m.ndof)
    for i in range(4):
        for j in range(3):
            assert np.linalg.cond(opalg.crba(m, q[i, j])[np.ix_(p, p)]) < 1e5
            a1, b1 = opalg.hybrid(m, q[i, j], qd[i, j], tau[i, j], qdd[i, j], p, f_ext=f[i, j])
            assert _pair_err(qh[i, j], th[i, j], a1, b1) <= 1e-13, (i, j)
    # a batch of forces on one state, and one τ / q̈ broadcast against a batch of states
    qf, tf = opalg.hybrid(m, q[0, 0], qd[0, 0], tau[0, 0], qdd[0, 0], p, f_ext=f[0])
    assert qf.shape == (3, m.ndof)
    for j in range(3):
        a1, b1 = opalg.hybrid(m, q[0, 0], qd[0, 0], tau[0, 0], qdd[0, 0], p, f_ext=f[0, j])
        assert _pair_err(qf[j], tf[j], a1, b1) <= 1e-13
    qb, tb_ = opalg.hybrid(m, q[0], qd[0], tau[0, 0], qdd[0, 0], p)
    for j in range(3):
        a1, b1 = opalg.hybrid(m, q[0, j], qd[0, j], tau[0, 0], qdd[0, 0], p)
        assert _pair_err(qb[j], tb_[j], a1, b1) <= 1e-13


@pytest.mark.parametrize("passive", ["mixed", "all passive", "all active"])
def test_batch_of_forces_on_one_state(passive):
    """One state, a batch of 3 external forces: the result has the forces' batch shape and
    each entry equals the call with that force — whatever the mask."""
    m = make_model("tree", 5, 51, "all")
    rng = np.random.default_rng(51)
    q, qd, qdd, tau = rng.normal(size=(4, m.ndof))
    f = rng.normal(size=(3, m.n, 6))
    p = {"mixed": np.arange(m.ndof) % 2 == 0, "all active": np.zeros(m.ndof, bool),
         "all passive": np.ones(m.ndof, bool)}[passive]
    qf, tf = opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=f)
    assert qf.shape == tf.shape == (3, m.ndof)
    for j in range(3):
        a1, b1 = opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=f[j])
        assert _pair_err(qf[j], tf[j], a1, b1) <= 1e-13


def test_batch_beyond_the_chunk_size():
    """1,100 states (past the 1,024-state chunking of the recursions) with a batch of forces:
    the states on both sides of the chunk boundary, and every 25th, equal the single calls
    (1e-13 as above; measured ≤ 4e-15), and the batched θ̈_p solve the dense systems."""
    m = make_model("chain", 3, 52, "all")
    rng = np.random.default_rng(52)
    q, qd, qdd, tau = rng.normal(size=(4, 1100, m.ndof))
    f = rng.normal(size=(1100, m.n, 6))
    p = np.arange(m.ndof) % 2 == 0
    qh, th = opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=f)
    assert qh.shape == (1100, m.ndof)
    for i in sorted(set(range(0, 1100, 25)) | set(range(1018, 1030)) | {1099}):
        a1, b1 = opalg.hybrid(m, q[i], qd[i], tau[i], qdd[i], p, f_ext=f[i])
        assert _pair_err(qh[i], th[i], a1, b1) <= 1e-13, i
    M = opalg.crba(m, q)
    C = opalg.bias(m, q, qd, f_ext=f)
    a = ~p
    rhs = tau[:, p] - C[:, p] - np.einsum("bij,bj->bi", M[:, p][:, :, a], qdd[:, a])
    x = np.linalg.solve(M[:, p][:, :, p], rhs[..., None])[..., 0]
    err = rows_rel(qh[:, p], x)
    cond = np.linalg.cond(M[:, p][:, :, p])
    assert np.all(err <= 100 * cond * EPS + FLOOR), err.max()


# ---------------------------------------------------------------------------
# 7. sympy: exact on a 2-link arm (Acrobot, Pendubot)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["acrobot", "pendubot"])
def test_sympy_two_link_arm_exact(which):
    """A 2-link planar arm with symbolic lengths, masses, inertias, gravity, q, q̇, τ and q̈:
    opalg.hybrid with joint 1 passive (Acrobot) or joint 2 passive (Pendubot) equals the
    partitioned solve of the textbook Lagrangian (Spong: d11, d12, d22, h = −m2 l1 lc2 sin q2,
    the gravity terms φ1, φ2; lc = L/2, inertias about the mass centres) — simplified to exactly
    zero; crba/bias of the same model agree with the closed form too (a check of the reference),
    and so does the reduced inertia d_aa − d_ap²/d_pp.  Measured: 2.8 s (Acrobot), 0.6 s (Pendubot)."""
    import sympy as sp
    t0 = time.perf_counter()
    q1, q2, u1, u2, t1, t2, a1, a2 = sp.symbols("q1 q2 u1 u2 t1 t2 a1 a2")
    L1, L2, m1, m2, I1, I2, g = sp.symbols("L1 L2 m1 m2 I1 I2 g", positive=True)
    arm = opalg.planar_arm([L1, L2], [m1, m2], [I1, I2], gravity=(0, -g, 0))
    q, qd = np.array([q1, q2], dtype=object), np.array([u1, u2], dtype=object)
    tau, qdd = np.array([t1, t2], dtype=object), np.array([a1, a2], dtype=object)
    lc1, lc2 = L1 / 2, L2 / 2
    d11 = m1 * lc1 ** 2 + m2 * (L1 ** 2 + lc2 ** 2 + 2 * L1 * lc2 * sp.cos(q2)) + I1 + I2
    d12 = m2 * (lc2 ** 2 + L1 * lc2 * sp.cos(q2)) + I2
    d22 = m2 * lc2 ** 2 + I2
    h = -m2 * L1 * lc2 * sp.sin(q2)
    C1 = h * u2 ** 2 + 2 * h * u1 * u2 + (m1 * lc1 + m2 * L1) * g * sp.cos(q1) + m2 * lc2 * g * sp.cos(q1 + q2)
    C2 = -h * u1 ** 2 + m2 * lc2 * g * sp.cos(q1 + q2)

    s1, c1, s2, c2 = sp.symbols("s1 c1 s2 c2")

    def zero(e):
        """Exactly zero as a function of q: sin/cos of q1, q2 become s_i, c_i, and the numerator
        reduced modulo s_i² + c_i² − 1 (a basis of the coordinate ring: c_i^k, s_i c_i^k)
        must vanish identically — a decision procedure, unlike simplify()."""
        e = sp.sympify(e)
        # opalg's constant matrices are float arrays, so coefficients 1.0, 0.5, 0.25 appear:
        # replace each Float by the exact rational of its binary value (a rounded coefficient,
        # e.g. 1/3 as 0.333…, would then fail to cancel).
        e = e.xreplace({x: sp.Rational(float(x)) for x in e.atoms(sp.Float)})
        e = sp.expand_trig(e).subs({sp.sin(q1): s1, sp.cos(q1): c1, sp.sin(q2): s2, sp.cos(q2): c2})
        assert not e.has(sp.sin, sp.cos), e
        num = sp.expand(sp.fraction(sp.together(e))[0])
        for s, c in ((s1, c1), (s2, c2)):
            num = sp.rem(num, s ** 2 + c ** 2 - 1, s)
        return sp.expand(num) == 0

    # the decision procedure can say no: a Pythagorean zero is zero, a cos² term is not
    assert zero(m1 * (sp.sin(q1) ** 2 + sp.cos(q1) ** 2 - 1)) and not zero(g * sp.cos(q2) ** 2)

    Mq, C = opalg.crba(arm, q), opalg.bias(arm, q, qd)
    assert all(zero(x - y) for x, y in zip([Mq[0, 0], Mq[0, 1], Mq[1, 1], C[0], C[1]],
                                           [d11, d12, d22, C1, C2]))
    if which == "acrobot":
        p = np.array([True, False])
        x = (t1 - C1 - d12 * a2) / d11                     # θ̈_1
        ta = d12 * x + d22 * a2 + C2                       # τ_2
        given = (a2, t1)
    else:
        p = np.array([False, True])
        x = (t2 - C2 - d12 * a1) / d22                     # θ̈_2
        ta = d11 * a1 + d12 * x + C1                       # τ_1
        given = (a1, t2)
    qh, th = opalg.hybrid(arm, q, qd, tau, qdd, p)
    ip, ia = int(np.flatnonzero(p)[0]), int(np.flatnonzero(~p)[0])
    assert zero(qh[ip] - x), qh[ip]
    assert zero(th[ia] - ta), th[ia]
    assert sp.sympify(qh[ia]) == given[0] and sp.sympify(th[ip]) == given[1]
    # and the reduced inertia of the single actuator: d_aa − d_ap² / d_pp
    S = opalg.reduced_inertia(arm, q, p)
    ref = (d22 - d12 ** 2 / d11) if which == "acrobot" else (d11 - d12 ** 2 / d22)
    assert S.shape == (1, 1) and zero(S[0, 0] - ref)
    assert time.perf_counter() - t0 < 10, "the symbolic hybrid call (or the check) became slow"


# ---------------------------------------------------------------------------
# 8. errors
# ---------------------------------------------------------------------------
def _small():
    m = opalg.random_model(3, "chain", seed=0)        # dofs (1, 3, 1): a 3-axis joint in the middle
    assert m.ndof == 5
    return m


BAD_MASKS = [
    (np.ones(4, bool), r"passive has shape \(4,\), expected \(5,\)"),
    (np.ones(6, bool), r"passive has shape \(6,\), expected \(5,\)"),
    (np.ones((1, 5), bool), r"passive has shape \(1, 5\), expected \(5,\)"),
    ([[True]] * 5, r"passive has shape \(5, 1\), expected \(5,\)"),
    (np.array(True), r"passive has shape \(\), expected \(5,\)"),
    (None, r"passive has shape \(\), expected \(5,\)"),
    (np.ones(5), r"passive must hold booleans .*entry 0 is 1\.0"),
    ([1.0, 0.0, 1.0, 0.0, 1.0], r"passive must hold booleans .*entry 0 is 1\.0"),
    ([True, False, True, 0.0, True], r"passive must hold booleans .*entry 3 is 0\.0"),
    (np.ones(5, int), r"passive must hold booleans .*entry 0 is 1"),
    ([1, 0, 1, 0, 1], r"passive must hold booleans .*entry 0 is 1"),
    ([True, False, True, False, 2], r"passive must hold booleans .*entry 4 is 2"),
    ([True, False, True, False, None], r"passive must hold booleans .*entry 4 is None"),
    ("TFTFT", r"passive must be a boolean mask .*got the string 'TFTFT'"),
    (np.array(["True"] * 5), r"passive must be a boolean mask .*got the string"),
    (["True", "False", "True", "False", "True"], r"passive must hold booleans .*entry 0 is 'True'"),
    (EVIL, r"passive must be a boolean mask .*got the string"),
    ([EVIL] * 5, r"passive must hold booleans .*entry 0 is"),
]


@pytest.mark.parametrize("bad, match", BAD_MASKS, ids=[f"mask{i}" for i in range(len(BAD_MASKS))])
def test_bad_masks_are_state_errors_naming_passive(bad, match):
    """Wrong length, 2-D, 0-d, floats, ints, None, strings (never evaluated: the autouse
    no_string_evaluated fixture): a StateError naming ``passive`` from every entry point."""
    m = _small()
    z = np.zeros(m.ndof)
    calls = [("hybrid", lambda: opalg.hybrid(m, z, z, z, z, bad)),
             ("reduced_inertia", lambda: opalg.reduced_inertia(m, z, bad)),
             ("operators", lambda: opalg.operators(m, z, passive=bad)),
             ("articulated", lambda: opalg.articulated(m, z, passive=bad))]
    for name, call in calls:
        if bad is None and name in ("operators", "articulated"):
            continue   # passive=None is their documented default (every dof passive)
        with pytest.raises(opalg.StateError, match=match):
            call()


def test_good_mask_spellings_are_accepted():
    """A tuple or list of bools, a bool object array and np.bool_ entries are the same mask."""
    m = _small()
    rng = np.random.default_rng(3)
    q, qd, qdd, tau = rng.normal(size=(4, m.ndof))
    p = np.array([True, False, True, True, False])
    ref = opalg.hybrid(m, q, qd, tau, qdd, p)
    for spelling in (tuple(p.tolist()), p.tolist(), p.astype(object), [np.bool_(x) for x in p]):
        out = opalg.hybrid(m, q, qd, tau, qdd, spelling)
        assert np.array_equal(out[0], ref[0]) and np.array_equal(out[1], ref[1])


E3, Z3 = np.eye(3), np.zeros(3)


def _spin_slide():
    """A massless body on a revolute z axis carrying a 2 kg point mass on a z slide: the spin
    axis passes through the only mass, so it moves no mass at any q (ℳ = diag(0, 2))."""
    return Model([-1, 0], [Joint("R", [0, 0, 1.0], name="spin"), Joint("P", [0, 0, 1.0], name="slide")],
                 [(E3, Z3)] * 2, [(0.0, Z3, np.zeros((3, 3))), (2.0, Z3, np.zeros((3, 3)))],
                 allow_massless=True)


def test_passive_axis_moving_no_mass_is_a_model_error():
    """ℳ_pp singular because a passive axis moves no mass: ModelError naming body, joint, axis.
    (A massless *tip* body cannot even be built: the constructor refuses a joint whose whole
    subtree is massless, naming the body.)"""
    m = _spin_slide()
    q, qd = np.array([0.4, 0.7]), np.array([0.3, -0.2])
    with pytest.raises(opalg.ModelError, match=r"body 0 \(body0\), joint spin, axis 0: moves no mass"):
        opalg.hybrid(m, q, qd, np.zeros(2), np.zeros(2), [True, False])
    with pytest.raises(opalg.ModelError, match=r"body 0 \(body0\), joint spin, axis 0: moves no mass"):
        opalg.reduced_inertia(m, q, [True, True])
    # the same on a body further out: a massive base link, then the spin / slide pair
    base = (1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.1, 0.2, 0.25]))
    m3 = Model([-1, 0, 1], [Joint("R", [1.0, 0, 0], name="shoulder"), Joint("R", [0, 0, 1.0], name="spin"),
                            Joint("P", [0, 0, 1.0], name="slide")],
               [(E3, Z3), (E3, np.array([0.3, 0, 0])), (E3, Z3)],
               [base, (0.0, Z3, np.zeros((3, 3))), (2.0, Z3, np.zeros((3, 3)))], allow_massless=True)
    with pytest.raises(opalg.ModelError, match=r"body 1 \(body1\), joint spin, axis 0: moves no mass"):
        opalg.hybrid(m3, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), [False, True, True])
    with pytest.raises(opalg.ModelError, match=r"body 1 \(body1\).*subtree is massless"):
        Model([-1, 0], [Joint("R", [1.0, 0, 0]), Joint("R", [0, 0, 1.0])], [(E3, Z3)] * 2,
              [base, (0.0, Z3, np.zeros((3, 3)))], allow_massless=True)


def test_active_axis_moving_no_mass_is_fine():
    """The same spin axis *active* (prescribed): ℳ_pp = [2] is regular, the spin torque is 0
    for any prescribed spin acceleration and rate, and the point mass falls freely along its
    slide: q̈_slide = τ_slide / 2 − 9.81 (closed form).  ABA refuses this model (ℳ singular);
    the reduced inertia of the spin is [[0]]; all active gives the RNEA."""
    m = _spin_slide()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd, qdd, tau = rng.normal(size=(4, 2))
        qh, th = opalg.hybrid(m, q, qd, tau, qdd, [False, True])
        assert th[0] == 0.0
        assert qh[0] == qdd[0] and th[1] == tau[1]
        assert abs(qh[1] - (tau[1] / 2 - 9.81)) <= 4 * EPS * (abs(tau[1]) + 9.81)
        qh, th = opalg.hybrid(m, q, qd, tau, qdd, [False, False])
        assert_close(th, opalg.rnea(m, q, qd, qdd), C_FWD * EPS, "all active")
        assert th[0] == 0.0 and abs(th[1] - 2 * (qdd[1] + 9.81)) <= 4 * EPS * abs(th[1])
    assert np.array_equal(opalg.reduced_inertia(m, q, [False, True]), np.zeros((1, 1)))
    with pytest.raises(opalg.ModelError):
        opalg.aba(m, q, qd, tau)


def test_massless_intermediate_body_on_a_passive_joint():
    """A massless body on a passive joint whose only mass lies beyond an active joint is fine
    (ℳ_pp = the inertia of the outer body about the passive axis, with the active joint rigid):
    equal to the dense solve."""
    outer = (1.5, np.array([0.2, 0.1, 0.0]), np.diag([0.02, 0.03, 0.04]))
    m = Model([-1, 0], [Joint("R", [0, 0, 1.0], name="free"), Joint("R", [0, 1.0, 0], name="motor")],
              [(E3, Z3), (E3, np.array([0.25, 0, 0]))], [(0.0, Z3, np.zeros((3, 3))), outer],
              allow_massless=True)
    rng = np.random.default_rng(5)
    q, qd = rng.normal(size=(2, 2))
    check_problem(m, q, qd, rng.normal(size=(NRHS, 2)), np.array([True, False]), label="massless intermediate")


def test_gimbal_lock_with_all_axes_passive_is_refused():
    """A spherical joint exactly at gimbal lock (q_y = π/2): with all three axes passive (or x and
    z, which coincide there) ℳ_pp is singular — SingularConfigurationError naming the joint;
    with one axis passive, or x and y, or y and z, the others prescribed, ℳ_pp is regular and the
    result equals the dense solve (to C_COND κ_p ε and 10x LU)."""
    m = spherical_chain(2)
    rng = np.random.default_rng(6)
    q, qd = rng.uniform(-1, 1, (2, m.ndof))
    q[1] = np.pi / 2
    z = np.zeros(m.ndof)
    for sel in ([0, 1, 2], [0, 2]):
        p = np.zeros(m.ndof, bool)
        p[sel] = True
        with pytest.raises(opalg.SingularConfigurationError, match=r"body 0 \(body0\), joint ball0: singular"):
            opalg.hybrid(m, q, qd, z, z, p)
        with pytest.raises(opalg.SingularConfigurationError, match=r"at batch index \(1,\)"):
            opalg.hybrid(m, np.stack([q + [0, 0.2, 0, 0, 0, 0], q]), qd, z, z, p)   # one locked state of two
        opalg.hybrid(m, q + [0, 0.2, 0, 0, 0, 0], qd, z, z, p)                    # away from the lock: fine
    for sel in ([0], [1], [2], [0, 1], [1, 2], [0, 3, 4, 5], [2, 4]):
        p = np.zeros(m.ndof, bool)
        p[sel] = True
        check_problem(m, q, qd, rng.uniform(-1, 1, (NRHS, m.ndof)), p, label=f"lock, passive {sel}")


# ---------------------------------------------------------------------------
# 9. property test
# ---------------------------------------------------------------------------
_PROFILE = (settings.get_current_profile_name() if hasattr(settings, "get_current_profile_name")
            else getattr(settings, "_current_profile", None))
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
if _PROFILE != "thorough":
    _SETTINGS["max_examples"] = 60


@st.composite
def hybrid_cases(draw):
    """(model, mask, seed, with f_ext, gravity, description): make_model kinds, 1–10 bodies, every
    joint option, masses over 10^±2 or 10^±3 in half the cases, any per-dof mask with a passive dof."""
    kind = draw(st.sampled_from(["chain", "tree", "relabeled", "jain-tree", "forest"]))
    n = draw(st.integers(1 if kind in ("chain", "tree", "relabeled") else 2, 10))
    joints = draw(st.sampled_from(["all", "mixed", "single", "revolute"]))
    seed = draw(st.integers(0, 2 ** 16))
    ratio = draw(st.sampled_from([0, 0, 2, 3]))
    m = build(kind, n, seed, joints, ratio)
    p = np.array(draw(st.lists(st.booleans(), min_size=m.ndof, max_size=m.ndof)))
    if not p.any():
        p[draw(st.integers(0, m.ndof - 1))] = True
    return m, p, seed, draw(st.booleans()), draw(st.booleans()), (kind, n, joints, ratio)


@settings(**_SETTINGS)
@given(case=hybrid_cases())
def test_property_hybrid_matches_dense(case):
    """Random model size, topology, label order, joint kinds, mass ratios, mask, gravity, f_ext:
    θ̈_p within C_COND κ_p ε of the drawn answer and within 10x LU's error, τ_a the forward
    evaluation at θ̈_p, the given entries copied (check_problem); and the reduced inertia equals the
    dense Schur complement to 20 cond(ℳ_pp) ε."""
    m, p, seed, forces, gravity, info = case
    rng = np.random.default_rng(seed)
    q, qd = rng.normal(size=(2, m.ndof))
    f = rng.normal(size=(m.n, 6)) if forces else None
    check_problem(m, q, qd, rng.normal(size=(NRHS, m.ndof)), p, f, gravity, rng, label=f"{info} mask {p.astype(int)}")
    a = ~p
    if a.any():
        Mq = opalg.crba(m, q)
        Mpp = Mq[np.ix_(p, p)]
        schur = Mq[np.ix_(a, a)] - Mq[np.ix_(a, p)] @ np.linalg.solve(Mpp, Mq[np.ix_(p, a)])
        assert_close(opalg.reduced_inertia(m, q, p), schur, 20 * np.linalg.cond(Mpp) * EPS + 1e-14, "reduced inertia")
