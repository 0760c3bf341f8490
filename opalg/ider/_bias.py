"""C(q, y) of one state of a tree of 1-dof joints, for the integrator's right-hand side.

:func:`opalg.rnea` (unwrapped) spends most of a one-state call outside its arithmetic: the
kinematics record, the batch-shape checks, the dispatch of each product by shape and dtype,
the per-body slicing and caches.  :class:`OneStateBias` runs the same recursions with the same
numpy calls on the same arrays, in the same order — each matrix-vector product ``x @ A.T``
exactly as :func:`opalg._backend.mv` issues it for a constant matrix (so BLAS gets the same
operands and layout), the cross products through :func:`opalg.spatial._cross_single` as
:func:`opalg.spatial.cross_motion` and :func:`~opalg.spatial.cross_force` do for one state —
and nothing else, so C is bit for bit that of ``rnea(model, q, y, 0)`` (tests/test_ider.py
compares them).
"""

from __future__ import annotations

import numpy as np

from .. import _backend as bk
from ..joints import Joint, joint_velocity
from ..spatial import _cross_single


class OneStateBias:
    """``rnea(model, q, qd, qdd)`` of one float64 state, for a model of 1-dof joints only.

    Build with :meth:`for_model` (None where a joint is not a plain 1-dof joint with a numeric
    fast transform, or the model has symbolic data).
    """

    def __init__(self, model, fast, S, I, a0):
        self.n, self.order, self.parents = model.n, list(model.order), list(model.parents)
        self.fast, self.S, self.I, self.a0 = fast, S, I, a0
        self.ST = [bk.mT(s).T for s in S]     # mv(mT(S), f) multiplies f @ mT(S).T
        self.St = [s.T for s in S]           # mv(S, x) multiplies x @ S.T

    @classmethod
    def for_model(cls, model):
        """An :class:`OneStateBias` for ``model``, or None (then the caller uses :func:`opalg.rnea`)."""
        if model.nq != model.ndof or model.n != model.ndof:
            return None
        fast, S = [], []
        for k in range(model.n):
            joint = model.joints[k]
            if joint.ndof != 1 or type(joint).velocity is not Joint.velocity:
                return None
            f = model._tree_transform(k)
            if f.stacked is None or f.S.shape != (6, 1) or f.S.dtype != np.float64:
                return None
            fast.append(f)
            S.append(f.S)
        I = list(model.I_spatial)
        if not all(type(i) is np.ndarray and i.dtype == np.float64 and i.shape == (6, 6) for i in I):
            return None
        g = model.gravity
        if not (type(g) is np.ndarray and g.dtype == np.float64):
            return None
        # a0 as _body_kinematics forms it for one float64 state (gravity on)
        a0 = bk.zeros((6,), np.zeros(1), np.zeros(1), I[0], g) + np.concatenate([bk.zeros((3,), g), -g])
        return cls(model, fast, S, I, a0)

    def __call__(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """``rnea(model, q, qd, qdd)`` (gravity on, no external force), bit for bit."""
        n, order, parents = self.n, self.order, self.parents
        Xup = [self.fast[k](q[k:k + 1][..., 0]) for k in range(n)]
        V, a, b = [None] * n, [None] * n, [None] * n
        for k in order:                       # _body_kinematics
            p = parents[k]
            vJ, cJ = joint_velocity(self.S[k], qd[k:k + 1])
            if p == -1:
                V[k] = vJ
                a[k] = _cross_single(vJ.tolist(), vJ.tolist(), True) + cJ + self.a0 @ Xup[k].T
            else:
                V[k] = V[p] @ Xup[k].T + vJ
                a[k] = _cross_single(V[k].tolist(), vJ.tolist(), True) + cJ
            b[k] = _cross_single(V[k].tolist(), (V[k] @ self.I[k].T).tolist(), False)
        alpha, f = [None] * n, [None] * n
        for k in order:                       # rnea, outward
            p = parents[k]
            acc = qdd[k:k + 1] @ self.St[k] + a[k]
            alpha[k] = acc if p == -1 else alpha[p] @ Xup[k].T + acc
            f[k] = alpha[k] @ self.I[k].T + b[k]
        for k in reversed(order):             # inward
            p = parents[k]
            if p != -1:
                f[p] = f[p] + f[k] @ bk.mT(Xup[k]).T
        return np.concatenate([f[k] @ self.ST[k] for k in range(n)], -1)
