r"""Numeric functions generated from a TreeSystem, and simulation through the integrator seam.

The sympy expressions are turned into numpy callables by ``sympy.lambdify(..., cse=True)``
(common subexpressions are computed once).  :func:`simulate` integrates
``M(q) q̈ = Q(q, q̇, t) − bias(q, q̇, t)`` through the integrator seam
(:func:`opalg.simulate.integrate`) and carries two extra states, the work done by the
dampers and by the remaining applied forces, so that the energy balance
``T + U + U_springs + W_dampers − W_applied = const`` can be checked along the run (fixed
root only: a prescribed root does work that is not part of the balance).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
import sympy as sp
from sympy.core.function import AppliedUndef

from opalg import _backend as bk
from opalg.errors import ModelError, SingularConfigurationError, StateError
from opalg.model import _validate
from opalg.simulate import Trajectory, integrate
from opalg.simulate.compat import renamed
from opalg.symbolic.data import as_matrix, check_subs, check_system, scalar, t

#: The old name (opalg.symbolic.SingularConfiguration): a singular configuration of a valid system.
SingularConfiguration = SingularConfigurationError


def _free(system, exprs, bound=()):
    """ModelError if ``exprs`` have symbols other than q, q̇, t (and the ``bound`` cse symbols),
    or undefined functions (``sympy.Function("f")``), which lambdify would print by name into
    the code it executes."""
    allowed = set(system.q) | set(system.qd) | {t} | set(bound)
    free = set().union(*(e.free_symbols for e in exprs)) - allowed
    if free:
        raise ModelError(f"unset symbolic parameters {sorted(map(str, free))}: pass subs={{symbol: value}}")
    undefined = set().union(*(e.atoms(AppliedUndef) for e in exprs))
    if undefined:
        names = sorted({repr(str(f.func)) for f in undefined})
        raise ModelError(f"undefined functions {', '.join(names)} in the expressions: give them as sympy "
                         "expressions of t (e.g. sympy.sin(t)) or substitute them with subs=")
    # Nothing but plain identifiers is ever printed into the code lambdify executes: the symbols
    # (q, q̇, t and the cse's) and sympy's own functions; a Function subclass of the user's is refused.
    for e in exprs:
        for f in e.atoms(sp.Function):
            cls = f.func
            if not cls.__module__.startswith("sympy."):
                raise ModelError(f"function {cls.__name__!r:.80} is not one of sympy's: only sympy's own "
                                 "functions are turned into code (write it out in sympy functions of t)")
            _validate.identifier(cls.__name__, "function name", "lambdify")
    for x in allowed:
        _validate.identifier(x.name, "symbol name", "lambdify")


def _lambdify(system, args, expr):
    """``sympy.lambdify(args, expr, "numpy", cse=...)`` after :func:`_free`'s check on the
    cse-reduced form (each shared subexpression walked once, not once per occurrence).

    The cse (``order="none"``) is computed once and handed to lambdify, which prints it.
    """
    reps, reduced = _cse_homogeneous(expr)
    _free(system, [*(e for _, e in reps), *(reduced if isinstance(reduced, list) else [reduced])],
          bound=[x for x, _ in reps])
    # lambdify is handed the reduced form, and the cse as its ``cse`` callable: what it walks
    # for its namespace is then the small reduced form, not the expression tree unshared
    # (that walk was a third of the time); _free has checked that nothing but q, q̇ and t is
    # free, and that no undefined (so no implemented) function is left (use_imps=False).
    return sp.lambdify(args, reduced, "numpy", cse=lambda _: (reps, reduced), use_imps=False)


def _cse_homogeneous(expr):
    """``sympy.cse(expr, list=False, order="none")``: lambdify's ``cse=True`` without the
    canonical sort of the terms (the same values; the sort dominates large expressions)."""
    return sp.cse(expr, list=False, order="none")


def _check_bodies(system, subs) -> None:
    """ModelError naming the body whose mass, once ``subs`` is applied, is not a positive finite
    number, or whose mass centre or inertia has a non-finite entry (checked before lambdify)."""
    if not subs:
        return
    for j, b in enumerate(system.bodies, 1):
        m = _subs(b.mass, subs)
        if m.is_number and (m.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or not m.is_real or not float(m) > 0):
            raise ModelError(f"body {j}: mass must be > 0 and finite, got {m} after subs=")
        for what, x in (("mass centre", b.com), ("inertia tensor", b.inertia)):
            if _subs(x, subs).has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                raise ModelError(f"body {j}: the {what} has a non-finite entry after subs=")


def _subs(e, subs):
    """``e`` with the substitutions (checked: sympy keys, numbers or sympy values, no strings)."""
    return e.subs(check_subs(subs)) if subs else e


def _cached(kind):
    """Cache generated functions on the system per (kind, subs, method): lambdify of a
    15-DoF bias takes seconds, and simulate/lambdify may be called many times."""
    def wrap(make):
        def get(system, subs, *args):
            try:
                key = (kind, tuple(sorted((str(k), complex(v)) for k, v in (subs or {}).items())), args)
            except (TypeError, ValueError):
                return make(system, subs, *args)
            cache = system._numeric
            if key not in cache:
                cache[key] = make(system, subs, *args)
            return cache[key]
        return get
    return wrap


@_cached("M")
def _mass_function(system, subs):
    M = _subs(system.mass_matrix(), subs)
    Mf, N = _lambdify(system, [system.q], M), system.N

    def Mfun(q):
        return np.asarray(Mf(_state(q, N, "q")), float)

    return Mfun


@_cached("bias")
def _bias_function(system, subs, method):
    B = _subs(system.bias(method), subs)
    Bf, N = _lambdify(system, [system.q, system.qd, t], B), system.N

    def Bfun(q, qd, t=0.0):
        return np.asarray(Bf(_state(q, N, "q"), _state(qd, N, "qd"), float(t)), float).reshape(-1)

    return Bfun


def lambdify_system(system, subs=None, with_bias=True, method="kane"):
    """``M(q)`` and ``bias(q, qd, t=0.0)`` as numpy callables; see TreeSystem.lambdify."""
    check_system(system, "lambdify_system")
    t0 = time.perf_counter()
    with_bias = _validate.flag(with_bias, "with_bias", "lambdify", ModelError)
    _validate.choice(method, ("kane", "recursive", "lagrange"), "method", "lambdify")
    _check_bodies(system, check_subs(subs))
    out = _mass_function(system, subs)
    if with_bias:
        out = out, _bias_function(system, subs, method)
    system.timings["lambdify"] = time.perf_counter() - t0
    return out


def _state(x, N, name):
    bk.check_no_strings(x, name, StateError)
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise StateError(f"{name} must hold numbers, got {x!r:.60}") from None
    if x.shape != (N,):
        raise StateError(f"{name} must have shape ({N},) (one entry per generalized coordinate), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise StateError(f"{name} has non-finite entries at indices {np.flatnonzero(~np.isfinite(x)).tolist()}")
    return x


def pose_function(system, subs=None):
    """Callable ``poses(q, t=0.0) -> (R, p)``: inertial-from-body rotations (n+1, 3, 3) and
    origins (n+1, 3) of B0..Bn (R_j = A_jᵀ), e.g. for drawing configurations.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.symbolic import Body, Hinge, TreeSystem, pose_function
    >>> s = TreeSystem([0, 1], [Hinge(1), Hinge(1, offset=(1, 0, 0))], [Body(1)] * 2)
    >>> R, p = pose_function(s)([np.pi / 2, 0.0])
    >>> p.round(12).tolist()                    # B2's hinge swung from (1, 0, 0) to (0, 1, 0)
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    check_system(system, "pose_function")
    kin = system.kinematics()
    exprs = [_subs(kin[j]["R"], subs) for j in range(system.n + 1)]
    exprs += [_subs(kin[j]["rO"], subs) for j in range(system.n + 1)]
    f = _lambdify(system, [system.q, t], exprs)
    n1 = system.n + 1

    def poses(q, t=0.0):
        out = [np.asarray(np.broadcast_to(np.asarray(e, float), s), float)
               for e, s in zip(f(_state(q, system.N, "q"), float(t)), [(3, 3)] * n1 + [(3, 1)] * n1)]
        return np.array(out[:n1]), np.array(out[n1:])[:, :, 0]

    return poses


