r"""Hybrid dynamics: forces given on the passive dofs, accelerations on the active ones.

docs/REFERENCE.md G1–G4.  Split each joint map H(k) into passive rows H_p(k)
(T_p given, θ̈_p unknown) and active rows H_a(k) (θ̈_a given, T_a unknown), one
entry per dof, so a multi-axis joint may mix the two.  The passive block

.. math:: ℳ_{pp} = H_p φ M φ^* H_p^*

is again the mass matrix of a spatial-operator model: same φ and M, joint map
H_p (G1).  The Riccati recursion run with H_p (:func:`opalg.articulated` with
``passive=``) eliminates only the passive axes — a body with no passive dof
passes its articulated inertia through unprojected (pitfall 10) — and gives

.. math::
    ℳ_{pp} = (I + H_pφK_h) D_h (I + H_pφK_h)^*,\qquad
    ℳ_{pp}^{-1} = (I − H_pψ_hK_h)^* D_h^{-1} (I − H_pψ_hK_h).

With the active accelerations folded into the Coriolis term,
a′ = a + H_a*θ̈_a, the two O(n) passes of :func:`opalg.innovations_passes`
(hybrid mode, G2) give θ̈_p and, from the hinge forces, T_a.  All passive is the
ABA, all active the RNEA.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.aba import innovations_passes
from opalg.errors import StateError
from opalg.model.kinematics import Kinematics, body_kinematics, check_state, chunked, overflow_guard
from opalg.model.multibody import Model
from opalg.algorithms.riccati import Articulated, _riccati, check_passive


def hybrid(model: Model, q, qd, tau, qdd, passive, f_ext=None,
           gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""Hybrid dynamics in O(n): given τ on the passive dofs and q̈ on the active ones, the rest.

    Solves ``ℳ q̈ + C = τ + Σ_k J_k* f_ext(k)`` for the unknown halves (G2):

    .. math::
        \ddot θ_p = ℳ_{pp}^{-1}\left[T_p − H_pφ(Mφ^*a′ + b)\right],\quad
        a′ = a + H_a^*\ddot θ_a,\qquad
        T_a = H_aφ(Mα + b),\quad α = φ^*(H_p^*\ddot θ_p + a′),

    as one inward pass (residual forces from the active accelerations and the
    passive forces) and one outward pass (passive accelerations, active forces),
    with the hybrid articulated inertias P_h of G1.

    Parameters
    ----------
    model : Model
    q, qd : array_like, shape (..., N)
    tau : array_like, shape (..., N)
        Generalized forces; read where ``passive`` is True (the other entries are
        ignored but must be finite numbers).
    qdd : array_like, shape (..., N)
        Accelerations; read where ``passive`` is False (the others are ignored).
    passive : array_like of bool, shape (N,)
        One entry per dof: True for a passive dof (force given, e.g. 0 or
        friction), False for an active one (acceleration prescribed).
    f_ext : array_like, shape (..., n, 6), optional
        External forces as in :func:`opalg.aba` (C9).
    gravity : bool

    Returns
    -------
    qdd, tau : ndarray, shape (..., N)
        The complete vectors: the given entries copied, the others computed.

    Raises
    ------
    StateError
        A mask that is not one boolean per dof, or bad states (as :func:`opalg.aba`).
    ModelError, SingularConfigurationError
        If ℳ_pp is singular: a passive axis that moves no mass, or dependent passive
        axes of one joint (E12).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=1, joints="all")
    >>> rng = np.random.default_rng(0)
    >>> q, qd, qdd = rng.normal(size=(3, m.ndof))
    >>> tau = opalg.rnea(m, q, qd, qdd)
    >>> passive = rng.random(m.ndof) < 0.5
    >>> qdd_h, tau_h = opalg.hybrid(m, q, qd, np.where(passive, tau, 0), np.where(passive, 0, qdd), passive)
    >>> bool(np.allclose(qdd_h, qdd) and np.allclose(tau_h, tau))
    True
    """
    return tuple(_hybrid(model, q, qd, tau, qdd, check_passive(model, passive), f_ext, gravity))


@chunked(4, forces=("f_ext",))
def _hybrid(model: Model, q, qd, tau, qdd, passive, f_ext=None, gravity: bool = True) -> list:
    kin = body_kinematics(model, q, qd, gravity, validate=False)
    return hybrid_on(model, kin, _riccati(model, q, kin, passive), tau, qdd, f_ext)


