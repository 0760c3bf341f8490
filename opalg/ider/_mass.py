"""ℳ(q) of one state of a chain of 1-dof joints, in Python floats, for the integrator's RHS.

:func:`opalg.crba_world.mass_matrix` runs ~50 numpy calls on arrays of a few entries for one
state; an Ider run asks for one state thousands of times, where the calls' overhead is ~5x the
arithmetic.  :class:`ChainMass` performs the same operations of
:func:`opalg.crba_world.world_columns` (the per-body placements, the frame-0 composition, the
inertias about the frame-0 origin, the inward composite sums, the columns S⁰ and F⁰) on Python
floats, each product and sum rounded once as there:

* the elementwise steps and cross products are the same IEEE operations;
* the ``einsum`` contractions add their products one after the other, in index order, as
  numpy's ``einsum`` does for one state (no fused multiply-add);
* the products by constants (the axis-function coefficients, the mass centre, the rotational
  inertia, the joint axis) go through BLAS there; :func:`ChainMass.for_model` accepts a model
  only when each of their sums has at most one non-zero constant, so the result is that single
  product, rounded once, whatever order or fused multiply-add BLAS uses;
* the last step, ℳ(i, j) = S⁰(i)·F⁰(j), is the very ``np.matmul`` call of
  :func:`opalg.crba_world.dense_from_columns` (same shapes and layout), not re-derived.

So ℳ is bit for bit that of the common-frame route (tests/test_ider.py compares them on many
states and both inertia readings).
"""

from __future__ import annotations

import numpy as np

from .. import crba_world


def _one_nonzero_per_row(C) -> bool:
    return bool(np.all(np.count_nonzero(np.asarray(C), axis=-1) <= 1))


