"""J8: Ider's system in the speeds y = ν: M_y = D and the feasibility Schur complement is invariant."""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import quasi
from opalg.algorithms.constrained import conditioning, solve_augmented
from opalg.errors import StateError

from helpers import assert_close, make_model, no_string_evaluated  # noqa: F401
from quasi_dense import cond_tol, factor_at


@pytest.mark.parametrize("kind,joints", [("chain", "single"), ("tree", "all"), ("relabeled", "mixed"),
                                         ("jain-tree", "all")])
def test_J8_schur_complement_is_invariant(kind, joints):
    """S_y = B_y D⁻¹ Z_yᵀ equals Bℳ⁻¹Zᵀ (dense solve of crba), B_y equals B L⁻ᵀ of the dense
    tip-first factor, M_y = L⁻¹ℳL⁻ᵀ is the block-diagonal D, and the conditioning κ of
    opalg.algorithms.constrained is the same in θ̇ and in ν (to 100·cond(ℳ)·ε, quasi_dense.cond_tol)."""
    for seed in range(2):
        m = make_model(kind, 6, seed, joints)
        rng = np.random.default_rng(seed)
        q = rng.normal(size=m.ndof)
        B, A = rng.normal(size=(3, m.ndof)), rng.normal(size=(2, m.ndof))
        Z = np.vstack([B[:1], A])                      # one geometric row, two control directions
        Mq = opalg.crba(m, q)
        L, Dd = factor_at(m, q)
        r = quasi.schur_in_nu(m, q, B, Z)
        tol = cond_tol(m, q)
        assert_close(r.S, B @ np.linalg.solve(Mq, Z.T), tol, "S_y = Bℳ⁻¹Zᵀ")
        assert_close(r.B_y, np.linalg.solve(L, B.T).T, tol, "B_y = BL⁻ᵀ")
        assert_close(r.Z_y, np.linalg.solve(L, Z.T).T, tol, "Z_y = ZL⁻ᵀ")
        Linv = np.linalg.inv(L)
        assert_close(r.mass_matrix(), Linv @ Mq @ Linv.T, tol, "M_y = D")
        k_theta, k_nu = conditioning(Mq, B, Z), conditioning(r.mass_matrix(), r.B_y, r.Z_y)
        assert 1e-6 < k_theta < 1, "a non-trivial choice of directions"
        assert abs(k_theta - k_nu) <= 1e-10, (k_theta, k_nu)


def test_J8_ider_solution_in_nu_gives_the_same_motion_and_forces():
    """Ider's augmented solve (eq. 17) in y = ν with M_y = D, Q_y = Lᵀ-transformed forces, returns
    the same force magnitudes v and ν̇ = Lᵀθ̈ + L̇ᵀθ̇ at θ̇ = 0 (where L̇ᵀθ̇ = 0)."""
    m = make_model("tree", 6, 1, "mixed")
    rng = np.random.default_rng(3)
    q = rng.normal(size=m.ndof)
    qd = np.zeros(m.ndof)
    B, A = rng.normal(size=(2, m.ndof)), rng.normal(size=(2, m.ndof))
    h = rng.normal(size=2)
    Mq, Q = opalg.crba(m, q), opalg.bias(m, q, qd)
    ref = solve_augmented(Mq, Q, np.zeros(m.ndof), B, h, A)
    r = quasi.schur_in_nu(m, q, B, A)
    L, _ = factor_at(m, q)
    Q_y = np.linalg.solve(L, Q)                        # Tᵀ Q with T = L⁻ᵀ
    sol = solve_augmented(r.mass_matrix(), Q_y, np.zeros(m.ndof), r.B_y, h, r.Z_y)
    assert_close(sol.v, ref.v, 1e-11, "force magnitudes")
    assert_close(sol.ydot, L.T @ ref.ydot, 1e-11, "ν̇ = Lᵀθ̈")


def test_bad_input():
    m = make_model("chain", 3, 0)
    z = np.zeros(m.ndof)
    with pytest.raises(StateError, match="B has shape"):
        quasi.schur_in_nu(m, z, np.zeros(m.ndof), np.zeros((1, m.ndof)))
    with pytest.raises(StateError, match="single real state"):
        quasi.schur_in_nu(m, np.zeros((2, m.ndof)), np.zeros((1, m.ndof)), np.zeros((1, m.ndof)))
    for bad in ([["a"] * m.ndof], [[0.0] * m.ndof, [0.0]], [[np.nan] * m.ndof], np.zeros((1, 2))):
        with pytest.raises(StateError, match="B"):           # never a bare numpy ValueError
            quasi.schur_in_nu(m, z, bad, np.zeros((1, m.ndof)))
