"""Clamped-beam frequencies of opalg.flex against a fine Euler–Bernoulli finite-element beam (K3).

The reference is written here: Hermite cubic beam elements with the consistent mass matrix,
clamped at s = 0 (itself checked against the continuum frequencies (β_iL)²√(EI/(ρA L⁴))).  The
flexible model is one link of 200 lumped segments on a locked joint; its frequencies come from
its own mass matrix, ω² = eig(ℳ_ηη(0)⁻¹ K) with ℳ_ηη the modal block of flex.crba.  Lumping the
mass at segment midpoints costs a relative frequency error of about (β_i Δs)²/24 (midpoint rule
on the modal mass): that is the floor every comparison is allowed.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from opalg import flex
from opalg.flex.examples import cantilever_roots, two_link_arm
from opalg.model.joints import Joint

EI, RHO_A, L, NODES = 20.0, 1.0, 1.0, 200


def fe_frequencies(elements: int) -> np.ndarray:
    """Clamped-free Euler–Bernoulli beam, Hermite cubic elements, consistent mass (ascending ω)."""
    h = L / elements
    Ke = EI / h ** 3 * np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                                 [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]])
    Me = RHO_A * h / 420 * np.array([[156, 22 * h, 54, -13 * h], [22 * h, 4 * h * h, 13 * h, -3 * h * h],
                                     [54, 13 * h, 156, -22 * h], [-13 * h, -3 * h * h, -22 * h, 4 * h * h]])
    n = 2 * (elements + 1)
    K, M = np.zeros((n, n)), np.zeros((n, n))
    for e in range(elements):
        s = slice(2 * e, 2 * e + 4)
        K[s, s] += Ke
        M[s, s] += Me
    return _omega(M[2:, 2:], K[2:, 2:])                 # clamp: w(0) = w'(0) = 0


def _omega(M, K):
    Ci = np.linalg.inv(np.linalg.cholesky(M))
    return np.sqrt(np.linalg.eigvalsh(Ci @ K @ Ci.T))


def _modal_mass(body) -> np.ndarray:
    """ℳ_ηη of ``body`` on a locked joint, from flex.crba."""
    fm = flex.FlexModel([-1], [Joint("R", [0, 0, 1])], [(np.eye(3), np.zeros(3))], [body], gravity=(0, 0, 0))
    return flex.crba(fm, np.zeros(fm.ndof))[:body.m, :body.m]


def _clamped(body) -> np.ndarray:
    """Frequencies of ``body`` on a locked joint: ℳ_ηη from flex.crba, K the body's."""
    return _omega(_modal_mass(body), body.K)


def _omega2_40_digits(M, K) -> list:
    """ω² of the pencil (K, M) (double matrices, taken as exact) at 40 digits, ascending."""
    with mpmath.workdps(40):
        Ci = mpmath.cholesky(mpmath.matrix(M.tolist())) ** -1
        return sorted(mpmath.eigsy(Ci * mpmath.matrix(K.tolist()) * Ci.T, eigvals_only=True))


def polynomial_beam(m: int):
    """The same beam with the non-modal assumed shapes w_i = (s/L)^(i+1), i = 1..m (Ritz)."""
    s = (np.arange(NODES) + 0.5) * L / NODES
    dm, ds = RHO_A * L / NODES, L / NODES
    Jz = dm * ds ** 2 / 12
    pos = np.zeros((NODES, 3))
    pos[:, 0] = s
    i = np.arange(1, m + 1)
    Phi, Psi = np.zeros((NODES, 3, m)), np.zeros((NODES, 3, m))
    Phi[:, 1, :] = (s[:, None] / L) ** (i + 1)
    Psi[:, 2, :] = (i + 1) * s[:, None] ** i / L ** (i + 1)
    # K_ij = EI ∫ w_i'' w_j'' ds, exactly (L = 1)
    K = EI * np.outer((i + 1) * i, (i + 1) * i) / (i[:, None] + i[None, :] - 1)
    inert = [(dm, np.zeros(3), np.diag([Jz / 2, Jz / 2, Jz]))] * NODES
    return flex.FlexBody((0.0, np.zeros(3), np.zeros((3, 3))), pos, inert, Phi, Psi, K)


@pytest.fixture(scope="module")
def reference():
    return fe_frequencies(100)


def test_fe_reference_against_continuum(reference):
    """Guard on the reference: 100 Hermite elements give the continuum frequencies to O(h⁴)
    (measured ≤ 3e-7 for the first five; bound 1e-6)."""
    exact = cantilever_roots(5) ** 2 * np.sqrt(EI / (RHO_A * L ** 4))
    assert np.max(np.abs(reference[:5] / exact - 1)) < 1e-6


@pytest.mark.verifies("K3", route="Ritz frequencies of flex.crba's ℳ_ηη: monotone in m and vs a Hermite-cubic FE beam")
def test_ritz_frequencies_converge_as_modes_are_added(reference):
    """[K3] Polynomial assumed modes, m = 1..7: each ω_i is non-increasing in m (nested Ritz
    spaces of one mass/stiffness pair), the error of the first three frequencies against the FE
    beam falls (27 % at m = 1, 9·10⁻¹ for ω₃ at m = 3), and at m = 7 it is < 1e-3 — ω₁ at the
    lumping floor (β₁Δs)²/24 ≈ 3.7e-6, bound 1e-5.

    The monotonicity is checked on the leading blocks of the 7-mode ℳ_ηη and K (exactly nested
    pencils, so Cauchy interlacing holds for the double matrices as given), with the eigenvalues at
    40 digits: the double eigen-solve is off by up to 7e-8 at m = 7 (cond(ℳ_ηη) = 5e10), while the
    smallest true decrease is 8e-11 relative; a slack of 1e-12 on double ω was not derivable."""
    w = [_clamped(polynomial_beam(m)) for m in range(1, 8)]
    b7 = polynomial_beam(7)
    M7 = _modal_mass(b7)
    w2 = [_omega2_40_digits(M7[:m, :m], b7.K[:m, :m]) for m in range(1, 8)]
    for m in range(1, 7):
        # 40-digit eigenvalues of the pencils: error ~ cond(ℳ_ηη)·1e-40 ≈ 1e-29, not double round-off
        assert all(w2[m][i] <= w2[m - 1][i] * (1 + mpmath.mpf("1e-25")) for i in range(m)), (m, w2[m], w2[m - 1])
    err = lambda m, k: np.max(np.abs(w[m - 1][:k] / reference[:k] - 1))      # noqa: E731
    assert err(1, 1) > 0.1 and err(3, 3) > 0.5
    assert err(3, 3) > err(5, 3) > err(7, 3)
    assert err(7, 3) < 1e-3 and err(7, 1) < 1e-5


@pytest.mark.verifies("K3", route="two_link_arm's clamped-free modes (flex.crba ℳ_ηη, K) vs a Hermite-cubic FE beam")
@pytest.mark.parametrize("m", [1, 3, 5])
def test_cantilever_modes_match_fe_to_the_lumping_floor(reference, m):
    """[K3] two_link_arm's link (the exact clamped-free shapes, 200 segments): each of its m
    frequencies equals the FE beam's within the lumping floor (β_iΔs)²/24 (measured: ≤ 0.86 of it)."""
    w = _clamped(two_link_arm(modes=m, nodes=NODES).bodies[0])
    floor = (cantilever_roots(m) * (L / NODES)) ** 2 / 24
    assert np.all(np.abs(w / reference[:m] - 1) <= floor), (w / reference[:m] - 1) / floor
