r"""The dense oracle of the multi-arm system: one KKT solve (docs/REFERENCE.md §10, H1).

Unknowns [θ̈_1 … θ̈_m, α_o, λ_1 … λ_m], built from routes that the operational-space
solution does not use: ``crba`` and ``bias`` (RNEA) of each arm, ``frame_jacobian``, the
frame drift J̇θ̇ of the kinematic pass (:func:`opalg.closed.grasp.frame_drift`) and the
object pose from ``body_poses``:

.. code-block:: text

    ℳ_r θ̈_r + J_rᵀΠᵀ λ_r                  = T_r − C_r
    M_o α_o − Σ_r φ(o, e_r) Πᵀ λ_r          = −b_o
    Π J_r θ̈_r − Π φ*(o, e_r) α_o            = −Π J̇_r θ̇_r
"""

from __future__ import annotations

import numpy as np

from opalg.algorithms.crba import crba
from opalg.algorithms.rnea import bias
from opalg.errors import SingularConfigurationError, StateError
from opalg.model.kinematics import body_poses
from opalg.algorithms.operational import frame_jacobian
from opalg.spatial.vectors import crf
from opalg.algorithms.kkt import kkt_solve as dense_kkt
from opalg.closed._blocks import vector6 as _vector6
from opalg.closed.grasp import frame_drift


def kkt_solve(system, qs, qds, taus, f_o=None, gravity: bool = True):
    r"""Solve the multi-arm KKT system densely for one state (the oracle of H1, H7, H9).

    Parameters are those of :meth:`opalg.closed.MultiArm.forward`, without batch axes.

    Returns
    -------
    qdd, f, lam, alpha_o
        The fields of :class:`opalg.closed.MultiArmResult` (:meth:`~opalg.closed.MultiArm.kkt` wraps them).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.closed import Grasp, MultiArm
    >>> arm = opalg.random_model(7, "chain", seed=0)
    >>> ma = MultiArm([arm], [Grasp(6)], np.eye(6)); q, qd, tau = np.ones((3, arm.ndof))
    >>> res = ma.kkt([q], [qd], [tau])
    >>> bool(np.allclose(res.qdd[0], ma.forward([q], [qd], [tau]).qdd[0]))
    True
    """
    m, Pi = system.m, system.Pi
    qs, qds, taus = (system._states(nm, x) for nm, x in (("qs", qs), ("qds", qds), ("taus", taus)))
    if any(x.ndim != 1 for x in (*qs, *qds, *taus)):
        raise StateError("MultiArm.kkt is the dense oracle for one state: pass 1-D arrays per arm")
    k = Pi.shape[0]
    sizes = [arm.ndof for arm in system.arms]
    N = sum(sizes)
    n, c = N + 6, k * m
    Mt, Bt = np.zeros((n, n)), np.zeros((c, n))           # blkdiag(ℳ_arms, M_o) and [J, −A*]
    r_, h = np.zeros(n), np.zeros(c)
    # object pose and velocity from arm 0's grasp frame
    R0, p0 = body_poses(system.arms[0], qs[0])
    g0 = system.grasps[0]
    R_0e = R0[g0.body] @ g0.R
    R_0o = R_0e @ g0.R_oe.T
    J_0 = frame_jacobian(system.arms[0], qs[0], g0.frame)
    V_o = system.X_oe0 @ (J_0 @ qds[0])
    a_g = np.concatenate([np.zeros(3), R_0o.T @ system.gravity]) if gravity else np.zeros(6)
    b_o = crf(V_o) @ system.M_o @ V_o - system.M_o @ a_g
    if f_o is not None:
        b_o = b_o - _vector6(f_o, "f_o")
    io = N
    Mt[io:io + 6, io:io + 6] = system.M_o
    r_[io:io + 6] = -b_o
    off = 0
    for r, arm in enumerate(system.arms):
        sl = slice(off, off + sizes[r])
        il = slice(k * r, k * (r + 1))
        J = Pi @ frame_jacobian(arm, qs[r], system.grasps[r].frame)
        A_r = system.X_eo[r].T @ Pi.T                        # φ(o, e_r) Πᵀ
        Mt[sl, sl] = crba(arm, qs[r])
        r_[sl] = taus[r] - bias(arm, qs[r], qds[r], gravity=gravity)
        Bt[il, sl] = J
        Bt[il, io:io + 6] = -A_r.T
        h[il] = -Pi @ frame_drift(arm, qs[r], qds[r], system.grasps[r].frame)
        off += sizes[r]
    try:
        x, lam_all = dense_kkt(Mt, Bt, r_, h, rcond=np.finfo(float).eps * (n + c))
    except SingularConfigurationError as e:
        raise SingularConfigurationError(f"MultiArm.kkt: {e}; grasp forces statically indeterminate") from None
    qdd = np.split(x[:N], np.cumsum(sizes)[:-1])
    lam = np.split(lam_all, m)
    return list(qdd), [Pi.T @ v for v in lam], lam, x[N:N + 6]
