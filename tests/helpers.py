"""Shared test helpers for the opalg test suite.

* ``assert_close`` / ``rel_err``: relative comparisons with a readable message;
* tree utilities computed from the parent array only (ancestors, depth, nearest
  common ancestor), independent of ``opalg.Model``'s own bookkeeping;
* ``dense_soa``: the SOA operators as dense matrices, with φ and ψ obtained from
  ℰφ and ℰψ by a *dense inverse* (not by opalg's SPO recursion);
* ``make_model``: the seeded random test models (chains, trees, forests,
  relabelled trees, tip-to-base "Jain" numbering).
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import opalg

import ledger

#: A string that sympify() would *evaluate*: it sets FLAG on builtins (and returns 1).
FLAG = "_opalg_test_string_was_evaluated"
EVIL = f"__import__('builtins').__setattr__('{FLAG}', True) or 1"


@pytest.fixture(autouse=True)
def no_string_evaluated():
    """Autouse where imported: the test fails if any string was evaluated (EVIL sets FLAG)."""
    if hasattr(builtins, FLAG):
        delattr(builtins, FLAG)
    yield
    evaluated = hasattr(builtins, FLAG)
    if evaluated:
        delattr(builtins, FLAG)
    assert not evaluated, "a string was evaluated"


# ---------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------


def evaluate_float(exprs, values: dict) -> np.ndarray:
    """Float values of sympy expressions (an array of them), the symbols set from ``values``.

    The same numbers as ``float(e.xreplace(values))`` up to round-off, walking each shared
    subexpression once (xreplace rebuilds and re-walks every occurrence: the unsimplified
    entries of a multi-axis joint's symbolic ℳ share most of their subtrees).  Sums and
    products are evaluated in Python floats in sympy's argument order; a node of another kind
    is evaluated by sympy (``float(node.xreplace(values))``).

    >>> import sympy as sp
    >>> x, y = sp.symbols("x y")
    >>> e = sp.sin(x) * (x + y) ** 2 - 3 * sp.cos(x * y) / y
    >>> vals = {x: 0.3, y: -1.7}
    >>> bool(abs(evaluate_float([e], vals)[0] - float(e.subs(vals))) < 1e-14)
    True
    """
    import math

    import sympy as sp

    memo: dict = {}
    funcs = {sp.sin: math.sin, sp.cos: math.cos, sp.tan: math.tan, sp.exp: math.exp}

    def ev(e):
        if e in memo:
            return memo[e]
        if e.is_Symbol:
            v = float(values[e])
        elif e.is_Number:
            v = float(e)
        elif e.is_Add:
            v = math.fsum(ev(a) for a in e.args)
        elif e.is_Mul:
            v = 1.0
            for a in e.args:
                v *= ev(a)
        elif e.is_Pow and e.exp.is_Number:
            v = ev(e.base) ** float(e.exp)
        elif type(e) in funcs:
            v = funcs[type(e)](ev(e.args[0]))
        else:
            v = float(e.xreplace(values))
        memo[e] = v
        return v

    arr = np.asarray(exprs, dtype=object)
    return np.array([ev(sp.sympify(e)) for e in arr.ravel()], dtype=float).reshape(arr.shape)


def rel_err(a, b, scale=None) -> float:
    """||a - b|| / max(||a||, ||b||, scale) (Frobenius norms over all axes).

    ``scale`` sets the reference size when both sides are (close to) zero, e.g.
    the norm of the operands of an identity whose two sides vanish.
    """
    a = np.asarray(a, dtype=complex if np.iscomplexobj(a) or np.iscomplexobj(b) else float)
    b = np.asarray(b, dtype=a.dtype)
    ref = max(np.linalg.norm(a), np.linalg.norm(b), 0.0 if scale is None else float(scale))
    diff = float(np.linalg.norm(a - b))
    if ref == 0.0:
        return diff
    return diff / ref


#: Machine epsilon of float64 (2.2e-16): the unit of every round-off tolerance.
EPS = float(np.finfo(float).eps)


class Tol(float):
    """A tolerance that carries its derivation, ``why`` (shown on failure and in the ledger).

    >>> t = Tol(1e-10, "measured: worst 2e-13 over 200 states, 500x margin")
    >>> float(t), t.why
    (1e-10, 'measured: worst 2e-13 over 200 states, 500x margin')
    """

    why: str

    def __new__(cls, value: float, why: str):
        self = super().__new__(cls, value)
        self.why = why
        return self


def cond_tol(cond: float, k: float = 100.0, what: str = "ℳ") -> Tol:
    """``k·cond·ε``: the forward-error bound of a backward-stable route, with the condition
    number ``cond`` computed in the test (k covers the size-dependent constant of the bound).

    >>> t = cond_tol(1e3, k=10)
    >>> float(t) == 10 * 1e3 * EPS, t.why
    (True, '10·cond(ℳ)·ε, cond = 1.0e+03')
    """
    cond = float(cond)
    return Tol(k * max(cond, 1.0) * EPS, f"{k:g}·cond({what})·ε, cond = {cond:.1e}")


def roundtrip_tol(M, C, x, k: float = 100.0) -> Tol:
    """``k·cond(ℳ)·ε·(1 + ‖C‖/(‖ℳ‖‖x‖))`` for ``aba(rnea(x)) = x``: τ = ℳx + C is rounded at the size
    of its terms, which exceeds ‖ℳx‖ by that factor where the bias dominates, and the solve
    amplifies the rounding by cond(ℳ).

    >>> import numpy as np
    >>> float(roundtrip_tol(np.eye(2), np.zeros(2), np.ones(2), k=10)) == 10 * EPS
    True
    """
    cond = float(np.linalg.cond(M))
    amp = 1 + float(np.linalg.norm(C) / (np.linalg.norm(M, 2) * np.linalg.norm(x)))
    return Tol(k * cond * amp * EPS, f"{k:g}·cond(ℳ)·ε·(1 + ‖C‖/‖ℳ‖‖x‖), cond = {cond:.1e}, "
               f"bias factor {amp:.1f}")


def measured(tol: float, worst: float, over: str) -> Tol:
    """A bound measured over many random cases: ``worst`` seen ``over`` them (>= 10x margin).

    >>> measured(1e-12, 3e-15, "500 random chains and trees").why
    'measured: worst 3e-15 over 500 random chains and trees (333x margin)'
    """
    if not tol >= 10 * worst:
        raise ValueError(f"a measured tolerance needs >= 10x margin: {tol:g} vs worst {worst:g}")
    margin = f"{tol / worst:.0f}x margin" if worst > 0 else "exact in every case"
    return Tol(tol, f"measured: worst {worst:.0e} over {over} ({margin})")


def assert_close(a, b, rtol, what, scale=None) -> float:
    """Assert ``rel_err(a, b, scale) <= rtol``; return the relative error.

    The failure message names the quantity and gives the relative error, the
    largest entrywise deviation and where it occurs.  Inside a test marked
    ``verifies`` the comparison is recorded in the ledger (tests/ledger.py), with
    ``rtol.why`` when ``rtol`` is a :class:`Tol`.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise AssertionError(f"{what}: shapes differ, {a.shape} vs {b.shape}")
    err = rel_err(a, b, scale)
    ledger.check(what, err, rtol)
    if not err <= rtol:  # also catches NaN
        d = np.abs(a - b)
        idx = np.unravel_index(int(np.argmax(d)), d.shape) if d.size else ()
        why = getattr(rtol, "why", None)
        raise AssertionError(
            f"{what}: relative error {err:.3e} > rtol {rtol:.1e}{f' ({why})' if why else ''} "
            f"(max |diff| {d.max() if d.size else 0:.3e} at index {tuple(int(i) for i in idx)}; "
            f"|a| = {np.linalg.norm(a):.3e}, |b| = {np.linalg.norm(b):.3e})"
        )
    return err


# ---------------------------------------------------------------------------
# tree utilities from the parent array
# ---------------------------------------------------------------------------
def ancestors(parents, k) -> list:
    """[k, ℘(k), ℘(℘(k)), ...] up to the root (k itself included: i ⪰ k)."""
    out = []
    while k != -1:
        out.append(k)
        k = parents[k]
    return out


def is_ancestor(parents, i, j) -> bool:
    """i ⪰ j: i is j or an ancestor of j."""
    return i in ancestors(parents, j)


def nca(parents, i, j):
    """Nearest common ancestor i ∧ j, or None if i and j hang from different roots."""
    ai = ancestors(parents, i)
    for a in ancestors(parents, j):
        if a in ai:
            return a
    return None


def tree_depth(parents) -> int:
    """Number of bodies on the longest root-to-leaf path."""
    return max(len(ancestors(parents, k)) for k in range(len(parents)))


def sblk(k) -> slice:
    """Rows/columns of body k in a 6n spatial vector."""
    return slice(6 * k, 6 * k + 6)


# ---------------------------------------------------------------------------
# models and dense operators
# ---------------------------------------------------------------------------
def make_model(kind: str, n: int, seed: int, joints: str = "mixed"):
    """A seeded random test model.

    kind: ``chain``, ``tree``, ``forest`` (tree with 2 roots), ``relabeled``
    (a tree under a random, in general non-topological, relabelling),
    ``jain-chain`` / ``jain-tree`` (tip-to-base numbering: every parent has a
    larger label than its children).
    """
    if kind == "chain":
        return opalg.random_model(n, "chain", seed=seed, joints=joints)
    if kind == "tree":
        return opalg.random_model(n, "tree", seed=seed, joints=joints)
    if kind == "forest":
        return opalg.random_model(n, "tree", seed=seed, joints=joints, n_roots=2)
    if kind == "relabeled":
        base = opalg.random_model(n, "tree", seed=seed, joints=joints)
        perm = np.random.default_rng(1000 + seed).permutation(n)
        return base.relabeled([int(p) for p in perm])
    if kind in ("jain-chain", "jain-tree"):
        base = opalg.random_model(n, kind.split("-")[1], seed=seed, joints=joints)
        # random_model labels parents before children; reversing the labels gives
        # parents larger labels than their children (Jain / tip-to-base).
        return base.relabeled(list(range(n))[::-1])
    raise ValueError(kind)


def random_state(model, seed):
    """(q, qd, qdd, tau) drawn from a seeded normal distribution."""
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=model.ndof) for _ in range(4))


