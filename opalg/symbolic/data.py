r"""Input data of a rooted tree: topology vector, hinges, bodies, root motion; their checks.

Everything here is plain data plus validation, so that a bad topology vector, a DoF count
outside 0..3 or inconsistent body data fails with a message naming the body or hinge
*before* any symbolic work starts (Huang, Huang & Zhu 1998, §1.1–1.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numbers

import numpy as np
import sympy as sp

from opalg.errors import ModelError, StateError

#: The time symbol of prescribed root motion (:class:`RootMotion`) and of time-dependent forces.
t = sp.Symbol("t", real=True)


def Tz(a) -> sp.Matrix:
    r"""Passive rotation about z: coordinates in the turned frame = ``Tz(a) @`` old coordinates.

    ``Tz(a) = [[cos a, sin a, 0], [-sin a, cos a, 0], [0, 0, 1]]`` (the paper's §1.2).

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic import Tz
    >>> Tz(sp.pi / 2) * sp.Matrix([1, 0, 0])      # the old x axis seen from the turned frame
    Matrix([
    [ 0],
    [-1],
    [ 0]])
    """
    a = scalar(a, "Tz angle", StateError)
    c, s = sp.cos(a), sp.sin(a)
    return sp.Matrix([[c, s, 0], [-s, c, 0], [0, 0, 1]])


def Tx(a) -> sp.Matrix:
    r"""Passive rotation about x: ``Tx(a) = [[1, 0, 0], [0, cos a, sin a], [0, -sin a, cos a]]``.

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic import Tx
    >>> Tx(sp.pi / 2) * sp.Matrix([0, 1, 0])
    Matrix([
    [ 0],
    [ 0],
    [-1]])
    """
    a = scalar(a, "Tx angle", StateError)
    c, s = sp.cos(a), sp.sin(a)
    return sp.Matrix([[1, 0, 0], [0, c, s], [0, -s, c]])


def skew(v) -> sp.Matrix:
    """Cross-product matrix: ``skew(a) * b == a.cross(b)``."""
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


_ROT = {0: [], 1: [("z", 1)], 2: [("x", 3), ("z", 1)], 3: [("z", 2), ("x", 3), ("z", 1)]}
_UNIT = {"z": sp.Matrix([0, 0, 1]), "x": sp.Matrix([1, 0, 0])}
#: The prescribed root as a pseudo-hinge to the inertial frame: slides along the inertial
#: x, y, z (indices 0..2), then z(H02), x(H03), z(H01) (indices 4, 5, 3), so G0 = Tz(H01) Tx(H03) Tz(H02).
ROOT_CHAIN = [("P", sp.eye(3)[:, s], s) for s in range(3)] + [("z", None, 4), ("x", None, 5), ("z", None, 3)]


def hinge_terms(chain, value):
    """Relative kinematics of one hinge, applied in ``chain`` order (inner -> body).

    ``chain`` = [(kind "P"|"z"|"x", axis, i)], ``value(i)`` = the coordinate.  Returns G
    (body from inner), the displacement ``Σ k_s Z_s`` (inner frame), and the columns
    ``{i: vector}`` of the translational partials (inner frame) and of ``Ω`` (body frame):
    ``Ω = Σ q̇_i (T_last ⋯ T_i+1) e_i``."""
    G, disp, K, E = sp.eye(3), sp.zeros(3, 1), {}, {}
    for kind, axis, i in chain:
        if kind == "P":
            disp, K[i] = disp + axis * value(i), axis
            continue
        Tm = (Tz if kind == "z" else Tx)(value(i))
        E = {k: Tm * v for k, v in E.items()}
        E[i], G = _UNIT[kind], Tm * G
    return G, disp, K, E


def scalar(x, what: str, error: type[Exception] = ModelError) -> sp.Expr:
    """``x`` as a sympy expression: numbers and sympy expressions only.

    A string is refused *unevaluated* (``sympify`` would run the code in it), and so is
    anything else that is not a number (``sympify(x, strict=True)`` refuses it too)."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    if isinstance(x, sp.Expr):
        return _finite(x, what, error)
    if isinstance(x, (str, bytes)) or not isinstance(x, (numbers.Number, np.bool_, sp.Basic)):
        raise error(f"{what}: expected a number or a sympy expression, got a {type(x).__name__} "
                    f"{x!r:.60} (strings are never evaluated)")
    try:
        e = sp.sympify(x, strict=True)
    except sp.SympifyError:
        e = None
    if not isinstance(e, sp.Expr):
        raise error(f"{what}: expected a number or a sympy expression, got {x!r:.60}")
    return _finite(e, what, error)


def _finite(e: sp.Expr, what: str, error) -> sp.Expr:
    """``e`` unless it is a number that is not finite (nan, ±inf, zoo) or not real."""
    if e.is_number and (e.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or e.is_real is False):
        raise error(f"{what}: expected a finite real number, got {e}")
    return e


def _rows(x):
    """Nested lists of the entries of an array-like (sympy matrix, numpy array, sequences)."""
    if isinstance(x, sp.MatrixBase):
        return x.tolist()
    if isinstance(x, np.ndarray):
        return x.tolist() if x.ndim else x[()]
    if isinstance(x, (list, tuple)):
        return [_rows(v) for v in x]
    return x


def as_matrix(x, shape, what: str, error: type[Exception] = ModelError) -> sp.Matrix:
    """``x`` as a sympy column (shape ``(3,)``) or matrix (any shape if ``shape`` is None),
    or ``error`` naming ``what``.

    Every entry goes through :func:`scalar`, so no string reaches ``sympify``."""
    rows = _rows(x)
    if not isinstance(rows, list):
        raise error(f"{what}: cannot read {x!r:.60} as a {shape} array")
    try:
        entries = [[scalar(e, f"{what} entry ({i}, {j})", error) for j, e in enumerate(r)]
                   if isinstance(r, list) else [scalar(r, f"{what} entry {i}", error)]
                   for i, r in enumerate(rows)]
        m = sp.Matrix(entries)
    except (TypeError, ValueError, sp.SympifyError) as exc:
        if isinstance(exc, error):
            raise
        raise error(f"{what}: cannot read {x!r:.60} as a {shape} array") from None
    if shape == (3,):
        if m.shape not in ((3, 1), (1, 3)):
            raise error(f"{what}: expected 3 entries, got shape {m.shape}")
        return m.reshape(3, 1)
    if shape is not None and m.shape != shape:
        raise error(f"{what}: expected shape {shape}, got {m.shape}")
    return m


def is_number(e) -> bool:
    """True for a sympy expression that is a number (never sympifies a string)."""
    return bool(getattr(e, "is_number", False)) if isinstance(e, sp.Basic) else isinstance(e, numbers.Number)


def check_system(system, where: str):
    """``system`` if it is a TreeSystem (by its attributes: this module sits below tree.py), else a
    ModelError naming the argument."""
    if all(hasattr(system, a) for a in ("hinges", "bodies", "q", "qd", "N")):
        return system
    r = repr(system)
    raise ModelError(f"{where}: system must be an opalg.symbolic.TreeSystem, got a {type(system).__name__} "
                     f"{r if len(r) <= 60 else r[:57] + '...'}")


def check_subs(subs) -> dict | None:
    """Substitutions ``{symbol: value}`` with sympy keys and numeric or sympy values (no strings)."""
    if not subs:
        return subs
    if not isinstance(subs, dict):
        raise StateError(f"subs must be a dict {{symbol: value}}, got {type(subs).__name__}")
    for k in subs:
        if not isinstance(k, sp.Basic):
            raise StateError(f"subs key {k!r:.60} is not a sympy symbol (strings are never evaluated)")
    return {k: scalar(v, f"subs[{k}]", StateError) for k, v in subs.items()}


@dataclass
class Hinge:
    """Hinge O_j of body B_j to its inner body.

    ``nr`` Euler angles (0..3, the paper's NR_j), ``nt`` translations (0..3, NT_j) along
    ``axes`` (nt x 3 unit vectors k_js in the inner frame; default the first nt of x, y, z),
    ``offset`` = position of O_j in the inner body frame, from the inner body's origin.
    """

    nr: int = 3
    nt: int = 0
    axes: object = None
    offset: object = (0, 0, 0)


@dataclass
class Body:
    """Body data: ``mass``, ``com`` = mass-centre offset from the body origin (the displaced
    hinge point) in body coordinates, ``inertia`` = tensor about the mass centre (body axes)."""

    mass: object
    com: object = (0, 0, 0)
    inertia: object = ((1, 0, 0), (0, 1, 0), (0, 0, 1))


@dataclass
class RootMotion:
    r"""Prescribed motion of the root body B0 as explicit functions of :data:`t`.

    ``position`` = B0's origin in the inertial frame; ``angles`` = (H01, H02, H03), the same
    z-x-z Euler angles as a hinge, so that B0's direction cosine matrix (B0 coordinates from
    inertial ones) is ``G0 = Tz(H01) Tx(H03) Tz(H02)`` (the paper's A_j = G0 G1 ⋯ chain).

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic import RootMotion, t
    >>> spin = RootMotion(angles=(sp.Rational(1, 2) * t, 0, 0))    # 0.5 rad/s about z
    >>> spin.dcm()[0, :]
    Matrix([[cos(t/2), sin(t/2), 0]])
    """

    position: object = (0, 0, 0)
    angles: object = (0, 0, 0)

    def dcm(self) -> sp.Matrix:
        """G0(t), B0 coordinates from inertial coordinates."""
        a1, a2, a3 = as_matrix(self.angles, (3,), "root angles")
        return Tz(a1) * Tx(a3) * Tz(a2)


def check_root(base):
    """``base`` as a RootMotion (or None for a fixed root), checked to depend on t only."""
    if isinstance(base, str):
        if base == "fixed":
            return None
        hint = (" (a free-floating root is a body on Hinge(3, 3) from B0, e.g. deployable_example('deploy', "
                "base='free'))" if base == "free" else "")
        raise ModelError(f"base must be 'fixed' or a RootMotion(position=..., angles=...) of t, got {base!r}{hint}")
    if not isinstance(base, RootMotion):
        raise ModelError(f"base must be 'fixed' or a RootMotion, got {type(base).__name__}")
    pos = as_matrix(base.position, (3,), "root position")
    ang = as_matrix(base.angles, (3,), "root angles")
    for what, m in (("position", pos), ("angles", ang)):
        for e in m:
            if e.atoms(sp.Derivative) or any(isinstance(f, sp.core.function.AppliedUndef)
                                             for f in e.atoms(sp.Function)):
                raise ModelError(f"root {what}: {e} is not an explicit function of t "
                                 "(write the motion out, e.g. 0.1*sin(t))")
    return RootMotion(pos, ang)


def check_topology(T) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Validate the topology vector (T(j) = inner body of B_j, 0 = root); return it and a
    base-to-tip order of the bodies (by depth, then label)."""
    try:
        if any(isinstance(t_, (str, bytes)) for t_ in T):
            raise TypeError
        T = [int(t_) if float(t_) == int(t_) else None for t_ in T]
    except (TypeError, ValueError):
        raise ModelError(f"topology vector T must hold integers, got {T!r}") from None
    n = len(T)
    if n == 0:
        raise ModelError("topology vector T is empty (need at least one body)")
    for j, p in enumerate(T, 1):
        if p is None:
            raise ModelError(f"T({j}) is not an integer")
        if not 0 <= p <= n:
            raise ModelError(f"T({j}) = {p} is out of range: inner bodies are 0 (root B0) .. {n}")
        if p == j:
            raise ModelError(f"T({j}) = {j}: body {j} cannot be its own inner body (cycle)")
    if 0 not in T:
        raise ModelError("no body hangs from the root B0 (no T(j) = 0): not a rooted tree")
    depth = {0: 0}
    for j in range(1, n + 1):
        path, k = [], j
        while k not in depth:
            if k in path:
                cyc = path[path.index(k):] + [k]
                raise ModelError("topology vector T has a cycle: " + " -> ".join(f"B{c}" for c in cyc)
                                 + " (bodies not connected to the root B0)")
            path.append(k)
            k = T[k - 1]
        for b in reversed(path):
            depth[b] = depth[T[b - 1]] + 1
    return tuple(T), tuple(sorted(range(1, n + 1), key=lambda j: (depth[j], j)))


def is_free_hinge(h: Hinge) -> bool:
    """A checked hinge with three slides along the inner frame's x, y, z and three z-x-z angles:
    a free-floating body (opalg.symbolic.free_root puts it on an opalg FreeJoint)."""
    return h.nr == 3 and h.nt == 3 and h.axes == sp.eye(3)


def check_hinge(j: int, h) -> Hinge:
    """Hinge of body j with NR, NT in 0..3, unit independent axes and a 3-vector offset."""
    h = Hinge(**h) if isinstance(h, dict) else h
    if not isinstance(h, Hinge):
        raise ModelError(f"hinge {j}: expected a Hinge or a dict, got {type(h).__name__}")
    for nm in ("nr", "nt"):
        v = getattr(h, nm)
        if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)) or not 0 <= v <= 3:
            raise ModelError(f"hinge {j}: {nm.upper()} = {v!r}, must be an integer in 0..3")
    axes = sp.eye(3)[:h.nt, :] if h.axes is None else as_matrix(h.axes, None, f"hinge {j} translation axes")
    if h.nt == 1 and axes.shape == (3, 1):
        axes = axes.T
    if h.nt and axes.shape != (h.nt, 3):
        raise ModelError(f"hinge {j}: translation axes have shape {axes.shape}, expected ({h.nt}, 3)")
    for s in range(h.nt):
        nrm = sp.sqrt(sum(a ** 2 for a in axes[s, :]))
        if is_number(nrm) and abs(float(nrm) - 1) > 1e-9:
            raise ModelError(f"hinge {j}: translation axis k_{j}{s + 1} is not a unit vector")
    if h.nt > 1 and all(is_number(a) for a in axes):
        if np.linalg.matrix_rank(np.array(axes.tolist(), float), 1e-9) < h.nt:
            raise ModelError(f"hinge {j}: translation axes are linearly dependent")
    return Hinge(int(h.nr), int(h.nt), axes if h.nt else sp.zeros(0, 3),
                 as_matrix(h.offset, (3,), f"hinge {j} offset"))


def check_body(j: int, b) -> Body:
    """Body j with a positive scalar mass, a 3-vector mass centre and a symmetric 3 x 3
    inertia tensor (when numeric: positive semidefinite, principal moments obeying I1 + I2 >= I3)."""
    if isinstance(b, dict):
        b = Body(**b)
    elif not isinstance(b, Body):
        b = Body(*b)
    m = scalar(b.mass, f"body {j}: mass")
    if is_number(m) and float(m) <= 0:
        raise ModelError(f"body {j}: mass must be > 0, got {m}")
    J = as_matrix(b.inertia, (3, 3), f"body {j} inertia tensor")
    if (J - J.T).applyfunc(sp.simplify) != sp.zeros(3, 3):
        raise ModelError(f"body {j}: inertia tensor is not symmetric")
    if all(is_number(e) for e in J):
        ev = np.linalg.eigvalsh(np.array(J.tolist(), float))
        if ev[0] < -1e-12 * max(ev[2], 1e-300):     # zero moments: point masses, thin rods
            raise ModelError(f"body {j}: inertia tensor has a negative principal moment "
                             f"({ev[0]:.3g}): it is not positive semidefinite")
        # a real mass distribution has I1 + I2 >= I3 for its principal moments
        if ev[0] + ev[1] < ev[2] * (1 - 1e-12):
            raise ModelError(f"body {j}: principal moments {np.round(ev, 6).tolist()} violate the triangle "
                             "inequality I1 + I2 >= I3: no mass distribution has this inertia tensor")
    return Body(m, as_matrix(b.com, (3,), f"body {j} mass centre"), J)