class ChainMass:
    """ℳ(q) of a serial chain of 1-dof joints of one axis kind, numeric (see the module docstring).

    Build with :meth:`for_model`; call with a finite float64 q of shape (N,).
    """

    def __init__(self, P, kind, C, r0, r1, order, parents):
        self.P, self.kind, self.order, self.parents = P, kind, order, parents
        self.n = len(order)
        self.C = np.asarray(C).tolist()          # (n, 9, m): Eᵀ entries from [1, f_1(q), …]
        self.r0 = r0[..., 0].tolist()            # (n, 3)
        self.r1 = r1[..., 0].tolist()
        self.m = P.m.tolist()
        self.c = P.c.tolist()
        self.JcT = P.JcT[:, 0].tolist()          # (n, 3, 3)
        self.Sa = P.S_const[:, :3].tolist()      # (N, 3), N == n
        self.msum = P.msum.tolist()
        self.not_anc = P.not_anc
        self._Sb = np.empty((1, self.n, 6))
        self._Fb = np.empty((1, 6, self.n))

    @classmethod
    def for_model(cls, model):
        """A :class:`ChainMass` for ``model``, or None where the argument of the module docstring
        does not hold (then the caller takes the common-frame route)."""
        P = crba_world.plan(model)
        if not P.numeric or P.groups is None or P.others or len(P.groups) != 1 or not P.identity_dofs:
            return None
        if getattr(P, "S_linear", True) or model.nq != model.ndof:
            return None
        kind, ks, dofs, C, r0, r1 = P.groups[0]
        if C.shape[-1] != 3:   # Eᵀ from [1, f1(q), f2(q)]: a revolute axis
            return None
        n = model.n
        order = list(model.order)
        # a chain labelled in order: body k's parent is k − 1, one body per depth level
        if order != list(range(n)) or list(model.parents) != list(range(-1, n - 1)):
            return None
        if ks.tolist() != order or dofs.tolist() != order or not P.all_related:
            return None
        if not all(len(ks_) == 1 and unique for ks_, _, unique in P.levels):
            return None
        Jc_off = P.Jc - P.Jc * np.eye(3)
        if not (_one_nonzero_per_row(C) and _one_nonzero_per_row(P.c[:, None, :])
                and not np.any(Jc_off) and _one_nonzero_per_row(P.S_const[:, :3])):
            return None
        return cls(P, kind, C, r0, r1, order, list(model.parents))

    def __call__(self, q: np.ndarray) -> np.ndarray:
        """ℳ(q), a new (N, N) array, bit for bit ``crba_world.mass_matrix(model, q[None])[0]``.

        Every sum is written out left to right from 0.0, as the contractions add (Python
        evaluates ``0.0 + a*b + c*d`` as ``(0.0 + a*b) + c*d``).
        """
        n = self.n
        f1, f2 = (f[:, 0].tolist() for f in self.kind.basis(q[:, None]))   # Qg = q[:, dofs].T
        ql = q.tolist()
        A, pw = [None] * n, [None] * n
        for k in range(n):
            # T[k] = [[Eᵀ, r], [0, 1]]: Eᵀ = C @ [1, f1, f2] (one non-zero term per entry), r = r0 + r1 q
            a, b, c = 1.0, f1[k], f2[k]
            e = [0.0 + x * a + y * b + z * c for x, y, z in self.C[k]]
            qk = ql[k]
            r = [x + y * qk for x, y in zip(self.r0[k], self.r1[k])]
            p = self.parents[k]
            if p == -1:
                A[k] = [e[0:3], e[3:6], e[6:9]]
                pw[k] = r
                continue
            # [A_k, p_k] = [A_p, p_p] T[k] (einsum over T's 4 rows, the last (0, 0, 0, 1))
            Ak = []
            pk = []
            for (h0, h1, h2), h3 in zip(A[p], pw[p]):
                Ak.append([0.0 + h0 * e[0] + h1 * e[3] + h2 * e[6] + h3 * 0.0,
                           0.0 + h0 * e[1] + h1 * e[4] + h2 * e[7] + h3 * 0.0,
                           0.0 + h0 * e[2] + h1 * e[5] + h2 * e[8] + h3 * 0.0])
                pk.append(0.0 + h0 * r[0] + h1 * r[1] + h2 * r[2] + h3 * 1.0)
            A[k], pw[k] = Ak, pk
        hc, Jw, cw = [None] * n, [None] * n, [None] * n
        for k in range(n):
            Ak, (c0, c1, c2), mk, JcT = A[k], self.c[k], self.m[k], self.JcT[k]
            cwk = [pi + (0.0 + c0 * a0 + c1 * a1 + c2 * a2) for pi, (a0, a1, a2) in zip(pw[k], Ak)]
            hck = [mk * x for x in cwk]
            # (A J_c)[i][l] = Σ_j JcT[l][j] A[i][j] (one non-zero term), then (A J_c) Aᵀ
            AJ = [[0.0 + j0 * a0 + j1 * a1 + j2 * a2 for j0, j1, j2 in JcT] for a0, a1, a2 in Ak]
            J = [[0.0 + u0 * a0 + u1 * a1 + u2 * a2 for a0, a1, a2 in Ak] for u0, u1, u2 in AJ]
            mcc = [[h * x for x in cwk] for h in hck]
            J = [[x - y for x, y in zip(Ji, mi)] for Ji, mi in zip(J, mcc)]
            tr = mcc[0][0] + mcc[1][1] + mcc[2][2]
            for i in range(3):
                J[i][i] = J[i][i] + tr
            hc[k], Jw[k], cw[k] = hck, J, cwk
        for k in reversed(self.order[1:]):        # inward: R⁰(℘k) += R⁰(k)
            p = self.parents[k]
            hc[p] = [a + b for a, b in zip(hc[p], hc[k])]
            Jw[p] = [[a + b for a, b in zip(ra, rb)] for ra, rb in zip(Jw[p], Jw[k])]
        Sb, Fb = self._Sb, self._Fb
        for k in range(n):
            s0, s1, s2 = self.Sa[k]
            z0, z1, z2 = w = [0.0 + s0 * a0 + s1 * a1 + s2 * a2 for a0, a1, a2 in A[k]]
            y0, y1, y2 = pw[k]
            v0, v1, v2 = v = [y1 * z2 - y2 * z1, y2 * z0 - y0 * z2, y0 * z1 - y1 * z0]
            h0, h1, h2 = hc[k]
            ms = self.msum[k]
            Sb[0, k] = w + v
            Fb[0, :, k] = [0.0 + j0 * z0 + j1 * z1 + j2 * z2 + hv for (j0, j1, j2), hv in
                           zip(Jw[k], (h1 * v2 - h2 * v1, h2 * v0 - h0 * v2, h0 * v1 - h1 * v0))] + \
                          [ms * v0 - (h1 * z2 - h2 * z1), ms * v1 - (h2 * z0 - h0 * z2),
                           ms * v2 - (h0 * z1 - h1 * z0)]
        G = np.matmul(Sb, Fb)               # the call of crba_world.dense_from_columns
        np.copyto(G, G.swapaxes(-1, -2), where=self.not_anc)
        return G[0]
