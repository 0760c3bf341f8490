r"""Computer-algebra (sympy) Lagrangian modelling of rooted-tree multi-rigid-body systems.

Re-derivation of Huang, Huang & Zhu (1998, NUDT journal 20(2), seed 003) with sympy.

Topology
    ``T[j-1]`` is the inner body of body ``B_j`` (paper labels: bodies 1..n, 0 = root B0).
    B0 is fixed and its frame is the inertial frame (prescribed root motion: not implemented).
Hinge ``O_j`` (all vectors of the hinge in the *inner* body frame)
    ``offset`` d_j: position of O_j in the inner frame (from the inner body's origin);
    ``NT`` translations Z_js along unit vectors k_js, ``NR`` Euler angles.
    The body frame origin is O_j + Σ k_js Z_js; the body frame is then rotated.
Euler convention (checked against the paper's Ω_j formula)
    ``G_j = Tz(H_j1) Tx(H_j3) Tz(H_j2)`` with the *passive* matrices
    ``Tz(a) = [[c, s, 0], [-s, c, 0], [0, 0, 1]]``, ``Tx(a) = [[1, 0, 0], [0, c, s], [0, -s, c]]``:
    G_j maps inner-body coordinates to body-j coordinates (``x_j = G_j x_inner``), i.e.
    ``G_j = (^innerR_j)^T``.  Read from the inner frame, the body is turned first about z by
    H_j2, then about the new x by H_j3, then about the new z by H_j1.  With NR = 2 the
    hinge is ``G = Tz(H_j1) Tx(H_j3)``, with NR = 1 ``G = Tz(H_j1)``.
    Relative angular velocity (body coords, NR = 3):
    ``Ω_j = [H2' sH3 sH1 + H3' cH1, H2' sH3 cH1 − H3' sH1, H1' + H2' cH3]`` (the paper's 1.3).
q order
    bodies j = 1..n in label order; per body ``Z_j1..Z_jNT`` then ``H_j1, H_j2, H_j3``
    (those present).  :meth:`TreeSystem.to_model` builds one single-axis opalg body per
    coordinate, *label = q index*, chained in application order (prismatic axes, then z(H2),
    x(H3), z(H1)); the intermediate frames are massless, the last one carries B_j's inertia.
Equations
    ``M(q) q̈ + bias(q, q̇) = Q`` with ``bias = d/dt(∂T/∂q̇) − ∂T/∂q − M q̈ + ∂U/∂q`` (Lagrange),
    ``M = Σ m_j J_vjᵀ J_vj + J_ωjᵀ I_j J_ωj`` from the partial velocities (= ∂²T/∂q̇²).
"""

from __future__ import annotations

from dataclasses import dataclass
import time

import numpy as np
import sympy as sp

__all__ = ["Hinge", "Body", "TreeSystem", "Tx", "Tz", "deployable_example"]


def Tz(a):
    """Passive rotation about z: coordinates in the turned frame = Tz(a) @ old coordinates."""
    c, s = sp.cos(a), sp.sin(a)
    return sp.Matrix([[c, s, 0], [-s, c, 0], [0, 0, 1]])


def Tx(a):
    """Passive rotation about x."""
    c, s = sp.cos(a), sp.sin(a)
    return sp.Matrix([[1, 0, 0], [0, c, s], [0, -s, c]])


def _skew(v):
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _vec(x, shape, what):
    try:
        m = sp.Matrix(sp.sympify(x))
    except (TypeError, ValueError, sp.SympifyError):
        raise ValueError(f"{what}: cannot read {x!r} as a {shape} array") from None
    if shape == (3,):
        if m.shape not in ((3, 1), (1, 3)):
            raise ValueError(f"{what}: expected 3 entries, got shape {m.shape}")
        return m.reshape(3, 1)
    if m.shape != shape:
        raise ValueError(f"{what}: expected shape {shape}, got {m.shape}")
    return m


def _is_num(e):
    return bool(getattr(sp.sympify(e), "is_number", False))


@dataclass
class Hinge:
    """Hinge O_j: ``nr`` Euler angles (0..3), ``nt`` translations along ``axes`` (nt x 3,
    unit vectors in the inner frame; default the first nt of x, y, z), ``offset`` of O_j."""

    nr: int = 3
    nt: int = 0
    axes: object = None
    offset: object = (0, 0, 0)


