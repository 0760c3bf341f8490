r"""TreeSystem: kinematics, energies and Lagrange's equations of a rooted tree, in sympy.

The derivation follows Huang, Huang & Zhu (1998) §1.3–1.7 (re-derived; conventions in
:mod:`opalg.symbolic`): every body velocity is written through its partial velocities,
``ω_j = J_ωj q̇ + ω_j^t`` and ``v_Cj = J_vj q̇ + v_j^t`` (body coordinates), where the
``^t`` parts come only from a prescribed root motion.  Then

* ``T = Σ ½ (m_j v_Cj·v_Cj + ω_j·I_j ω_j)`` (§1.6), ``U = −Σ m_j g·r_Cj``;
* ``M(q) = ∂²T/∂q̇² = Σ m_j J_vjᵀ J_vj + J_ωjᵀ I_j J_ωj``;
* Lagrange (§1.7): ``d/dt ∂T/∂q̇ − ∂T/∂q + ∂U/∂q = Q``, i.e. ``M q̈ + bias(q, q̇, t) = Q``;
* generalized forces by partial velocities (§1.5).
"""

from __future__ import annotations

import time
from operator import matmul as mm

import numpy as np
import sympy as sp

from opalg.errors import ModelError, StateError
from opalg.symbolic.data import (
    _ROT, ROOT_CHAIN, Body, Hinge, RootMotion, Tx, Tz, as_matrix, check_body, check_hinge, check_root,
    check_topology, hinge_terms, scalar, skew, t)


