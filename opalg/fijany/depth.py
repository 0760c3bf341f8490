r"""Critical paths of forward dynamics, counted on the block operations actually performed (I5).

Every intermediate is a :class:`Traced` value that carries its *depth*: the length of the
longest chain of block operations that produced it.  A block operation (:meth:`Tracer.op`)
runs a function on a bounded number of blocks and gives its outputs the depth
``1 + max(depth of its inputs)``; the data of the model and of the state (M(k), Xup[k], S(k),
a(k), b(k), T(k)) enter at depth 0.  The critical path of an algorithm is the largest depth of
its results: the number of steps it needs with unboundedly many processors (O(n) suffice).

* ``aba``: one fused block step per body in the inward pass (P(k), D(k), u(k) from the children)
  and one in the outward pass (q̈(k) from the parent) — 2·(tree depth) on any tree.
* ``cfa``: the I4 steps are neighbour-local (y, the right-hand side W y − B T, the final q̈); the
  A-solve is block cyclic reduction (I3), one fused step per block per level down and one per
  level back up: 2⌈log₂ d⌉ + 1 over the d depth levels, plus the local steps.  On a tree the
  sibling fill-in does not lengthen this path; it widens the level blocks (each step then
  works on a block as large as a whole depth level).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from opalg.errors import StateError
from opalg.model.kinematics import body_kinematics, check_state
from opalg.model.multibody import Model
from opalg.fijany.factors import _factors


@dataclass
class Traced:
    """A value and the depth of the block operation that produced it."""

    value: object
    depth: int = 0


@dataclass
class Tracer:
    """Runs block operations and records their depths (see the module docstring)."""

    ops: int = 0
    width: dict = field(default_factory=dict)

    def op(self, fn, *inputs, n_out: int = 1):
        """``fn`` on the values of ``inputs`` (Traced, or lists of them, or None) as one block operation."""
        flat = [x for i in inputs for x in (i if isinstance(i, list) else [i]) if isinstance(x, Traced)]
        depth = 1 + max((x.depth for x in flat), default=0)
        self.ops += 1
        self.width[depth] = self.width.get(depth, 0) + 1
        unwrap = lambda i: [x.value if isinstance(x, Traced) else x for x in i] if isinstance(i, list) \
            else (i.value if isinstance(i, Traced) else i)  # noqa: E731
        out = fn(*[unwrap(i) for i in inputs])
        return Traced(out, depth) if n_out == 1 else tuple(Traced(o, depth) for o in out)


@dataclass
class CriticalPath:
    """Result of :func:`critical_path`: ``depth`` (critical path), ``ops`` (block operations),
    ``width`` (operations per depth), ``qdd`` (the accelerations computed), ``max_block``."""

    algorithm: str
    depth: int
    ops: int
    width: list
    qdd: np.ndarray
    max_block: int


def _aba(model: Model, kin, tau, tr: Tracer) -> list:
    n, S, M = model.n, kin.S, model.I_spatial
    inward = [None] * n

    def step_in(Mk, bk_, Sk, ck, tk, Xc, kids):
        IA, pA = Mk.copy(), bk_.copy()
        for X, (Ia, pa, *_rest) in zip(Xc, kids):
            IA, pA = IA + X.T @ Ia @ X, pA + X.T @ pa
        U = IA @ Sk
        D = Sk.T @ U
        u = tk - Sk.T @ pA
        Ia = IA - U @ np.linalg.solve(D, U.T)
        return Ia, pA + Ia @ ck + U @ np.linalg.solve(D, u), U, D, u

    for k in reversed(model.order):
        ch = model.children[k]
        inward[k] = tr.op(lambda *a: step_in(*a[:6], list(a[6])), M[k], kin.b[k], S[k], kin.a[k],
                          tau[model.dof_slice[k]], [kin.Xup[c] for c in ch], [inward[c] for c in ch])
    acc, qdd = [None] * n, [None] * n

    def step_out(Xk, ck, Sk, ap, blocks):
        _, _, U, D, u = blocks
        a = ck + (0 if ap is None else Xk @ ap)
        qk = np.linalg.solve(D, u - U.T @ a)
        return a + Sk @ qk, qk

    for k in model.order:
        p = model.parents[k]
        acc[k], qdd[k] = tr.op(step_out, kin.Xup[k], kin.a[k], S[k], None if p < 0 else acc[p], inward[k], n_out=2)
    return qdd


def _bcr(D, L, U, b, tr: Tracer) -> list:
    """Block cyclic reduction on Traced blocks (lists; L[i] = A(i+1,i), U[i] = A(i,i+1))."""
    n = len(D)
    if n == 1:
        return [tr.op(np.linalg.solve, D[0], b[0])]
    get = lambda xs, i: xs[i] if 0 <= i < len(xs) else None  # noqa: E731

    def reduce(Dj, bj, Dl, Ll, Ul, bl, Dr, Lr, Ur, br, Lrr, Urr):
        # left odd j−1: row j has L_{j−1} = Ll, column j of row j−1 has U_{j−1} = Ul
        # right odd j+1: row j has U_j = Ur, row j+1 col j has L_j = Lr; Lrr, Urr couple j+1 and j+2
        Dn, bn, Ln, Un = Dj.copy(), bj.copy(), None, None
        if Dl is not None:
            X = np.linalg.solve(Dl, np.concatenate([Ul, bl], -1))
            Dn, bn = Dn - Ll @ X[:, :Ul.shape[1]], bn - Ll @ X[:, Ul.shape[1]:]
        if Dr is not None:
            X = np.linalg.solve(Dr, np.concatenate([Lr, br] + ([Urr] if Urr is not None else []), -1))
            c = Lr.shape[1]
            Dn, bn = Dn - Ur @ X[:, :c], bn - Ur @ X[:, c:c + br.shape[1]]
            if Lrr is not None:
                Ln, Un = -(Lrr @ X[:, :c]), -(Ur @ X[:, c + br.shape[1]:])
        return Dn, bn, Ln, Un

    evens = [tr.op(reduce, D[j], b[j], get(D, j - 1), get(L, j - 1), get(U, j - 1), get(b, j - 1),
                   get(D, j + 1), get(L, j), get(U, j), get(b, j + 1), get(L, j + 1), get(U, j + 1), n_out=4)
             for j in range(0, n, 2)]
    h = len(evens)
    x_even = _bcr([e[0] for e in evens], [e[2] for e in evens[:h - 1]], [e[3] for e in evens[:h - 1]],
                  [e[1] for e in evens], tr)

    def back(Di, Li, Ui, bi, xl, xr):
        r = bi - Li @ xl - (0 if xr is None else Ui @ xr)
        return np.linalg.solve(Di, r)

    x = [None] * n
    x[0::2] = x_even
    for i in range(1, n, 2):
        x[i] = tr.op(back, D[i], L[i - 1], get(U, i), b[i], x[i - 1], get(x, i + 1))
    return x


def _cfa(model: Model, kin, tau, tr: Tracer, F) -> list:
    n = model.n
    nc = [6 - s for s in model.joint_sizes]
    y = [tr.op(lambda ak, bk_, Mi, Xk, bp, Mp: ak + Mi @ bk_ - (0 if bp is None else Xk @ Mp @ bp),
               kin.a[k], kin.b[k], F.Minv[k], kin.Xup[k], None if model.parents[k] < 0 else kin.b[model.parents[k]],
               None if model.parents[k] < 0 else F.Minv[model.parents[k]]) for k in range(n)]
    Bd, Cd = F.B.dense(), F.C.dense()
    Wd = F.W.blocks
    lev_of = {k: d for d, lev in enumerate(F.levels) for k in lev}
    rows = np.cumsum([0] + [sum(nc[k] for k in lev) for lev in F.levels])
    # A's level blocks and B's level rows are formed from model data by local operations (depth 1)
    Dl = [tr.op(lambda a: a, d) for d in F.A.diag_blocks()]
    Ll, Ul = ([tr.op(lambda a: a, x) for x in xs] for xs in F.A.coupling_blocks())
    rhs = [tr.op(lambda ys, Bl: (np.concatenate([Wd[k] @ yk for k, yk in zip(lev, ys)]) - Bl @ tau)[:, None],
                 [y[k] for k in lev], Bd[rows[d]:rows[d + 1]]) for d, lev in enumerate(F.levels)]
    Fc = _bcr(Dl, Ll, Ul, rhs, tr)
    qdd = []
    for k in range(n):
        d, sl = lev_of[k], model.dof_slice[k]
        near = [e for e in (d - 1, d, d + 1) if 0 <= e < len(F.levels)]

        def last(fcs, yk, Hh=F.H_hat.blocks[k], near=near, sl=sl):
            full = np.zeros(rows[-1])
            for e, f in zip(near, fcs):
                full[rows[e]:rows[e + 1]] = f[:, 0]
            return Cd[sl] @ tau + Bd[:, sl].T @ full - Hh @ yk
        qdd.append(tr.op(last, [Fc[e] for e in near], y[k]))
    return qdd


def critical_path(model: Model, q, qd, tau, algorithm: str = "cfa") -> CriticalPath:
    r"""The critical path of forward dynamics by ``algorithm`` ("aba" or "cfa"), counted (I5).

    Runs the algorithm on one state with every block operation traced (module docstring) and
    returns the depth of its dependency graph, the number of block operations, the operations
    per depth, and q̈ (equal to :func:`opalg.aba`: the traced run is a real one).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.fijany import critical_path
    >>> m = opalg.random_model(16, "chain", seed=0)
    >>> z = np.zeros(m.ndof)
    >>> critical_path(m, z, z, z, "aba").depth, critical_path(m, z, z, z, "cfa").depth
    (32, 12)
    """
    if algorithm not in ("aba", "cfa"):
        raise StateError(f"critical_path: algorithm must be 'aba' or 'cfa', got {algorithm!r}")
    q, qd, tau = (check_state(model, x, nm) for x, nm in ((q, "q"), (qd, "qd"), (tau, "tau")))
    if q.ndim != 1 or qd.ndim != 1 or tau.ndim != 1:
        raise StateError(f"critical_path traces one state: q, qd, tau must have shape ({model.ndof},), "
                         f"got {q.shape}, {qd.shape}, {tau.shape}")
    kin = body_kinematics(model, q, qd)
    tr = Tracer()
    if algorithm == "aba":
        out, max_block = _aba(model, kin, tau, tr), 6
    else:
        F = _factors(model, q, kin)
        out, max_block = _cfa(model, kin, tau, tr, F), max(F.A.rows)
    depth = max(x.depth for x in out)
    qdd = np.concatenate([np.reshape(x.value, -1) for x in out])
    return CriticalPath(algorithm, depth, tr.ops, [tr.width.get(d, 0) for d in range(1, depth + 1)],
                        qdd, max_block)

