r"""The common-frame CRBA (docs/REFERENCE.md D8): one 6-vector dot product per entry of ℳ.

Express every motion subspace and every composite inertia in one frame ``0`` (the ground
frame): ``S⁰(i) = ⁰X_i H*(i)`` and ``R⁰(k) = Σ_{j ⪯ k} ⁰X_j^{-*} M(j) ⁰X_j^{-1}``.  Then

.. math:: ℳ(i, j) = H(i) φ(i, j) R(j) H^*(j) = S^0(i)^* F^0(j),\qquad F^0(j) = R^0(j) S^0(j),
          \quad i ⪰ j,

because ``φ(i, j) = ⁰X_i^* ⁰X_j^{-*}`` (A1).  No transform is applied per (body, ancestor) step:
the composite sum ``R⁰(℘k) += R⁰(k)`` is an addition, and each entry is a dot product of
length 6.  The subspaces and inertias are kept as 3-vectors and 3×3 blocks (``R⁰ = [[J, h̃],
[−h̃, m]]``: mass, first moment, rotational inertia about the frame's origin).

Arrays here are laid out *body-major and state-last*, (bodies, 3, 3, states): ``einsum`` over
contiguous state axes is several times faster than numpy's stacked matmul on 3×3 or 6×6
matrices, every body is processed in the same call, and the only loops run once per depth
level of the tree (all bodies of a level at once: the frame-0 placements outward, the
composite sums inward), not once per body.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg import opcount
from opalg.model.kinematics import _split_transform, up_transform
from opalg.model.multibody import Model


# ----------------------------------------------------------------------------------------
# counted kernels on state-last arrays (…, 3, b), (…, 3, 3, b)
# ----------------------------------------------------------------------------------------
def _count(out: np.ndarray, per_entry: int, kind: str) -> None:
    if opcount._ACTIVE:
        opcount.tally(out.size // out.shape[-1] * per_entry, kind)


def _times_const(A, x):
    """A x for (n, 3, 3, b) A and a constant (n, 3) x, as n·3 BLAS products (1×3)(3×b)."""
    return np.matmul(x[:, None, None, :], A)[:, :, 0]


def _cross(a, b):
    """a × b along axis −2 of (…, 3, b) arrays: 6 multiply-adds."""
    a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    b0, b1, b2 = b[..., 0, :], b[..., 1, :], b[..., 2, :]
    out = np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -2)
    _count(out, 2, "world")
    return out


# ----------------------------------------------------------------------------------------
# per-model constants
# ----------------------------------------------------------------------------------------
class _Plan:
    """Depth levels, the dof → body map, the ancestor masks and the body inertia parameters."""

    def __init__(self, model: Model):
        n, N = model.n, model.ndof
        depth = [0] * n
        for k in model.order:
            p = model.parents[k]
            depth[k] = 0 if p == -1 else depth[p] + 1
        self.levels = []
        for d in range(max(depth) + 1):
            ks = np.array([k for k in model.order if depth[k] == d])
            ps = np.array([model.parents[k] for k in ks])
            self.levels.append((ks, ps, len(set(ps.tolist())) == len(ps)))
        self.body_of = np.concatenate([np.full(model.joints[k].ndof, k) for k in range(n)])
        self.identity_dofs = N == n
        # anc[i, j]: body(i) ⪰ body(j) (ancestor or the same body), in label order.
        anc_body = np.zeros((n, n), bool)
        for j in range(n):
            k = j
            while k != -1:
                anc_body[k, j] = True
                k = model.parents[k]
        self.anc = anc_body[np.ix_(self.body_of, self.body_of)]
        self.not_anc = ~self.anc
        self.related = self.anc | self.anc.T
        self.all_related = bool(self.related.all())
        I = np.array([np.asarray(model.I_spatial[k]) for k in range(n)])
        I = I.astype(float) if I.dtype != object else I
        self.m = I[:, 5, 5]
        hx = I[:, :3, 3:]                                   # h̃ = m c̃
        h = np.stack([hx[:, 2, 1], hx[:, 0, 2], hx[:, 1, 0]], -1)
        # mass centre c and the rotational inertia J_c about it (J_O = J_c + m(|c|²1 − c cᵀ));
        # a massless body has h = 0 and J_c = J_O.
        if I.dtype.kind == "f":
            c = np.divide(h, self.m[:, None], out=np.zeros_like(h), where=self.m[:, None] > 0)
            cc = np.einsum("ki,kj->kij", c, c)
            self.Jc = I[:, :3, :3] - self.m[:, None, None] * (np.einsum("kii->k", cc)[:, None, None] * np.eye(3) - cc)
            self.c = c                                            # (n, 3)
            self.JcT = np.ascontiguousarray(self.Jc.transpose(0, 2, 1))[:, None]   # (n, 1, 3, 3)
        msum = self.m.copy()
        for k in reversed(model.order):
            if model.parents[k] != -1:
                msum[model.parents[k]] += msum[k]
        self.msum = msum
        self.groups, self.others = _groups(model)
        if self.groups is not None and not self.others:   # 1-dof joints only: S constant (N, 6)
            self.S_const = np.concatenate([model._tree_transform(k).S.T for k in range(n)], 0).astype(float)
            self.S_linear = bool(np.any(self.S_const[:, 3:]))
        #: numeric inertias and joints: the common-frame route applies
        self.numeric = self.groups is not None and I.dtype.kind == "f"


def plan(model: Model) -> _Plan:
    """The cached :class:`_Plan` of ``model``: depth levels, masks, inertia parameters.

    Examples
    --------
    >>> import opalg
    >>> from opalg.algorithms.crba_world import plan
    >>> P = plan(opalg.random_model(5, "tree", seed=0))
    >>> P.numeric, len(P.levels) <= 5
    (True, True)
    """
    p = model._crba_world
    if p is None:
        p = model._crba_world = _Plan(model)
    return p


# ----------------------------------------------------------------------------------------
# the common-frame columns S⁰, F⁰
# ----------------------------------------------------------------------------------------
#: Entries of a flattened 6x6 motion transform that hold Eᵀ (E: rows 0-2, columns 0-2), row-major.
_SEL9 = np.array([6 * j + i for i in range(3) for j in range(3)])


def _groups(model: Model):
    """1-dof bodies grouped by axis kind, and the other (multi-axis) bodies; (None, None) if symbolic.

    A group is (kind, bodies, dofs, C, r0, r1): ``Eᵀ(q)`` (flattened, 9 entries) = C (g, 9, m)
    times the kind's basis [1, f_1(q), …], and the origin of body k in its parent's frame
    ``r(q) = r0 + r1 q`` (linear for revolute, prismatic and helical axes: checked here at
    three more points, else the body is treated as a multi-axis one).
    """
    groups, others = {}, []
    for k in range(model.n):
        joint = model.joints[k]
        if bk.is_symbolic(joint.axes, list(joint.pitches), model.X_tree[k]):
            return None, None
        if joint.ndof != 1:
            others.append(k)
            continue
        fast = model._tree_transform(k)
        if fast.stacked is None:
            return None, None
        rs = [_split_transform(fast(np.array(t)))[1] for t in (0.0, 1.0, -0.7, 2.3)]
        r0, r1 = rs[0], rs[1] - rs[0]
        if not all(np.allclose(r0 + t * r1, rt, rtol=1e-12, atol=1e-12 * (1 + np.abs(r0).max()))
                   for t, rt in ((-0.7, rs[2]), (2.3, rs[3]))):
            others.append(k)
            continue
        groups.setdefault(fast.kind.code, (fast.kind, []))[1].append((k, fast, r0, r1))
    out = []
    for kind, members in groups.values():
        ks = np.array([k for k, *_ in members])
        C = np.stack([f.stacked[:, _SEL9].T for _, f, *_ in members])
        r0 = np.stack([m[2] for m in members])[..., None]
        r1 = np.stack([m[3] for m in members])[..., None]
        out.append((kind, ks, np.array([model.q_slice[k].start for k in ks]), C, r0, r1))
    return out, others


def _state_last(model: Model, q):
    """The parent-to-body placements as augmented (n, 4, 4, b) ``[[Eᵀ, r], [0, 1]]``, and S.

    ᵏX_℘ = [[E, 0], [−E r̃, E]]: E rotates ℘-coordinates into k-coordinates, r is the origin of k
    in ℘-coordinates.  1-dof bodies of one axis kind are evaluated together, Eᵀ = Σ f_i(q) C_i
    as one stacked (9 × m)(m × b) product per kind straight into the state-last layout, and
    r = r0 + r1 q; multi-axis joints go through their 6×6 transforms.  S is (N, 6, b) or, when
    constant, (N, 6).
    """
    P = plan(model)
    b, n = q.shape[0], model.n
    T = np.zeros((n, 4, 4, b), np.result_type(q, float))
    T[:, 3, 3] = 1
    for kind, ks, dofs, C, r0, r1 in P.groups:
        Qg = q[:, dofs].T                                             # (g, b)
        T[ks, :3, :3] = (C @ np.stack([np.ones_like(Qg), *kind.basis(Qg)], 1)).reshape(len(ks), 3, 3, b)
        T[ks, :3, 3] = r0 + r1 * Qg[:, None, :]
    if not P.others:
        return T, P.S_const
    S = [None] * n
    for k in P.others:
        X, Sk = up_transform(model, k, q[:, model.q_slice[k]])
        X = np.broadcast_to(X, (b, 6, 6))
        T[k, :3, :3] = X[:, :3, :3].transpose(2, 1, 0)
        T[k, :3, 3] = _split_transform(X)[1].T
        S[k] = np.broadcast_to(Sk, (b,) + Sk.shape[-2:]).transpose(2, 1, 0)
    for k in range(n):
        if S[k] is None:
            S[k] = np.broadcast_to(model._tree_transform(k).S.T[:, :, None], (1, 6, b))
    return T, np.concatenate(S, 0)


def world_columns(model: Model, q):
    """``S⁰ = (w, v)`` and ``F⁰ = R⁰S⁰ = (Fa, Fl)`` of every dof, each (N, 3, b), for q (b, N) (D8).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.crba_world import world_columns
    >>> m = opalg.random_model(4, "chain", seed=0, joints="revolute")
    >>> w, v, Fa, Fl = world_columns(m, np.zeros((1, 4)))
    >>> Mq = opalg.crba(m, np.zeros(4))
    >>> bool(np.isclose(w[3, :, 0] @ Fa[3, :, 0] + v[3, :, 0] @ Fl[3, :, 0], Mq[3, 3]))   # ℳ(3, 3)
    True
    """
    P = plan(model)
    T, S = _state_last(model, q)
    n, b = T.shape[0], T.shape[-1]
    # [A_k, p_k] = [A_℘, p_℘] [[Eᵀ, r], [0, 1]]: A_k = (ᵏE₀)ᵀ, p_k the origin of k in frame 0
    Hw = np.empty((n, 3, 4, b), T.dtype)
    ks, _, _ = P.levels[0]
    Hw[ks] = T[ks, :3]
    for ks, ps, _ in P.levels[1:]:                   # outward, one level at a time
        Hw[ks] = np.einsum("nikb,nkjb->nijb", Hw[ps], T[ks])
        _count(Hw[ks], 4, "world")
    A, pw = Hw[:, :, :3], Hw[:, :, 3]
    # body inertias in frame 0, about its origin: mass centre c⁰ = p + A c, h⁰ = m c⁰,
    # J⁰ = A J_c Aᵀ + m(|c⁰|²1 − c⁰c⁰ᵀ)  (parallel axes).  Rw = [h⁰ | J⁰] (n, 12, b).
    cw = pw + _times_const(A, P.c)
    Rw = np.empty((n, 12, b), T.dtype)
    hc, Jw = Rw[:, :3], Rw[:, 3:].reshape(n, 3, 3, b)
    np.multiply(P.m[:, None, None], cw, out=hc)
    np.einsum("nilb,njlb->nijb", np.matmul(P.JcT, A), A, out=Jw)    # A J_c (BLAS), then (A J_c) Aᵀ
    mcc = hc[:, :, None, :] * cw[:, None, :, :]
    Jw -= mcc
    tr = mcc[:, 0, 0] + mcc[:, 1, 1] + mcc[:, 2, 2]
    for i in range(3):
        Jw[:, i, i] += tr
    if opcount._ACTIVE:  # A c (9), m c⁰ (3), A J_c Aᵀ (27 + 27), m c⁰ c⁰ᵀ (9) per body
        opcount.tally(75 * n, "world")
    for ks, ps, unique in reversed(P.levels[1:]):   # inward: R⁰(℘k) += R⁰(k), additions only
        if unique:
            Rw[ps] += Rw[ks]
        else:
            np.add.at(Rw, ps, Rw[ks])
    if not P.identity_dofs:
        A, pw, Rw = A[P.body_of], pw[P.body_of], Rw[P.body_of]
        hc, Jw = Rw[:, :3], Rw[:, 3:].reshape(-1, 3, 3, b)
    if S.ndim == 2:   # constant subspaces
        w = _times_const(A, S[:, :3])
        v = _cross(pw, w)
        if P.S_linear:   # some prismatic or helical axis (A s_l = 0 on revolute-only models)
            v += _times_const(A, S[:, 3:])
            _count(w, 3, "world")
    else:
        w = np.einsum("nikb,nkb->nib", A, S[:, :3])
        v = np.einsum("nikb,nkb->nib", A, S[:, 3:]) + _cross(pw, w)
        _count(w, 3, "world")
    _count(w, 3, "world")   # A s_a (9), and A s_l (9) above
    ms = P.msum[P.body_of][:, None, None]
    Fa = np.einsum("nikb,nkb->nib", Jw, w) + _cross(hc, v)
    Fl = ms * v - _cross(hc, w)
    _count(Fl, 4, "world")  # J⁰ w (9) and m v (3)
    return w, v, Fa, Fl


def dense_from_columns(model: Model, w, v, Fa, Fl, out=None) -> np.ndarray:
    """ℳ (b, N, N) from the columns: ℳ(i, j) = S⁰(i)·F⁰(j) where body(i) ⪰ body(j), mirrored.

    One batched (N×6)(6×N) product gives every S⁰(i)·F⁰(j); the ancestor mask keeps the
    meaningful ones (6N² multiply-adds, at most twice the 6·nnz of the entries themselves
    on a chain: the price of one BLAS call per state).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.crba_world import dense_from_columns, world_columns
    >>> m = opalg.random_model(4, "tree", seed=1)
    >>> q = np.random.default_rng(0).normal(size=(2, m.ndof))
    >>> bool(np.allclose(dense_from_columns(m, *world_columns(m, q)), opalg.crba(m, q, frame="body")))
    True
    """
    P = plan(model)
    N, b = w.shape[0], w.shape[-1]
    Sb = np.empty((b, N, 6), w.dtype)
    Sb[..., :3], Sb[..., 3:] = w.transpose(2, 0, 1), v.transpose(2, 0, 1)
    Fb = np.empty((b, 6, N), Fa.dtype)
    Fb[:, :3], Fb[:, 3:] = Fa.transpose(2, 1, 0), Fl.transpose(2, 1, 0)
    G = np.matmul(Sb, Fb, out=out)
    if opcount._ACTIVE:
        opcount.tally(6 * N ** 2, "world-dense")
    # G(i, j) is ℳ(i, j) where body(i) ⪰ body(j); the other triangle is its mirror.  The
    # copy reads only entries it does not write (or, for unrelated pairs, zeroes them next).
    np.copyto(G, G.swapaxes(-1, -2), where=P.not_anc)
    if not P.all_related:
        G[:, ~P.related] = 0
    return G


def entries_from_columns(w, v, Fa, Fl, rows, cols) -> np.ndarray:
    """ℳ(rows[e], cols[e]) = S⁰(rows[e])·F⁰(cols[e]) for each stored entry, (b, nnz): 6 per entry (D8).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.crba_world import entries_from_columns, world_columns
    >>> m = opalg.random_model(4, "chain", seed=2)
    >>> q = np.zeros((1, m.ndof))
    >>> vals = entries_from_columns(*world_columns(m, q), np.array([0, 1]), np.array([1, 1]))
    >>> bool(np.allclose(vals[0], opalg.crba(m, q[0])[[0, 1], [1, 1]]))
    True
    """
    out = np.einsum("eib,eib->eb", w[rows], Fa[cols]) + np.einsum("eib,eib->eb", v[rows], Fl[cols])
    _count(out, 6, "world-entries")
    return out.T


#: States per pass of the common-frame route: its (bodies, 3, 3, states) temporaries then stay
#: in the L2 cache (measured with benchmarks/bench_pinocchio.py's models: ~1.5x less time per
#: state than passes of 1024 on the Panda and on a 64-link chain).
SUBCHUNK = 256


def mass_matrix(model: Model, q, entries=None) -> np.ndarray:
    """ℳ (b, N, N), or its entries ℳ(rows, cols) (b, nnz) if ``entries = (rows, cols)``, for q (b, N) (D8).

    Runs :func:`world_columns` on passes of :data:`SUBCHUNK` states (one pass while an
    :func:`opalg.opcount.counting` context is active, so that counts stay per state).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.crba_world import mass_matrix
    >>> m = opalg.random_model(4, "tree", seed=3)
    >>> q = np.random.default_rng(0).normal(size=(600, m.ndof))
    >>> bool(np.allclose(mass_matrix(m, q), opalg.crba(m, q, frame="body")))
    True
    """
    b, N = q.shape[0], model.ndof      # q is (b, nq): nq > N with free joints
    dtype = np.result_type(q, float)
    out = np.empty((b, N, N) if entries is None else (b, len(entries[0])), dtype)
    step = b if opcount._ACTIVE else SUBCHUNK
    for i in range(0, b, step):
        cols = world_columns(model, q[i:i + step])
        if entries is None:
            dense_from_columns(model, *cols, out=out[i:i + step])
        else:
            out[i:i + step] = entries_from_columns(*cols, *entries)
    return out
