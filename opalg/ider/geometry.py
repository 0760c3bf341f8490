r"""The arm of Ider (1990), section 4, and its tip path: parameters, kinematics, reach.

Constraint (re-derived): Φ(q, t) = tip(q) − (x0 + v_A t, y0) = 0, so B = ∂tip/∂q (the
tip Jacobian) and h = −Ḃ y; with absolute angles φ_i = θ1 + … + θi and rates
ω_i = y1 + … + yi, B = [[−Σ_{i≥j} L_i sin φ_i], [Σ_{i≥j} L_i cos φ_i]] and
h = [Σ_i L_i cos φ_i ω_i², Σ_i L_i sin φ_i ω_i²].
"""

from __future__ import annotations


import numpy as np

from opalg.model import builders
from opalg.errors import StateError
from opalg.ider._inputs import _real
from opalg.model import _validate

LENGTHS = (1.0, 1.0, 1.0)
MASSES = (30.0, 18.0, 18.0)
INERTIAS = (10.0, 8.64, 8.64)
THETA0 = np.deg2rad([60.0, -10.0, -90.0])
V_A = -1.0


def arm(inertia: str = "joint", gravity: float = 0.0):
    """The paper's arm as an :class:`opalg.Model` (joint axes z, motion in the x–y plane).

    Examples
    --------
    >>> from opalg import ider, crba
    >>> M = crba(ider.arm(), ider.THETA0)
    >>> round(float(M[2, 2]), 12)      # I3 about joint 3
    8.64
    """
    if not isinstance(inertia, str) or inertia not in ("joint", "com"):
        raise StateError(f"inertia must be 'joint' or 'com', got {inertia!r}")
    g = _real(gravity, "gravity", "a finite number (m/s²)")
    return builders.planar_arm(LENGTHS, MASSES, INERTIAS, inertia_about=inertia, gravity=(0.0, -g, 0.0))


def _abs_angles(q):
    """Absolute link angles of joint angles q (..., 3): numbers (complex for a complex step), finite."""
    q = _validate.array(q, "q", "ider", complex_ok=True)
    if q.ndim == 0 or q.shape[-1] != 3:
        raise StateError(f"ider: q must hold the 3 joint angles of the arm, shape (..., 3), got shape {q.shape}")
    return np.cumsum(q if q.dtype.kind in "fc" else q.astype(float), axis=-1)


def tip(q) -> np.ndarray:
    """Tip position (x, y) in metres, shape (..., 2)."""
    phi = _abs_angles(q)
    L = np.asarray(LENGTHS)
    return np.stack([(L * np.cos(phi)).sum(-1), (L * np.sin(phi)).sum(-1)], -1)


_L = np.asarray(LENGTHS)


def _link_terms(q) -> tuple[np.ndarray, np.ndarray]:
    """(L_i sin φ_i, L_i cos φ_i) of the links, φ the absolute angles: what B and h are made of."""
    phi = _abs_angles(q)
    return _L * np.sin(phi), _L * np.cos(phi)


def _jacobian_of(ls, lc) -> np.ndarray:
    # Column j sums the links i >= j: reversed cumulative sums.
    return np.stack([-np.cumsum(ls[::-1])[::-1], np.cumsum(lc[::-1])[::-1]])


def _bias_of(ls, lc, y) -> np.ndarray:
    w2 = np.cumsum(np.asarray(y, dtype=float)) ** 2
    return np.array([(lc * w2).sum(), (ls * w2).sum()])


def tip_jacobian(q) -> np.ndarray:
    """B(q) = ∂tip/∂q, shape (2, 3)."""
    return _jacobian_of(*_link_terms(q))


def tip_bias(q, y) -> np.ndarray:
    """h = −Ḃ y, so that the tip acceleration is B ẏ − h."""
    return _bias_of(*_link_terms(q), y)


def _tip_terms(q, y) -> tuple[np.ndarray, np.ndarray]:
    """(B(q), h(q, y)) together: the right-hand side needs both, and the sines and cosines once."""
    ls, lc = _link_terms(q)
    return _jacobian_of(ls, lc), _bias_of(ls, lc, y)


TIP0 = tip(THETA0)


def joint_points(q) -> np.ndarray:
    """Base, elbow, wrist and tip positions (4, 2) of configuration q (for drawings)."""
    phi = _abs_angles(q)
    L = np.asarray(LENGTHS)
    steps = np.stack([L * np.cos(phi), L * np.sin(phi)], -1)
    return np.vstack([np.zeros(2), np.cumsum(steps, axis=0)])


def path(t) -> np.ndarray:
    """Desired tip position at time t (eq. 20 with the exact initial tip)."""
    t = _validate.array(t, "t", "ider.path")
    return np.stack([TIP0[0] + V_A * t, np.full_like(t, TIP0[1])], -1)


def initial_speeds(q0=THETA0, v_A: float = V_A) -> np.ndarray:
    """Joint rates with y2 = 0 that give the tip velocity (v_A, 0): B(q0)[:, (0, 2)] (y1, y3) = (v_A, 0)."""
    v_A = _real(v_A, "v_A", "a finite number (m/s)")
    B = tip_jacobian(q0)
    y13 = np.linalg.solve(B[:, [0, 2]], [v_A, 0.0])
    return np.array([y13[0], 0.0, y13[1]])


def reach_measure(q) -> float:
    """σ_min/σ_max of the tip Jacobian B(q): 0 where the links align (as at full stretch).

    Examples
    --------
    >>> from opalg import ider
    >>> ider.reach_measure([0.3, 0.0, 0.0]) < 1e-15          # stretched out: B has rank 1
    True
    >>> round(ider.reach_measure(ider.THETA0), 3)
    0.375
    """
    s = np.linalg.svd(tip_jacobian(q), compute_uv=False)
    return float(s[-1] / s[0])