@dataclass
class Body:
    """Body data: mass, mass-centre offset from the (displaced) hinge point in body
    coordinates, inertia tensor about the mass centre (body coordinates)."""

    mass: object
    com: object = (0, 0, 0)
    inertia: object = ((1, 0, 0), (0, 1, 0), (0, 0, 1))


def _check_topology(T):
    try:
        T = [int(t) if float(t) == int(t) else None for t in T]
    except (TypeError, ValueError):
        raise ValueError(f"topology vector T must hold integers, got {T!r}") from None
    n = len(T)
    if n == 0:
        raise ValueError("topology vector T is empty (need at least one body)")
    for j, t in enumerate(T, 1):
        if t is None:
            raise ValueError(f"T({j}) is not an integer")
        if not 0 <= t <= n:
            raise ValueError(f"T({j}) = {t} is out of range: inner bodies are 0 (root B0) .. {n}")
        if t == j:
            raise ValueError(f"T({j}) = {j}: body {j} cannot be its own inner body (cycle)")
    if 0 not in T:
        raise ValueError("no body hangs from the root B0 (no T(j) = 0): not a rooted tree")
    order, depth = [], {0: 0}
    for j in range(1, n + 1):
        path, k = [], j
        while k not in depth:
            if k in path:
                cyc = path[path.index(k):] + [k]
                raise ValueError("topology vector T has a cycle: " + " -> ".join(f"B{c}" for c in cyc)
                                 + " (bodies not connected to the root B0)")
            path.append(k)
            k = T[k - 1]
        for b in reversed(path):
            depth[b] = depth[T[b - 1]] + 1
    order = sorted(range(1, n + 1), key=lambda j: (depth[j], j))
    return tuple(T), tuple(order)