def _singular_hinges(system, q):
    out = []
    for j, h in enumerate(system.hinges, 1):
        if h.nr == 3 and abs(np.sin(q[system.q.index(system.coordinate(j, "H", 3))])) < 1e-6:
            out.append(j)
    return out


def _factor(system, M, q, t_now):
    try:
        L = np.linalg.cholesky(M)
        d = np.diag(L) ** 2
        if d.min() > 1e-12 * d.max():
            return L
    except np.linalg.LinAlgError:
        pass
    hint = _singular_hinges(system, q)
    why = (f": the z-x-z Euler angles of hinge(s) {hint} are singular at sin H_j3 = 0 "
           "(H_j1 and H_j2 turn about the same axis); start away from it or use NR = 2 / 1"
           if hint else "")
    raise SingularConfigurationError(f"mass matrix is singular at t = {t_now:g}{why}",
                                     body=hint[0] if hint else None, q=np.array(q))


def simulate(system, q0, v0=None, t_span=None, springs=None, dampers=None, forces=None, moments=None,
             tau=None, subs=None, t_eval=None, method="DOP853", rtol=1e-10, atol=1e-10, bias_method="kane",
             max_step: float = np.inf, max_steps: int = 100_000, wall_time: float | None = None, **old) -> Trajectory:
    r"""Integrate the equations of motion ``M(q) q̈ + bias(q, q̇, t) = Q`` through :func:`opalg.simulate.integrate`.

    Parameters
    ----------
    system : TreeSystem
    q0, v0 : (N,) initial coordinates and rates (``v0`` is q̇(t0); its old name ``qd0`` is
        accepted with a DeprecationWarning)
    t_span : (t0, t1)
    springs, dampers : hinge springs {coordinate: (k, q0)} and dampers {coordinate: c}
        (as in :meth:`TreeSystem.generalized_forces`; their energy enters the balance)
    forces, moments : applied loads at the mass centres, {j: 3-vector} in body coordinates
    tau : extra generalized force (sympy N x 1 in q, q̇, t; the paper's Q, the old keyword name)
    subs : values of remaining symbolic parameters
    t_eval, method, rtol, atol, max_step, max_steps, wall_time : passed to :func:`opalg.simulate.integrate`
    bias_method : {"kane", "recursive", "lagrange"}
        how the bias is derived (:meth:`TreeSystem.bias`); "recursive" is the cheapest for
        deep trees

    Returns
    -------
    opalg.simulate.Trajectory
        ``q`` and ``v`` (= q̇) at ``t``; ``status`` and ``message`` from the seam: a run that stops
        early (a load or a state that turns non-finite, ℳ singular on the way, the solver's
        failure) is ``"failed"`` with the steps computed kept and the message saying when and why.
        Extras, one value per sample: ``kinetic`` 𝒦, ``potential`` 𝒰 (gravity), ``spring``
        𝒰_s, ``dissipated`` W_d (work of the dampers) and ``applied`` W_a (work of the other
        generalized forces); ``nfev`` the calls of the right-hand side.  With a fixed root also
        ``energy`` E = 𝒦 + 𝒰 + 𝒰_s + W_d − W_a, constant in exact arithmetic, and
        ``energy_error`` = max |E − E(t0)| / max(|E(t0)|, max 𝒦), its relative drift (a float;
        NaN if no sample was reached).  A prescribed root does work the balance does not count:
        its runs have neither.

    Raises
    ------
    SingularConfigurationError
        (also importable as ``SingularConfiguration``) if ℳ is singular at the start (checked by
        a Cholesky factor before any integration); ``body`` is the first z-x-z hinge at
        sin H_j3 = 0, if any, and ``q`` the state.  Singular later on, the run ends "failed".

    Examples
    --------
    >>> import numpy as np, sympy as sp
    >>> from opalg.symbolic import deployable_example, deployment_setup, t
    >>> system = deployable_example("deploy")
    >>> setup = deployment_setup(system)
    >>> run = system.simulate(setup.stowed, np.zeros(6), (0.0, 2.0), springs=setup.springs,
    ...                       dampers=setup.dampers, t_eval=np.linspace(0, 2, 5))
    >>> run.status, run.q.shape, run.v.shape, run.energy_error < 1e-8
    ('completed', (5, 6), (5, 6), True)
    >>> blow = sp.Matrix([0, 0, sp.Piecewise((0, t < 1), (sp.oo, True)), 0, 0, 0])   # infinite from t = 1
    >>> bad = system.simulate(setup.stowed, np.zeros(6), (0.0, 2.0), springs=setup.springs, tau=blow)
    >>> bad.status, bool(0.9 < bad.t[-1] < 1.0), "applied load" in bad.message
    ('failed', True, True)
    """
    check_system(system, "simulate")
    kw = renamed("opalg.symbolic.simulate", old, {"qd0": "v0", "Q": "tau"}, v0=v0, t_span=t_span, tau=tau)
    for need in ("v0", "t_span"):
        if need not in kw:
            raise TypeError(f"simulate() missing required argument {need!r}")
    v0, t_span, tau = kw["v0"], kw["t_span"], kw.get("tau")
    N = system.N
    q0, v0 = _state(q0, N, "q0"), _state(v0, N, "v0")
    t0 = _start(t_span)
    if bias_method not in ("kane", "recursive", "lagrange"):
        raise StateError(f"bias_method must be 'kane', 'recursive' or 'lagrange', got {bias_method!r}")
    for nm, x in (("springs", springs), ("dampers", dampers), ("forces", forces), ("moments", moments)):
        if x is not None and not isinstance(x, dict):
            raise StateError(f"simulate: {nm} must be a dict or None, got {_validate.describe(x)}")
    _check_bodies(system, check_subs(subs))
    springs, dampers = dict(springs or {}), dict(dampers or {})
    Qs = system.generalized_forces(springs=springs, dampers=dampers)
    Qa = system.generalized_forces(forces=forces, moments=moments)
    if tau is not None:
        Qa = Qa + as_matrix(tau, (N, 1), "tau", StateError)
    Qs, Qa = _subs(Qs, subs), _subs(Qa, subs)
    _free(system, [Qs, Qa])
    Mf = _mass_function(system, subs)
    _factor(system, Mf(q0), q0, t0)               # refuse a singular start before the long work
    Bf = _bias_function(system, subs, bias_method)
    qs, qds = system.q, system.qd
    Te, Ue = _subs(system.kinetic_energy(), subs), _subs(system.potential_energy(), subs)
    Us = _subs(sum((sp.Rational(1, 2) * k * (s - c) ** 2 for s, (k, c) in springs.items()), sp.Integer(0)), subs)
    _free(system, [Te, Ue, Us])                   # every expression is checked before lambdify
    Qf = sp.lambdify([qs, qds, t], [Qs, Qa], "numpy", cse=_cse_homogeneous)
    Tf = sp.lambdify([qs, qds, t], Te, "numpy", cse=_cse_homogeneous)
    Uf = sp.lambdify([qs, t], Ue, "numpy", cse=_cse_homogeneous)
    Usf = sp.lambdify([qs], Us, "numpy")

    idx = [(qs.index(s), float(_subs(scalar(c, f"damper on {s}", StateError), subs))) for s, c in dampers.items()]

    def damper_power(qd):
        return sum(c * qd[i] ** 2 for i, c in idx)

    def loads(q, qd, t_now):
        out = [np.asarray(x, float).reshape(-1) for x in Qf(q, qd, t_now)]
        for what, x in zip(("spring and damper", "applied"), out):
            if not np.all(np.isfinite(x)):
                i = int(np.flatnonzero(~np.isfinite(x))[0])
                raise StateError(f"the {what} load is not finite ({x[i]} on {qs[i]})")   # the seam adds t
        return out

    def rhs(t_now, y):
        q, qd = y[:N], y[N:2 * N]
        Qsv, Qav = loads(q, qd, t_now)
        L = _factor(system, Mf(q), q, t_now)
        qdd = scipy.linalg.cho_solve((L, True), Qsv + Qav - Bf(q, qd, t_now))
        return np.concatenate([qd, qdd, [damper_power(qd), float(Qav @ qd)]])

    sol = integrate(rhs, np.concatenate([q0, v0, [0.0, 0.0]]), t_span, t_eval=t_eval, method=method,
                    rtol=rtol, atol=atol, max_step=max_step,
                    max_steps=max_steps, wall_time=wall_time, name="the equations of motion")
    q, qd, ts = sol.y[:, :N], sol.y[:, N:2 * N], sol.t
    ex = dict(kinetic=np.array([float(Tf(a, b, c)) for a, b, c in zip(q, qd, ts)]),
              potential=np.array([float(Uf(a, c)) for a, c in zip(q, ts)]),
              spring=np.array([float(Usf(a)) for a in q]),
              dissipated=sol.y[:, 2 * N], applied=sol.y[:, 2 * N + 1], nfev=sol.nfev)
    if not system.prescribed:
        E = ex["kinetic"] + ex["potential"] + ex["spring"] + ex["dissipated"] - ex["applied"]
        drift = (float(np.abs(E - E[0]).max() / max(abs(E[0]), ex["kinetic"].max(), 1e-300))
                 if len(E) else float("nan"))          # no sample reached: no drift to measure
        ex.update(energy=E, energy_error=drift)
    return Trajectory.from_solution(sol, N, N, **ex)


def _start(t_span) -> float:
    """t0 of a finite ``t_span = (t0, t1)`` with t1 > t0 (checked before the long work; the seam
    checks it again, with the other solver arguments)."""
    try:
        t0, t1 = t_span
    except (TypeError, ValueError):
        raise StateError(f"t_span must be a pair (t0, t1), got {t_span!r}") from None
    if not all(isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
               for x in (t0, t1)):
        raise StateError(f"t_span must be a pair of numbers (t0, t1), got {t_span!r}")
    t0, t1 = float(t0), float(t1)
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise StateError(f"t_span must be finite with t1 > t0, got {t_span!r}")
    return t0