class DenseSOA:
    """Dense matrices of the SOA operators of ``ops`` (a SpatialOperators).

    The per-body blocks come from the operator objects' ``.dense()``; φ and ψ
    are the dense inverses of I − ℰφ and I − ℰψ, so identities checked with
    them do not go through opalg's SPO recursion.
    """

    def __init__(self, ops):
        self.ops = ops
        self.n = ops.model.n
        self.N = ops.model.ndof
        self.I6 = np.eye(6 * self.n)
        self.IN = np.eye(self.N)
        for name in ("E_phi", "E_psi", "H", "M", "R", "P", "P_plus", "D", "Dinv", "G",
                     "tau_bar", "K", "Upsilon"):
            setattr(self, name, getattr(ops, name).dense())
        self.phi = np.linalg.inv(self.I6 - self.E_phi)
        self.psi = np.linalg.inv(self.I6 - self.E_psi)
        self.mass = self.H @ self.phi @ self.M @ self.phi.T @ self.H.T
        self.Omega = self.psi.T @ self.H.T @ self.Dinv @ self.H @ self.psi
        self.L = self.IN + self.H @ self.phi @ self.K
        self.Linv = self.IN - self.H @ self.psi @ self.K


def dense_soa(model, q, qd=None, gravity=True) -> DenseSOA:
    return DenseSOA(opalg.operators(model, q, qd, gravity))