class TreeSystem:
    """Rooted tree of rigid bodies with its equations of motion derived by sympy.

    Parameters
    ----------
    T : sequence of int, length n
        Topology vector: ``T[j-1]`` = inner body of B_j, 0 = the root B0 (paper §1.1).
    hinges : sequence of Hinge or dict (keys nr, nt, axes, offset)
    bodies : sequence of Body, dict (mass, com, inertia) or tuple (mass, com, inertia)
    gravity : 3-vector in the inertial frame (uniform field)
    base : "fixed" or RootMotion
        A fixed root B0 is the inertial frame; a :class:`RootMotion` prescribes B0's
        position and Euler angles as explicit functions of :data:`t`.

    Examples
    --------
    >>> import numpy as np, sympy as sp, opalg
    >>> from opalg.symbolic import Body, Hinge, TreeSystem
    >>> sys2 = TreeSystem([0, 1], [Hinge(1, 0), Hinge(1, 0, offset=[1, 0, 0])],
    ...                   [Body(1, [0.5, 0, 0], np.diag([0.1, 0.1, 0.1]))] * 2)
    >>> sys2.q
    [H1_1, H2_1]
    >>> M = sys2.mass_matrix()
    >>> q = np.array([0.3, -0.2])
    >>> Mnum = np.array(M.subs(dict(zip(sys2.q, q))).evalf(), dtype=float)
    >>> bool(np.allclose(Mnum, opalg.crba(sys2.to_model(), q)))
    True
    """

    def __init__(self, T, hinges, bodies, gravity=(0, 0, 0), base="fixed"):
        self.T, self.order = check_topology(T)
        n = self.n = len(self.T)
        for what, seq in (("hinges", hinges), ("bodies", bodies)):
            if len(seq) != n:
                raise ModelError(f"{what} has {len(seq)} entries but T has {n} bodies")
        self.hinges = [check_hinge(j, h) for j, h in enumerate(hinges, 1)]
        self.bodies = [check_body(j, b) for j, b in enumerate(bodies, 1)]
        self.gravity = as_matrix(gravity, (3,), "gravity")
        self.root = check_root(base)
        # generalized coordinates, per body Z_j1..Z_jNT then H_j1, H_j2, H_j3 (present ones)
        self.q, self.qd, self.coords, self.slices = [], [], [], {}
        for j, h in enumerate(self.hinges, 1):
            start = len(self.q)
            self.coords += [(j, "Z", s) for s in range(1, h.nt + 1)]
            self.coords += [(j, "H", i) for i in {0: (), 1: (1,), 2: (1, 3), 3: (1, 2, 3)}[h.nr]]
            self.q += [sp.Symbol(f"{c}{j}_{s}", real=True) for (_, c, s) in self.coords[start:]]
            self.qd += [sp.Symbol(f"{c}d{j}_{s}", real=True) for (_, c, s) in self.coords[start:]]
            self.slices[j] = slice(start, len(self.q))
        self.N = len(self.q)
        if self.N == 0:
            raise ModelError("the tree has no degree of freedom: every hinge has NR = NT = 0")
        if self.root is not None:
            bad = set().union(*(e.free_symbols for e in (*self.root.position, *self.root.angles)))
            bad &= set(self.q) | set(self.qd)
            if bad:
                raise ModelError(f"root motion depends on coordinates {sorted(map(str, bad))}: "
                                 "it must be prescribed as a function of t")
        self._kin, self._M, self._bias = None, None, {}
        self.timings: dict[str, float] = {}
        self._numeric: dict[tuple, object] = {}  # generated functions (symbolic.numeric._cached)

    @property
    def prescribed(self) -> bool:
        """True when the root B0 moves (bias, energies then depend on t)."""
        return self.root is not None

    def coordinate(self, j: int, kind: str, index: int) -> sp.Symbol:
        """The symbol of ``Z_j,index`` (kind "Z") or ``H_j,index`` (kind "H"), or a StateError."""
        try:
            return self.q[self.coords.index((j, kind, index))]
        except (ValueError, IndexError):
            raise StateError(f"body {j} has no coordinate {kind}{j}_{index} (hinge NR = "
                             f"{self.hinges[j - 1].nr}, NT = {self.hinges[j - 1].nt})") from None

    def rate(self, coordinate: sp.Symbol) -> sp.Symbol:
        """The rate symbol q̇_i of the coordinate symbol q_i, e.g. ``rate(H1_1) = Hd1_1``."""
        try:
            return self.qd[self.q.index(coordinate)]
        except ValueError:
            raise StateError(f"{coordinate!r} is not a generalized coordinate of this system "
                             f"(coordinates: {', '.join(map(str, self.q))})") from None

    # ------------------------------------------------------------------ kinematics
    def hinge_chain(self, j: int) -> list:
        """[(kind, axis, q index)] of hinge j in application order: slides, then z(H2), x(H3),
        z(H1), so that G_j = Tz(H1) Tx(H3) Tz(H2)."""
        sl, h = self.slices[j], self.hinges[j - 1]
        idx = {self.coords[i][1:]: i for i in range(sl.start, sl.stop)}
        chain = [("P", h.axes[s - 1, :].T, idx[("Z", s)]) for s in range(1, h.nt + 1)]
        return chain + [(ax, None, idx[("H", i)]) for ax, i in _ROT[h.nr]]

    def relative_dcm(self, j: int) -> sp.Matrix:
        """G_j: body-j coordinates from inner-body coordinates (paper §1.2).

        Examples
        --------
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> TreeSystem([0], [Hinge(2)], [Body(1)]).relative_dcm(1)     # Tz(H1) Tx(H3)
        Matrix([
        [ cos(H1_1), sin(H1_1)*cos(H1_3), sin(H1_1)*sin(H1_3)],
        [-sin(H1_1), cos(H1_1)*cos(H1_3), sin(H1_3)*cos(H1_1)],
        [         0,          -sin(H1_3),           cos(H1_3)]])
        """
        return hinge_terms(self.hinge_chain(j), lambda i: self.q[i])[0]

    def _root_kinematics(self) -> dict:
        N, Z3, z = self.N, sp.zeros(3, self.N), sp.zeros(3, 1)
        if self.root is None:
            return dict(R=sp.eye(3), rO=z, Jw=Z3, Ju=Z3, wt=z, ut=z)
        vals = list(self.root.position) + list(self.root.angles)
        G0, r0, K, E = hinge_terms(ROOT_CHAIN, lambda i: vals[i])
        w0 = sum((E[i] * vals[i].diff(t) for i in E), z)
        return dict(R=G0.T, rO=r0, Jw=Z3, Ju=Z3, wt=w0, ut=G0 * r0.diff(t))

    def kinematics(self) -> dict:
        """Per body j (0 = root): ``G`` (G_j), ``R`` (inertial from body, = A_jᵀ), ``rO``, ``rC``
        (origin and mass centre, inertial), and the partial velocities in body coordinates,
        ``Jw`` (ω = Jw q̇ + wt) and ``Jv`` (v_C = Jv q̇ + vt), 3 x N; ``Ju``/``ut`` for the origin.

        Paper §1.3–1.4: ``ω_j = G_j ω_inner + Ω_j``; the origin velocity
        ``u_j = G_j (u_inner + ω_inner × ρ_j + Σ k_js Ż_js)``, ``ρ_j = d_j + Σ k_js Z_js``;
        ``v_Cj = u_j + ω_j × c_j``.

        Examples
        --------
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> s = TreeSystem([0], [Hinge(1)], [Body(1, (2, 0, 0))])   # a rotor, mass centre 2 m out
        >>> k = s.kinematics()[1]
        >>> k["Jw"].T, k["Jv"].T                    # ω = H' e_z, v_C = 2 H' e_y (body axes)
        (Matrix([[0, 0, 1]]), Matrix([[0, 2, 0]]))
        """
        if self._kin is not None:
            return self._kin
        kin = {0: self._root_kinematics()}
        for j in self.order:
            p, h, b = kin[self.T[j - 1]], self.hinges[j - 1], self.bodies[j - 1]
            G, disp, Kc, Ec = hinge_terms(self.hinge_chain(j), lambda i: self.q[i])
            rho, K, E = h.offset + disp, sp.zeros(3, self.N), sp.zeros(3, self.N)
            for i, v in Kc.items():
                K[:, i] = v
            for i, v in Ec.items():
                E[:, i] = v
            Jw, wt = mm(G, p["Jw"]) + E, mm(G, p["wt"])
            Ju = mm(G, p["Ju"] - mm(skew(rho), p["Jw"]) + K)
            ut = mm(G, p["ut"] - mm(skew(rho), p["wt"]))
            R, rO = mm(p["R"], G.T), p["rO"] + mm(p["R"], rho)
            kin[j] = dict(G=G, R=R, rO=rO, rC=rO + mm(R, b.com), Jw=Jw, wt=wt, Ju=Ju, ut=ut,
                          Jv=Ju - mm(skew(b.com), Jw), vt=ut - mm(skew(b.com), wt))
        self._kin = kin
        return kin

    def velocities(self, j: int) -> tuple[sp.Matrix, sp.Matrix]:
        """(ω_j, v_Cj) of body j in body coordinates, as expressions in q, q̇ (and t).

        Examples
        --------
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> w, v = TreeSystem([0], [Hinge(1)], [Body(1, (2, 0, 0))]).velocities(1)
        >>> w.T, v.T
        (Matrix([[0, 0, Hd1_1]]), Matrix([[0, 2*Hd1_1, 0]]))
        """
        k, qd = self.kinematics()[j], sp.Matrix(self.qd)
        return mm(k["Jw"], qd) + k["wt"], mm(k["Jv"], qd) + k["vt"]

    # ------------------------------------------------------------------ energies, EoM
    def kinetic_energy(self) -> sp.Expr:
        """T = Σ ½ (m_j v_Cj·v_Cj + ω_j·I_j ω_j) (paper §1.6), directly from the velocities.

        Examples
        --------
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> TreeSystem([0], [Hinge(1)], [Body(3, (2, 0, 0))]).kinetic_energy()   # ½ (3·4 + 1) H'²
        13*Hd1_1**2/2
        """
        T = sp.Integer(0)
        for j in range(1, self.n + 1):
            b, (w, v) = self.bodies[j - 1], self.velocities(j)
            T += sp.Rational(1, 2) * (b.mass * mm(v.T, v)[0]
                                      + mm(mm(w.T, b.inertia), w)[0])
        return T

    def potential_energy(self) -> sp.Expr:
        """U = −Σ m_j g·r_Cj (uniform gravity g, inertial frame).

        Examples
        --------
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> TreeSystem([0], [Hinge(1)], [Body(3, (2, 0, 0))], gravity=(0, -10, 0)).potential_energy()
        60*sin(H1_1)
        """
        kin = self.kinematics()
        return -sum((self.bodies[j - 1].mass * mm(self.gravity.T, kin[j]["rC"])[0]
                     for j in range(1, self.n + 1)), sp.Integer(0))

    def mass_matrix(self) -> sp.Matrix:
        """M(q) = Σ m J_vᵀ J_v + J_ωᵀ I J_ω, the Hessian of T in q̇ (sympy N x N).

        Examples
        --------
        >>> import sympy as sp
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> m, l = sp.symbols("m l", positive=True)
        >>> arm = TreeSystem([0, 1], [Hinge(1), Hinge(1, offset=(l, 0, 0))],
        ...                  [Body(m, (l, 0, 0), sp.zeros(3)), Body(m, (l, 0, 0), sp.zeros(3))])
        >>> sp.trigsimp(arm.mass_matrix())          # two point masses on a planar double pendulum
        Matrix([
        [l**2*m*(2*cos(H2_1) + 3), l**2*m*(cos(H2_1) + 1)],
        [  l**2*m*(cos(H2_1) + 1),                 l**2*m]])
        """
        if self._M is None:
            t0 = time.perf_counter()
            kin, M = self.kinematics(), sp.zeros(self.N, self.N)
            for j in range(1, self.n + 1):
                b, Jv, Jw = self.bodies[j - 1], kin[j]["Jv"], kin[j]["Jw"]
                M += mm(b.mass * Jv.T, Jv) + mm(mm(Jw.T, b.inertia), Jw)
            self._M = M
            self.timings["mass_matrix"] = time.perf_counter() - t0
        return self._M

    def bias(self, method: str = "kane") -> sp.Matrix:
        r"""bias(q, q̇, t) with ``M q̈ + bias = Q``: Coriolis, centrifugal, gravity and
        root-motion terms (sympy N x 1).

        ``method="lagrange"``: Lagrange's equations at q̈ = 0 with ``p = ∂T/∂q̇``,
        ``(∂p/∂q) q̇ + ∂p/∂t − ∂T/∂q + ∂U/∂q``.  ``method="kane"`` (default, faster): the
        same equations by partial velocities,
        ``Σ J_vjᵀ m_j (v̇_j + ω_j × v_j − R_jᵀ g) + J_ωjᵀ (I_j ω̇_j + ω_j × I_j ω_j)``,
        body-coordinate velocities, dots = time derivatives at q̈ = 0.  ``method="recursive"``:
        the same sum with the accelerations built outward from the inner bodies' (cheapest for
        deep trees; :mod:`opalg.symbolic.recursive_bias`).

        Examples
        --------
        >>> import sympy as sp
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> g = sp.Symbol("g")
        >>> pend = TreeSystem([0], [Hinge(1)], [Body(2, (1, 0, 0), sp.eye(3))], gravity=(0, -g, 0))
        >>> pend.bias("lagrange"), pend.bias("kane")
        (Matrix([[2*g*cos(H1_1)]]), Matrix([[2*g*cos(H1_1)]]))
        """
        if method not in self._bias:
            if method not in ("kane", "lagrange", "recursive"):
                raise StateError(f"method must be 'kane', 'lagrange' or 'recursive', got {method!r}")
            M = self.mass_matrix()
            t0 = time.perf_counter()
            qd, kin = sp.Matrix(self.qd), self.kinematics()
            if method == "recursive":
                from opalg.symbolic.recursive_bias import recursive_bias
                B = recursive_bias(self)
            elif method == "lagrange":
                p = mm(M, qd)
                for j in range(1, self.n + 1):
                    b, k = self.bodies[j - 1], kin[j]
                    p += mm(k["Jv"].T, b.mass * k["vt"]) + mm(k["Jw"].T, mm(b.inertia, k["wt"]))
                T, U = self.kinetic_energy(), self.potential_energy()
                B = (mm(p.jacobian(self.q), qd) + sp.diff(p, t)
                     - sp.Matrix([sp.diff(T, x) for x in self.q]) + sp.Matrix([sp.diff(U, x) for x in self.q]))
            else:
                B = sp.zeros(self.N, 1)
                for j in range(1, self.n + 1):
                    b, k = self.bodies[j - 1], kin[j]
                    w, v = self.velocities(j)
                    wdot = mm(w.jacobian(self.q), qd) + sp.diff(w, t)
                    vdot = mm(v.jacobian(self.q), qd) + sp.diff(v, t)
                    B += mm(k["Jv"].T, b.mass * (vdot + w.cross(v) - mm(k["R"].T, self.gravity)))
                    B += mm(k["Jw"].T, mm(b.inertia, wdot) + w.cross(mm(b.inertia, w)))
            self._bias[method] = B
            self.timings["bias_" + method] = time.perf_counter() - t0
        return self._bias[method]

    def generalized_forces(self, forces=None, moments=None, springs=None, dampers=None) -> sp.Matrix:
        r"""Q from applied forces and hinge forces by partial velocities (paper §1.5).

        ``forces`` / ``moments``: dicts j -> 3-vector, the resultant F_j at the mass centre and
        the moment L_j, in body-j coordinates (may depend on q, q̇, t):
        ``Q_i = Σ_j F_j·∂v_Cj/∂q̇_i + L_j·∂ω_j/∂q̇_i``.  Non-ideal hinges: ``springs``
        {coordinate: (k, q0)} and ``dampers`` {coordinate: c} add ``−k (q − q0) − c q̇``.

        Examples
        --------
        >>> import sympy as sp
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> s = TreeSystem([0], [Hinge(1, 1)], [Body(1, (1, 0, 0))])
        >>> s.q
        [Z1_1, H1_1]
        >>> F = sp.Symbol("F")
        >>> s.generalized_forces(forces={1: (0, F, 0)}, springs={s.q[1]: (3, 0)}).T
        Matrix([[-F*sin(H1_1), F - 3*H1_1]])
        """
        kin, Q = self.kinematics(), sp.zeros(self.N, 1)
        for name, load, key in (("force", forces, "Jv"), ("moment", moments, "Jw")):
            for j, F in (load or {}).items():
                if j not in kin or j == 0:
                    raise StateError(f"{name} on body {j}: no such body (bodies are 1..{self.n})")
                Q += kin[j][key].T * as_matrix(F, (3,), f"{name} on body {j}", StateError)
        index = {s: i for i, s in enumerate(self.q)}
        for what, table in (("spring", springs), ("damper", dampers)):
            for s in table or {}:
                if s not in index:
                    raise StateError(f"{what} on {s!r}: not a generalized coordinate of this system "
                                     f"(coordinates: {', '.join(map(str, self.q))})")
        for s, (k, q0) in (springs or {}).items():
            k, q0 = (scalar(v, f"spring on {s}: {nm}", StateError) for v, nm in ((k, "k"), (q0, "q0")))
            Q[index[s]] -= k * (s - q0)
        for s, c in (dampers or {}).items():
            Q[index[s]] -= scalar(c, f"damper on {s}", StateError) * self.qd[index[s]]
        return Q

    def cse(self, method: str = "kane", Q=None) -> tuple:
        """M(q), the bias and (optionally) generalized forces ``Q`` with common subexpressions
        eliminated together (``sympy.cse``): ``(replacements, M, bias[, Q])`` where
        ``replacements`` = [(symbol x_k, expression)].

        Examples
        --------
        >>> from opalg.symbolic import deployable_example
        >>> s = deployable_example("deploy")
        >>> reps, M, b, Q = s.cse(Q=s.generalized_forces(springs={s.q[2]: (8, 0)}))
        >>> M.shape, b.shape, Q.shape, all(str(x).startswith("x") for x, _ in reps)
        ((6, 6), (6, 1), (6, 1), True)
        """
        Q = None if Q is None else as_matrix(Q, (self.N, 1), "Q", StateError)
        exprs = [self.mass_matrix(), self.bias(method)] + ([] if Q is None else [Q])
        reps, reduced = sp.cse(exprs, order="none")   # order='none': no canonical sort of the terms
        return (reps, *reduced)

    def equations_of_motion(self, Q=None) -> sp.Matrix:
        """``M q̈ + bias − Q`` (sympy), with symbols ``qdd0..`` for q̈.

        Examples
        --------
        >>> from opalg.symbolic import Body, Hinge, TreeSystem
        >>> TreeSystem([0], [Hinge(1)], [Body(3, (2, 0, 0))], gravity=(0, -10, 0)).equations_of_motion()
        Matrix([[13*qdd0 + 60*cos(H1_1)]])
        """
        qdd = sp.Matrix(sp.symbols(f"qdd0:{self.N}", real=True))
        Q = sp.zeros(self.N, 1) if Q is None else as_matrix(Q, (self.N, 1), "Q", StateError)
        return self.mass_matrix() * qdd + self.bias() - Q

    # ------------------------------------------------------------------ numeric and opalg routes
    def lambdify(self, subs=None, with_bias: bool = True, method: str = "kane"):
        """Numeric callables ``M(q)`` and ``bias(q, qd, t=0.0)`` (sympy.lambdify with cse).

        ``subs`` maps remaining symbolic parameters (masses, lengths, rates) to numbers.

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.symbolic import deployable_example
        >>> Mf, bf = deployable_example("deploy").lambdify()
        >>> Mf(np.zeros(6)).shape, bf(np.zeros(6), np.zeros(6)).shape
        ((6, 6), (6,))
        """
        from opalg.symbolic.numeric import lambdify_system
        return lambdify_system(self, subs, with_bias, method)

    def to_model(self, with_root: bool = False):
        """The same system as an opalg Model (one single-axis body per coordinate, label = q
        index, massless intermediate frames); ``with_root=True`` prepends the six axes of a
        prescribed root.  See :func:`opalg.symbolic.model_route.to_model`."""
        from opalg.symbolic.model_route import to_model
        return to_model(self, with_root)

    def simulate(self, q0, v0=None, t_span=None, *args, **kwargs):
        """Integrate ``M q̈ = Q − bias`` through :func:`opalg.simulate.integrate`; returns an
        :class:`opalg.simulate.Trajectory`.  See :func:`opalg.symbolic.numeric.simulate` for
        the arguments, the extras and the energy check (old names ``qd0``, ``Q``: a DeprecationWarning)."""
        from opalg.simulate.compat import renamed
        from opalg.symbolic.numeric import simulate
        kwargs = renamed("TreeSystem.simulate", kwargs, {"qd0": "v0", "Q": "tau"}, extra_ok=True,
                         v0=v0, t_span=t_span)
        return simulate(self, q0, kwargs.pop("v0", None), kwargs.pop("t_span", None), *args, **kwargs)