def _own(model, kin, art, where: str) -> None:
    """StateError unless ``art`` is a hybrid Articulated (and ``kin`` a Kinematics with rates)."""
    if not isinstance(art, Articulated) or art.passive is None:
        raise StateError(f"{where}: art must be the opalg.Articulated of opalg.articulated(model, q, passive=...), "
                         f"got {type(art).__name__}")
    if kin is not None and (not isinstance(kin, Kinematics) or kin.b is None):
        raise StateError(f"{where}: kin must be the Kinematics of body_kinematics(model, q, qd), got {type(kin).__name__}")


def hybrid_on(model: Model, kin, art, tau, qdd, f_ext=None) -> list:
    """[q̈, τ] of :func:`hybrid` on given kinematics (with rates) and hybrid factors (no checks of
    the arrays; ``kin`` and ``art`` must be opalg's own, from body_kinematics and articulated)."""
    _own(model, kin, art, "hybrid_on")
    passive = art.passive
    b = kin.b if f_ext is None else [kin.b[k] - f_ext[..., k, :] for k in range(model.n)]
    res = innovations_passes(model, art, tau[..., passive, None], kin.a, b, qdd_a=qdd[..., ~passive, None])
    # Either result may be empty (no passive or no active dof): the batch is that of all of them.
    batch = np.broadcast_shapes(res.qdd.shape[:-2], res.tau.shape[:-2], qdd.shape[:-1], tau.shape[:-1])
    out = []
    for given, rows, value in ((qdd, passive, res.qdd), (tau, ~passive, res.tau)):
        full = np.empty(batch + (model.ndof,), dtype=bk.common_dtype(given, value))
        full[...] = given
        full[..., rows] = value[..., 0]
        out.append(full)
    return out


def reduced_inertia(model: Model, q, passive) -> np.ndarray:
    r"""The inertia the actuators feel, ``((ℳ⁻¹)_aa)⁻¹ = ℳ_aa − ℳ_ap ℳ_pp⁻¹ ℳ_pa`` (G3), in O(n N_a).

    The hybrid passes with T_p = 0, a = b = 0 and θ̈_a = each unit vector in turn
    return T_a = (ℳ_aa − ℳ_apℳ_pp⁻¹ℳ_pa) θ̈_a: the passive dofs move freely, so the
    actuators push against the Schur complement of ℳ_pp.  Symmetrized (it is
    symmetric in exact arithmetic).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., N)
    passive : array_like of bool, shape (N,)

    Returns
    -------
    ndarray, shape (..., N_a, N_a)
        Rows and columns follow the active dofs in the model's dof order.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, seed=3)
    >>> q = np.full(m.ndof, 0.3)
    >>> passive = np.arange(m.ndof) % 2 == 0
    >>> a, p = ~passive, passive
    >>> Mq = opalg.crba(m, q)
    >>> S = Mq[np.ix_(a, a)] - Mq[np.ix_(a, p)] @ np.linalg.solve(Mq[np.ix_(p, p)], Mq[np.ix_(p, a)])
    >>> bool(np.allclose(opalg.reduced_inertia(m, q, passive), S))
    True
    >>> bool(np.allclose(opalg.reduced_inertia(m, q, passive), np.linalg.inv(np.linalg.inv(Mq)[np.ix_(a, a)])))
    True
    """
    mask = check_passive(model, passive)
    q = check_state(model, q, "q")

    def compute():
        Ta = unit_response(model, _riccati(model, q, body_kinematics(model, q, validate=False), mask))[1]
        return (Ta + bk.mT(Ta)) / 2 if Ta.dtype != object else Ta

    return overflow_guard("reduced_inertia", compute, {"q": q})


def unit_response(model: Model, art) -> tuple[np.ndarray, np.ndarray]:
    """(θ̈_p, T_a) of the G2 passes for θ̈_a = each unit vector, T_p = 0, a = b = 0: the columns
    of −ℳ_pp⁻¹ℳ_pa (N_p, N_a) and of R = ℳ_aa − ℳ_apℳ_pp⁻¹ℳ_pa (N_a, N_a) (G3)."""
    _own(model, None, art, "unit_response")
    n_p, n_a = art.rows[0][-1].stop, art.rows[1][-1].stop
    res = innovations_passes(model, art, bk.zeros((n_p, n_a), *art.P), qdd_a=bk.eye(n_a, *art.P))
    return res.qdd, res.tau