def trig_zero(expr) -> bool:
    """True if the sympy expression ``expr`` is identically zero.

    First an exact proof: the trig of angle sums expanded, every Float replaced by the exact
    rational it stores (opalg's constant arrays bring 1.0, 0.5), sin a / cos a of each
    argument a made the symbols s_a / c_a, and the numerator reduced modulo s_a² + c_a² − 1.
    A zero remainder proves the identity (the reduction uses only sin² + cos² = 1).  Where
    that does not reach zero the answer is ``simplify(expand_trig(expand(expr))) == 0``, the
    test the symbolic suites used alone (seconds of simplify per entry); so this answers True
    exactly when that did, or when the identity is proved exactly.

    >>> import sympy as sp
    >>> x, y, m = sp.symbols("x y m")
    >>> trig_zero(m * (sp.sin(x + y) ** 2 + sp.cos(x + y) ** 2 - 1.0)), trig_zero(sp.cos(x) ** 2)
    (True, False)
    """
    import sympy as sp

    return trig_identity_proved(expr) or sp.simplify(sp.expand_trig(sp.expand(expr))) == 0


def trig_identity_proved(expr) -> bool:
    """The exact proof of :func:`trig_zero` alone: True if it shows ``expr`` is identically
    zero, False if it does not (then ``expr`` may still be zero)."""
    import sympy as sp

    expanded = sp.expand(sp.expand_trig(sp.expand(expr)))
    if expanded == 0:
        return True
    e = expanded.xreplace({x: sp.Rational(float(x)) for x in expanded.atoms(sp.Float)})
    args = sorted({f.args[0] for f in e.atoms(sp.sin, sp.cos)}, key=sp.default_sort_key)
    pairs = [(sp.Dummy("s"), sp.Dummy("c")) for _ in args]
    e = e.xreplace({**{sp.sin(a): s for a, (s, _) in zip(args, pairs)},
                    **{sp.cos(a): c for a, (_, c) in zip(args, pairs)}})
    if not e.has(sp.sin, sp.cos):
        num = sp.expand(sp.fraction(sp.together(e))[0])
        for s, c in pairs:
            num = sp.rem(num, s ** 2 + c ** 2 - 1, s)
        if sp.expand(num) == 0:
            return True
    return False


def relative_links(notebook) -> list[str]:
    """The relative links of a notebook's markdown cells (Markdown and HTML forms), fragments
    cut: what tests/test_links_lab.py and the Voilà test follow."""
    import json
    import pathlib
    import re

    links = []
    for cell in json.loads(pathlib.Path(notebook).read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        for target in re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'href="([^"]+)"', text):
            if not re.match(r"[a-z][a-z0-9+.-]*:|#", target):
                links.append(target.split("#")[0])
    return links
