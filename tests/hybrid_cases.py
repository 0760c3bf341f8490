"""Shared cases of the hybrid-dynamics tests (tests/test_hybrid*.py): model builders, masks,
the exact answer of a drawn problem, and the dense partitioned route with its yardsticks.

Tolerances used by the tests (each also stated where it is used; the numbers "measured" below
come from throwaway sweeps over 300 random models and 600 problems of this file's generators —
chains, trees, relabeled, tip-to-base and forests of 2–30 bodies, every joint option, mass ratios
up to 1e6, gravity and f_ext on and off — run under the default kernels and under
``OPENBLAS_CORETYPE=Sandybridge`` / ``Prescott`` with ``NPY_DISABLE_CPU_FEATURES=X86_V3``):

* ``C_COND`` = 64, cond-based (:func:`kappa_tol`): θ̈_p of a backward-stable method has relative
  error ≲ γ ε κ_p with κ_p the normwise condition number of the partitioned problem
  (:meth:`Dense.kappa_p`, ≥ cond(ℳ_pp), computed in the test).  Over 2,052 drawn problems when
  this file was written (cond(ℳ_pp) up to 9e7) the largest γ was 15.2 for the recursion — and
  19.7 for LU on the same problem (a helical joint whose gravity torque is a small difference:
  the norms in κ_p miss the size of C's intermediate terms, equally for both routes); the sweep
  under three kernels gave γ ≤ 5.2 (recursion) and ≤ 3.4 (LU).  64 is 3x LU's worst;
* ``FACTOR`` = 10 against the dense LU error of the same problem (the worst of ``NRHS`` = 4
  right-hand sides), with a floor of ``C_COND`` κ_p ε.  The floor was an absolute 1e-13 (≈ 450 ε),
  which is no yardstick: LU may be exact to the last bit by chance, and the sweep found a problem
  (a 4-body tip-to-base tree under Sandybridge kernels) where the recursion, at 2.5 κ_p ε, was
  2.2x over "10x LU + 1e-13".  With the derived floor the comparison fails only where the
  recursion also misses C_COND κ_p ε;
* ``C_FWD`` = 256, measured (:data:`FWD_TOL`): a forward evaluation (τ_a from a given θ̈_p, an
  RNEA) has relative error γ ε of the sum of the norms of its terms; γ was ≤ 10.4 over the 2,052
  problems, and ≤ 15.9 in the three-kernel sweep (all dof active against the RNEA, on a relabeled
  5-body tree): 256 is 16x that;
* ``C_BATCH`` = 100, cond-based: a batched call against the per-state calls differs only by the
  summation order of the stacked products (numpy's batched matmul vs the single-matrix kernels),
  amplified by at most cond(ℳ_pp); measured ≤ 7.1 cond(ℳ_pp) ε in the sweep (the difference
  reached 1.2e-12 on a 28-body chain with mass ratios 1e6: an absolute 1e-13 is no bound).
"""

from __future__ import annotations

import numpy as np
import opalg
from opalg import Joint, Model

from helpers import Tol, assert_close, cond_tol, make_model, measured

EPS = float(np.finfo(float).eps)
LD = np.longdouble
EXTENDED = float(np.finfo(LD).eps) < 1e-18
C_COND = 64.0
C_FWD = 256.0
C_BATCH = 100.0
FACTOR = 10.0
NRHS = 4
SWEEP = ("300 random models (600 hybrid problems: chains, trees, relabeled, tip-to-base, forests of "
         "2-30 bodies, every joint option, mass ratios to 1e6) under 3 kernels")
#: τ_a (or an RNEA) against a forward evaluation, relative to the sum of the norms of its terms.
FWD_TOL = measured(C_FWD * EPS, 15.9 * EPS, SWEEP)


def kappa_tol(kappa) -> Tol:
    """C_COND·κ_p·ε: the accuracy a backward-stable solve of the partitioned problem promises."""
    kappa = float(np.max(kappa))
    return Tol(C_COND * kappa * EPS, f"{C_COND:g}·κ_p·ε, κ_p = {kappa:.1e} (normwise condition number "
               "of the partitioned problem, >= cond(ℳ_pp); 64 = 3x the worst γ of LU, 19.7)")


def batch_tol(m, q, p) -> Tol:
    """C_BATCH·cond(ℳ_pp)·ε for a batched call against the per-state call at state q (cond 1
    when every dof is active: the RNEA, a forward evaluation)."""
    cond = np.linalg.cond(opalg.crba(m, q)[np.ix_(p, p)]) if np.any(p) else 1.0
    return cond_tol(cond, C_BATCH, "ℳ_pp")


def worst_row(err) -> int:
    """Index of the worst right-hand side (the one recorded; the others are within it)."""
    return int(np.argmax(np.atleast_1d(err)))


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
      (1) θ̈_p error (vs the drawn q̈_p) ≤ C_COND κ_p ε (the worst right-hand side is recorded);
      (2) θ̈_p error ≤ FACTOR × LU's error + C_COND κ_p ε (worst of the NRHS problems each);
      (3) τ_a = the forward evaluation ℳ_ap θ̈_p + ℳ_aa θ̈_a + C_a at the returned θ̈_p, to
          FWD_TOL × the sum of the norms of its terms (no conditioning enters a forward evaluation);
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
    errs = np.atleast_1d(rows_rel(qh[..., p], qdd[..., p]))
    err = errs.max()
    err_lu = rows_rel(x_lu, qdd[..., p]).max()
    kappa = dn.kappa_p(p, tau, qdd).max()
    cond = np.linalg.cond(dn.M[np.ix_(p, p)])
    tol = kappa_tol(kappa)
    i = worst_row(errs)
    assert_close(np.atleast_2d(qh[..., p])[i], np.atleast_2d(qdd[..., p])[i], tol,
                 f"{label}: θ̈_p vs the drawn answer (cond ℳ_pp {cond:.1e})")
    assert err <= FACTOR * err_lu + tol, (
        f"{label}: θ̈_p error {err:.2e} > {FACTOR:g} × LU error {err_lu:.2e} + {tol:.1e} ({tol.why})")
    fwd = 0.0
    if a.any():
        ta_fwd = dn.forward_a(p, qh[..., p], qdd)
        scale = np.atleast_1d(dn.fwd_scale(p, qh[..., p], qdd))
        fwds = np.atleast_1d(np.linalg.norm(th[..., a] - ta_fwd, axis=-1)) / scale
        fwd = fwds.max()
        i = worst_row(fwds)
        # scale = Σ of the norms of the terms >= ‖τ_a‖: assert_close measures against it
        assert_close(np.atleast_2d(th[..., a])[i], np.atleast_2d(ta_fwd)[i], FWD_TOL,
                     f"{label}: τ_a vs ℳ_apθ̈_p + ℳ_aaθ̈_a + C_a", scale=scale[i])
    return dict(err=err, err_lu=err_lu, kappa=kappa, cond=cond, gamma=err / (kappa * EPS), fwd=fwd / EPS)


def spherical_chain(n: int) -> Model:
    """n links of 0.3 m / 1 kg on spherical (XYZ) joints (as in tests/test_exactness.py)."""
    rod = 1.0 * 0.3 ** 2 / 12 * np.diag([0.01, 1.0, 1.0]) + 1e-4 * np.eye(3)
    return opalg.serial_chain(
        [Joint.spherical(name=f"ball{k}") for k in range(n)],
        [(np.eye(3), np.zeros(3) if k == 0 else np.array([0.3, 0, 0])) for k in range(n)],
        [(1.0, np.array([0.15, 0, 0]), rod)] * n)