class TreeSystem:
    """Rooted tree of rigid bodies, equations of motion by sympy (see module docstring).

    Parameters
    ----------
    T : sequence of int, length n
        ``T[j-1]`` = inner body of B_j (0 = fixed root B0).
    hinges : sequence of Hinge or dict (keys nr, nt, axes, offset)
    bodies : sequence of Body, dict (mass, com, inertia) or tuple (mass, com, inertia)
    gravity : 3-vector in the B0 (inertial) frame
    base : "fixed" (only option implemented)

    Examples
    --------
    >>> import numpy as np, sympy as sp, opalg
    >>> from opalg.symbolic import Body, Hinge, TreeSystem
    >>> sys2 = TreeSystem([0, 1], [Hinge(1, 0), Hinge(1, 0, offset=[1, 0, 0])],
    ...                   [Body(1, [0.5, 0, 0], np.diag([0.1, 0.1, 0.1]))] * 2)
    >>> M = sys2.mass_matrix()
    >>> q = np.array([0.3, -0.2])
    >>> Mnum = np.array(M.subs(dict(zip(sys2.q, q))).evalf(), dtype=float)
    >>> bool(np.allclose(Mnum, opalg.crba(sys2.to_model(), q)))
    True
    """

    def __init__(self, T, hinges, bodies, gravity=(0, 0, 0), base="fixed"):
        if base != "fixed":
            raise NotImplementedError("only a fixed root B0 is implemented (prescribed motion: to do)")
        self.T, self.order = _check_topology(T)
        n = self.n = len(self.T)
        for what, seq in (("hinges", hinges), ("bodies", bodies)):
            if len(seq) != n:
                raise ValueError(f"{what} has {len(seq)} entries but T has {n} bodies")
        self.hinges, self.bodies = [], []
        for j, h in enumerate(hinges, 1):
            h = Hinge(**h) if isinstance(h, dict) else h
            for nm in ("nr", "nt"):
                v = getattr(h, nm)
                if not isinstance(v, (int, np.integer)) or not 0 <= v <= 3:
                    raise ValueError(f"hinge {j}: {nm.upper()} = {v!r}, must be an integer in 0..3")
            axes = sp.eye(3)[:h.nt, :] if h.axes is None else sp.Matrix(sp.sympify(h.axes))
            if h.nt and axes.shape == (3, 1) and h.nt == 1:
                axes = axes.T
            if axes.shape != (h.nt, 3) and h.nt:
                raise ValueError(f"hinge {j}: translation axes have shape {axes.shape}, expected ({h.nt}, 3)")
            for s in range(h.nt):
                nrm = sp.sqrt(sum(a ** 2 for a in axes[s, :]))
                if _is_num(nrm) and abs(float(nrm) - 1) > 1e-9:
                    raise ValueError(f"hinge {j}: translation axis k_{j}{s + 1} is not a unit vector")
            if h.nt > 1 and all(_is_num(a) for a in axes):
                if np.linalg.matrix_rank(np.array(axes.tolist(), float), 1e-9) < h.nt:
                    raise ValueError(f"hinge {j}: translation axes are linearly dependent")
            self.hinges.append(Hinge(h.nr, h.nt, axes if h.nt else sp.zeros(0, 3),
                                     _vec(h.offset, (3,), f"hinge {j} offset")))
        for j, b in enumerate(bodies, 1):
            if isinstance(b, dict):
                b = Body(**b)
            elif not isinstance(b, Body):
                b = Body(*b)
            m = sp.sympify(b.mass)
            if not isinstance(m, sp.Expr):
                raise ValueError(f"body {j}: mass must be a scalar, got {b.mass!r}")
            if _is_num(m) and float(m) <= 0:
                raise ValueError(f"body {j}: mass must be > 0, got {m}")
            J = _vec(b.inertia, (3, 3), f"body {j} inertia tensor")
            if (J - J.T).applyfunc(sp.simplify) != sp.zeros(3, 3):
                raise ValueError(f"body {j}: inertia tensor is not symmetric")
            if all(_is_num(e) for e in J) and np.linalg.eigvalsh(np.array(J.tolist(), float))[0] <= 0:
                raise ValueError(f"body {j}: inertia tensor is not positive definite")
            self.bodies.append(Body(m, _vec(b.com, (3,), f"body {j} mass centre"), J))
        self.gravity = _vec(gravity, (3,), "gravity")
        # generalized coordinates
        self.q, self.qd, self.coords = [], [], []   # coords[i] = (j, "Z"|"H", index)
        self.slices = {}
        for j, h in enumerate(self.hinges, 1):
            start = len(self.q)
            for s in range(1, h.nt + 1):
                self.coords.append((j, "Z", s))
            for i in {0: (), 1: (1,), 2: (1, 3), 3: (1, 2, 3)}[h.nr]:
                self.coords.append((j, "H", i))
            self.q += [sp.Symbol(f"{c}{j}_{s}", real=True) for (_, c, s) in self.coords[start:]]
            self.qd += [sp.Symbol(f"{c}d{j}_{s}", real=True) for (_, c, s) in self.coords[start:]]
            self.slices[j] = slice(start, len(self.q))
        self.N = len(self.q)
        self._kin = None
        self.timings = {}

    # ------------------------------------------------------------------ kinematics
    def _hinge_chain(self, j):
        """[(kind, axis, q index)] in application order (inner -> body)."""
        sl, h = self.slices[j], self.hinges[j - 1]
        idx = {self.coords[i][1:]: i for i in range(sl.start, sl.stop)}
        chain = [("P", h.axes[s - 1, :].T, idx[("Z", s)]) for s in range(1, h.nt + 1)]
        rot = {0: [], 1: [("z", 1)], 2: [("x", 3), ("z", 1)], 3: [("z", 2), ("x", 3), ("z", 1)]}[h.nr]
        chain += [(ax, None, idx[("H", i)]) for ax, i in rot]
        return chain

    def relative_dcm(self, j):
        """G_j (body-j coordinates from inner-body coordinates)."""
        G = sp.eye(3)
        for kind, _, i in self._hinge_chain(j):
            if kind != "P":
                G = (Tz if kind == "z" else Tx)(self.q[i]) * G
        return G

    def kinematics(self):
        """Per body j: G_j, R_j (inertial-from-body), r_Cj (inertial), J_vj (velocity of C_j,
        body coords) and J_ωj (angular velocity, body coords), both 3 x N: v = J q̇."""
        if self._kin is not None:
            return self._kin
        N, Z3 = self.N, sp.zeros(3, self.N)
        kin = {0: dict(R=sp.eye(3), rO=sp.zeros(3, 1), Jw=Z3, Ju=Z3)}
        for j in self.order:
            p, h, b = kin[self.T[j - 1]], self.hinges[j - 1], self.bodies[j - 1]
            rho, K, E = h.offset, sp.zeros(3, N), sp.zeros(3, N)
            G, Ge = sp.eye(3), []
            for kind, axis, i in self._hinge_chain(j):
                if kind == "P":
                    rho = rho + axis * self.q[i]
                    K[:, i] = axis
                else:   # Ω = Σ q̇_i (T_last..T_{i+1}) e_i: accumulate e_i, rotate by later T's
                    e = sp.Matrix([0, 0, 1]) if kind == "z" else sp.Matrix([1, 0, 0])
                    Tm = (Tz if kind == "z" else Tx)(self.q[i])
                    Ge = [(Tm * v, c) for v, c in Ge] + [(e, i)]
                    G = Tm * G
            for v, i in Ge:
                E[:, i] = v
            Jw = G * p["Jw"] + E                                   # ω_j = G_j ω_inner + Ω_j
            Ju = G * (p["Ju"] - _skew(rho) * p["Jw"] + K)          # velocity of the body origin
            R = p["R"] * G.T
            rO = p["rO"] + p["R"] * rho
            kin[j] = dict(G=G, R=R, rO=rO, rC=rO + R * b.com, Jw=Jw, Ju=Ju,
                          Jv=Ju - _skew(b.com) * Jw)
        self._kin = kin
        return kin

    # ------------------------------------------------------------------ energies, EoM
    def kinetic_energy(self):
        """T = Σ ½ (m v_C·v_C + ω·I ω), directly from the body velocities."""
        kin, qd = self.kinematics(), sp.Matrix(self.qd)
        T = 0
        for j in range(1, self.n + 1):
            b, v, w = self.bodies[j - 1], kin[j]["Jv"] * qd, kin[j]["Jw"] * qd
            T += sp.Rational(1, 2) * (b.mass * (v.T * v)[0] + (w.T * b.inertia * w)[0])
        return T

    def potential_energy(self):
        """U = −Σ m_j g·r_Cj (uniform gravity g in the B0 frame)."""
        kin = self.kinematics()
        return -sum((self.bodies[j - 1].mass * (self.gravity.T * kin[j]["rC"])[0]
                     for j in range(1, self.n + 1)), sp.Integer(0))

    def mass_matrix(self):
        """M(q) = Σ m J_vᵀ J_v + J_ωᵀ I J_ω (the Hessian of T in q̇), sympy N x N."""
        if getattr(self, "_M", None) is None:
            t0 = time.perf_counter()
            kin, M = self.kinematics(), sp.zeros(self.N, self.N)
            for j in range(1, self.n + 1):
                b, Jv, Jw = self.bodies[j - 1], kin[j]["Jv"], kin[j]["Jw"]
                M += b.mass * Jv.T * Jv + Jw.T * b.inertia * Jw
            self._M = M
            self.timings["mass_matrix"] = time.perf_counter() - t0
        return self._M

    def bias(self, method="kane"):
        """bias(q, q̇) with M q̈ + bias = Q: Coriolis/centrifugal + gravity terms, sympy N x 1.

        ``method="lagrange"``: (∂(M q̇)/∂q) q̇ − ∂T/∂q + ∂U/∂q (Lagrange's equations, q̈ = 0).
        ``method="kane"`` (default, faster): the same equations written with the partial
        velocities, Σ_j J_vjᵀ m_j (v̇_j + ω_j × v_j − R_jᵀ g) + J_ωjᵀ (I_j ω̇_j + ω_j × I_j ω_j),
        velocities in body coordinates and v̇, ω̇ their time derivatives at q̈ = 0."""
        cache = self.__dict__.setdefault("_bias", {})
        if method not in cache:
            if method not in ("kane", "lagrange"):
                raise ValueError(f"method must be 'kane' or 'lagrange', got {method!r}")
            M = self.mass_matrix()
            t0 = time.perf_counter()
            q, qd = sp.Matrix(self.q), sp.Matrix(self.qd)
            if method == "lagrange":
                p = M * qd
                T = (qd.T * p)[0] / 2
                U = self.potential_energy()
                B = (p.jacobian(q) * qd - sp.Matrix([T.diff(x) for x in self.q])
                     + sp.Matrix([U.diff(x) for x in self.q]))
            else:
                kin, B = self.kinematics(), sp.zeros(self.N, 1)
                for j in range(1, self.n + 1):
                    b, k = self.bodies[j - 1], kin[j]
                    v, w = k["Jv"] * qd, k["Jw"] * qd
                    vdot, wdot = v.jacobian(q) * qd, w.jacobian(q) * qd
                    Iw = b.inertia * w
                    B += k["Jv"].T * (b.mass * (vdot + w.cross(v) - k["R"].T * self.gravity))
                    B += k["Jw"].T * (b.inertia * wdot + w.cross(Iw))
            cache[method] = B
            self.timings["bias_" + method] = time.perf_counter() - t0
        return cache[method]

    def generalized_forces(self, forces=None, moments=None, springs=None, dampers=None):
        """Q from forces F_j at the mass centres and moments L_j (both in body-j coordinates,
        dicts j -> 3-vector) by partial velocities, Q_i = Σ F_j·∂v_Cj/∂q̇_i + L_j·∂ω_j/∂q̇_i,
        plus hinge springs/dampers on coordinates: springs {q symbol: (k, q0)}, dampers
        {q symbol: c} giving −k (q − q0) − c q̇."""
        kin, Q = self.kinematics(), sp.zeros(self.N, 1)
        for j, F in (forces or {}).items():
            Q += kin[j]["Jv"].T * _vec(F, (3,), f"force on body {j}")
        for j, L in (moments or {}).items():
            Q += kin[j]["Jw"].T * _vec(L, (3,), f"moment on body {j}")
        index = {s: i for i, s in enumerate(self.q)}
        for s, (k, q0) in (springs or {}).items():
            Q[index[s]] -= k * (s - q0)
        for s, c in (dampers or {}).items():
            Q[index[s]] -= c * self.qd[index[s]]
        return Q

    def equations_of_motion(self, Q=None):
        """M q̈ + bias − Q (sympy), with symbols qdd."""
        qdd = sp.Matrix(sp.symbols(f"qdd0:{self.N}", real=True))
        Q = sp.zeros(self.N, 1) if Q is None else Q
        return self.mass_matrix() * qdd + self.bias() - Q

    def lambdify(self, subs=None, with_bias=True, method="kane"):
        """Numeric callables ``M(q)`` and ``bias(q, qd)`` (sympy.lambdify, cse=True).

        ``subs`` maps remaining symbolic parameters to numbers."""
        t0 = time.perf_counter()
        M, B = self.mass_matrix(), self.bias(method) if with_bias else None
        if subs:
            M = M.subs(subs)
            B = None if B is None else B.subs(subs)
        free = M.free_symbols - set(self.q)
        if free:
            raise ValueError(f"unset symbolic parameters {sorted(map(str, free))}: pass subs=")
        Mf = sp.lambdify([self.q], M, "numpy", cse=True)
        Mfun = lambda q: np.asarray(Mf(np.asarray(q, float)), float)  # noqa: E731
        if B is None:
            return Mfun
        Bf = sp.lambdify([self.q, self.qd], B, "numpy", cse=True)
        Bfun = lambda q, qd: np.asarray(Bf(np.asarray(q, float), np.asarray(qd, float)),  # noqa: E731
                                        float).reshape(-1)
        self.timings["lambdify"] = time.perf_counter() - t0
        return Mfun, Bfun

    # ------------------------------------------------------------------ opalg route
    def to_model(self):
        """The same system as an opalg Model: one single-axis body per coordinate,
        label = q index (so the q order is identical), massless intermediate frames.
        Bodies without DoF are welded: their inertia is merged into the carrier frame."""
        from .model import Inertia, Joint, Model

        def arr(x):
            try:
                return np.array(np.array(x.tolist() if hasattr(x, "tolist") else x), dtype=float)
            except (TypeError, ValueError):
                return np.array(sp.Matrix(x).tolist() if hasattr(x, "tolist") else x, dtype=object)

        N = self.N
        parents, joints, places = [None] * N, [None] * N, [None] * N
        inert = [[] for _ in range(N)]            # (m, com, I) parts in the carrier frame
        frame = {0: (-1, sp.zeros(3, 1))}         # B_j frame = (opalg carrier label, offset)
        self.carrier = {}
        for j in self.order:
            pl, off = frame[self.T[j - 1]]
            h, b = self.hinges[j - 1], self.bodies[j - 1]
            chain = self._hinge_chain(j)
            if not chain:                         # welded (NR = NT = 0) body
                frame[j] = (pl, off + h.offset)
                if pl != -1:
                    inert[pl].append((b.mass, off + h.offset + b.com, b.inertia))
                continue
            first = True
            for kind, axis, i in chain:
                ax = axis.T if kind == "P" else ([0, 0, 1] if kind == "z" else [1, 0, 0])
                joints[i] = Joint("P" if kind == "P" else "R", arr(sp.Matrix(ax).reshape(3, 1))[:, 0],
                                  name=str(self.q[i]))
                parents[i] = pl
                places[i] = (np.eye(3), arr(off + h.offset)[:, 0] if first else np.zeros(3))
                first, pl = False, i
            frame[j] = (pl, sp.zeros(3, 1))
            self.carrier[j] = pl
            inert[pl].insert(0, (b.mass, b.com, b.inertia))
        inertias = []
        for parts in inert:
            if not parts:
                inertias.append(Inertia(0.0, np.zeros(3), np.zeros((3, 3))))
                continue
            m = sum(p[0] for p in parts)
            c = sum((p[0] * p[1] for p in parts), sp.zeros(3, 1)) / m
            J = sp.zeros(3, 3)
            for mi, ci, Ji in parts:
                r = ci - c if len(parts) > 1 else sp.zeros(3, 1)
                J += Ji + mi * ((r.T * r)[0] * sp.eye(3) - r * r.T)
            inertias.append(Inertia(arr(sp.Matrix([m]))[0, 0], arr(c)[:, 0], arr(J)))
        return Model(parents, joints, places, inertias, gravity=arr(self.gravity)[:, 0],
                     names=[str(s) for s in self.q], allow_massless=True)


def _box(m, a, b, c):
    return [[m * (b * b + c * c) / 12, 0, 0], [0, m * (a * a + c * c) / 12, 0], [0, 0, m * (a * a + b * b) / 12]]


def deployable_example(dof="rot3", gravity=(0, 0, 0)):
    """The paper's 5-body tree T = (0, 1, 1, 1, 2): B1 a spacecraft bus on a 3-axis hinge
    (gimbal) to the fixed station truss B0; B2 the inner and B5 the outer solar-array panel;
    B3 an antenna boom; B4 a radiator.  ``dof="rot3"``: 3 Euler angles per hinge (15 DoF);
    ``"full6"``: 3 translations (x, y, z of the inner frame) + 3 angles (30 DoF)."""
    if dof not in ("rot3", "full6"):
        raise ValueError(f"dof must be 'rot3' or 'full6', got {dof!r}")
    nt = 3 if dof == "full6" else 0
    T = [0, 1, 1, 1, 2]
    offsets = [(0, 0, 1.0), (0.8, 0, 0.2), (0, 0.6, 0.5), (-0.8, 0, 0), (2.0, 0, 0)]
    bodies = [Body(200.0, (0.0, 0.0, 0.1), [[40.0, 1.0, 0], [1.0, 36.0, 0], [0, 0, 30.0]]),
              Body(20.0, (1.0, 0.0, 0.0), _box(20.0, 2.0, 1.2, 0.03)),
              Body(8.0, (0.0, 1.0, 0.05), _box(8.0, 0.1, 2.0, 0.1)),
              Body(10.0, (-0.5, 0.0, 0.0), _box(10.0, 1.0, 0.8, 0.05)),
              Body(18.0, (1.0, 0.0, 0.0), _box(18.0, 2.0, 1.2, 0.03))]
    hinges = [Hinge(3, nt, None, o) for o in offsets]
    return TreeSystem(T, hinges, bodies, gravity=gravity)
