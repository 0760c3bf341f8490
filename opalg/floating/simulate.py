r"""Forward dynamics on the configuration manifold: q with unit quaternions, v of size nv (K12).

The state is y = [q; v] (nq + nv); each right-hand side

.. math:: \dot p = R\,v_{lin},\quad \dot{\mathbf q} = \tfrac12\,\mathbf q ⊗ (ω, 0)
          \ \text{(each free joint)},\qquad \dot θ = v \ \text{(the others)},\qquad
          \dot v = \mathrm{ABA}(q, v, τ, f_{ext})

first renormalizes every free joint's quaternion of q: a Runge–Kutta stage combines
quaternions linearly, so its norm is off by the step's local error; renormalized, every call of
:func:`opalg.aba` sees a configuration that passes the K8 check (norm within
:data:`opalg.spatial.quaternion.UNIT_TOL`) and the normalization is a projection back onto the manifold,
which the error control absorbs.  The stored samples are renormalized the same way.  The
right-hand side is that of the raw coordinates (the quaternion-rate ODE), stepped by the one
integrator seam, :func:`opalg.simulate.integrate`: error control, dense output, and a failure
keeps every accepted step and says when and why.

**A state too large for double precision.**  The solvers measure ẏ and the local error by
root-mean-square norms, which square the entries; with velocities near 1e77 and beyond, ẏ
(quadratic in v: the Coriolis and gyroscopic terms) has entries whose squares overflow, the
error control is blind and the run crawls with steps of 1e-150 s.  The right-hand side refuses
such a rate (:func:`checked_rate`): at t0 a StateError before the run, later a "failed" run.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from opalg import _backend as bk
from opalg.simulate import Trajectory, integrate
from opalg.simulate._integrate import potential_energy, tau_at, tau_function
from opalg.errors import StateError
from opalg.algorithms.aba import aba
from opalg.model.kinematics import body_kinematics, check_forces, check_state
from opalg.model.multibody import Model
from opalg.algorithms.momentum import spatial_momentum
from opalg.spatial.quaternion import multiply, rotation


def normalized(model: Model, q: np.ndarray) -> np.ndarray:
    """A copy of q (..., nq) with every free joint's quaternion scaled to unit norm.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(2, seed=0, floating=True)
    >>> q = opalg.neutral(m); q[6] = 2.0
    >>> float(normalized(m, q)[6])
    1.0
    """
    q = np.array(q, dtype=float)
    for k in model.free_bodies:
        sl = slice(model.q_slice[k].start + 3, model.q_slice[k].stop)
        q[..., sl] /= np.linalg.norm(q[..., sl], axis=-1, keepdims=True)
    return q


def config_rate(model: Model, q, v) -> np.ndarray:
    r"""q̇ (..., nq) of the raw coordinates: ṗ = R v_lin and ½ quat ⊗ (ω, 0) for a free joint, v otherwise (K12).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, seed=1, floating=True)
    >>> rng = np.random.default_rng(0)
    >>> q, v, h = opalg.neutral(m), rng.normal(size=m.nv), 1e-7
    >>> fd = (opalg.integrate(m, q, v, h) - opalg.integrate(m, q, v, -h)) / (2 * h)
    >>> bool(np.allclose(config_rate(m, q, v), fd, atol=1e-7))
    True
    """
    q, v = np.asarray(q), np.asarray(v)
    out = np.empty(np.broadcast_shapes(q.shape[:-1], v.shape[:-1]) + (model.nq,),
                   dtype=np.result_type(q, v))
    for k in range(model.n):
        qs, vs = model.q_slice[k], model.dof_slice[k]
        if model.joints[k].free:
            quat, w, u = q[..., qs][..., 3:], v[..., vs][..., :3], v[..., vs][..., 3:]
            out[..., qs.start:qs.start + 3] = bk.mv(rotation(quat), u)
            out[..., qs.start + 3:qs.stop] = 0.5 * multiply(quat, np.concatenate(
                [w, np.zeros(w.shape[:-1] + (1,))], -1))
        else:
            out[..., qs] = v[..., vs]
    return out


def kinetic_energy(model: Model, q, v) -> np.ndarray:
    r"""½ Σ_k V(k)ᵀ M(k) V(k) = ½ vᵀℳv (...,) by one outward velocity sweep (C1).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "tree", seed=2, floating=True)
    >>> q, v = opalg.neutral(m), np.ones(m.nv)
    >>> bool(np.isclose(kinetic_energy(m, q, v), 0.5 * v @ opalg.crba(m, q) @ v))
    True
    """
    kin = body_kinematics(model, q, v, gravity=False, validate=False)
    return 0.5 * sum(np.sum(kin.V[k] * bk.mv(model.I_spatial[k], kin.V[k]), -1) for k in range(model.n))


def checked_rate(y_dot: np.ndarray) -> np.ndarray:
    r"""``y_dot`` itself if Σ ẏ_i² is finite; StateError otherwise (module docstring).

    The solvers' error norms are root-mean-square norms of ẏ (and of errors of its size): with
    max |ẏ_i| above about 1.3e154 the sum of squares overflows and the step-size control fails.

    Examples
    --------
    >>> import numpy as np
    >>> checked_rate(np.array([3.0, 4.0]))
    array([3., 4.])
    >>> checked_rate(np.array([1e200, 1.0]))
    Traceback (most recent call last):
    ...
    opalg.errors.StateError: the rate ẏ = (q̇, v̇) has max |ẏ_i| = 1e+200, whose square overflows double precision, so the solver's error norm cannot be formed (a state or a force too large for double precision: the Coriolis terms grow as |v|²)
    """
    with np.errstate(over="ignore", invalid="ignore"):
        square = float(y_dot @ y_dot)
    if not np.isfinite(square):
        raise StateError(f"the rate ẏ = (q̇, v̇) has max |ẏ_i| = {np.abs(y_dot).max():.3g}, whose square "
                         "overflows double precision, so the solver's error norm cannot be formed (a state or "
                         "a force too large for double precision: the Coriolis terms grow as |v|²)")
    return y_dot


def _force_function(model: Model, f_ext):
    """``f_ext(t, q, v)`` (or None) from None, a constant (n, 6) array, or a callable (checked per call)."""
    if f_ext is None:
        return None
    if callable(f_ext):
        def checked(t, q, v):
            try:
                F = check_forces(model, f_ext(t, q, v), "f_ext")
            except StateError as e:
                raise StateError(f"simulate: f_ext(t, q, v) at t = {t:.6g}: {e}") from None
            if F.shape != (model.n, 6):
                raise StateError(f"simulate: f_ext(t, q, v) returned shape {F.shape} at t = {t:.6g}, "
                                 f"expected ({model.n}, 6)")
            return F
        return checked
    F = check_forces(model, f_ext, "f_ext")
    if F.shape != (model.n, 6):
        raise StateError(f"simulate: f_ext must be None, an array of shape ({model.n}, 6) or a callable")
    return lambda t, q, v: F


def simulate(model: Model, q0, v0, t_span, tau=None, gravity: bool = True, f_ext=None,
             method: str = "DOP853", rtol: float = 1e-10, atol: float = 1e-12, t_eval=None,
             max_step: float = np.inf, max_steps: int = 100_000, wall_time: float | None = None) -> Trajectory:
    r"""Integrate ℳv̇ + C = τ + Σ J_k* f_ext(k) on the configuration manifold (K12).

    Any model: free joints advance by the quaternion rate ½ quat ⊗ (ω, 0) and ṗ = R v, other
    joints by θ̇ = v; v̇ from :func:`opalg.aba`; the quaternions are renormalized inside every
    right-hand side (module docstring).  Without free joints it is a plain integration of aba.
    The run goes through :func:`opalg.simulate.integrate`: a failure (an error in ``tau`` or
    ``f_ext``, a step-size collapse, a non-finite state) keeps every accepted step,
    ``status="failed"``, and the message says when and why; a rate too large for the solver's
    error norm (:func:`checked_rate`) is a StateError at t0 and a failure later.

    Parameters
    ----------
    model : Model
    q0 : array_like, shape (nq,) ; v0 : array_like, shape (nv,)
    t_span : (t0, t1)
    tau : None, array (nv,) or callable ``tau(t, q, v)``
        Generalized forces (a free joint's six entries are a body-frame wrench on it).
    gravity : bool
        Include the model's gravity.
    f_ext : None, array (n, 6) or callable ``f_ext(t, q, v)``
        External forces as in :func:`opalg.aba` (C9).
    method, rtol, atol, max_step, max_steps, wall_time
        As in :func:`opalg.simulate.integrate` (over a budget, or stalled, a run ends "failed"
        with its steps).
    t_eval : array_like, optional
        Output times within ``t_span`` (default: the accepted steps).

    Returns
    -------
    Trajectory
        ``q`` (quaternions renormalized) and ``v`` at ``t``, and the extras ``momentum`` (K, 6),
        the spatial momentum h_0 about the inertial origin in inertial axes (K10); ``energy``
        (K,), ½vᵀℳv plus, with gravity, the potential −Σ m_k g·c_k; ``momentum_drift``,
        max_k ‖h_0(t_k) − h_0(t_0)‖ (conserved to the solver's tolerance without gravity, τ or
        f_ext), and ``energy_drift``, max_k |E(t_k) − E(t_0)| (conserved without τ and f_ext).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.floating import simulate
    >>> m = opalg.random_model(3, "chain", seed=0, joints="revolute", floating=True)
    >>> v0 = np.random.default_rng(0).normal(size=m.nv)
    >>> sim = simulate(m, opalg.neutral(m), v0, (0.0, 0.5), gravity=False)
    >>> sim.status, sim.momentum_drift < 1e-8, sim.energy_drift < 1e-8
    ('completed', True, True)
    """
    if not isinstance(model, Model):
        raise StateError(f"floating.simulate: model must be an opalg.Model, got {type(model).__name__}")
    q0 = check_state(model, q0, "q0", config=True)
    v0 = check_state(model, v0, "v0")
    if q0.shape != (model.nq,) or v0.shape != (model.nv,) or q0.dtype.kind != "f" or v0.dtype.kind != "f":
        raise StateError(f"floating.simulate: q0 and v0 must be single real states of shapes ({model.nq},) "
                         f"and ({model.nv},)")
    tau_fn = tau_function(model, tau)
    f_fn = _force_function(model, f_ext)
    nq = model.nq

    def rhs(t, y):
        q, v = normalized(model, y[:nq]), y[nq:]
        T = tau_at(model, tau_fn(t, q, v), t) if callable(tau) else tau_fn(t, q, v)
        F = None if f_fn is None else f_fn(t, q, v)
        return checked_rate(np.concatenate([config_rate(model, q, v),
                                            aba(model, q, v, T, f_ext=F, gravity=gravity)]))

    sol = integrate(rhs, np.concatenate([q0, v0]), t_span, t_eval=t_eval, method=method, rtol=rtol,
                    atol=atol, max_step=max_step, max_steps=max_steps, wall_time=wall_time,
                    name="floating.simulate's right-hand side")
    q, v = normalized(model, sol.y[:, :nq]), sol.y[:, nq:]
    if len(sol.t):
        h = spatial_momentum(model, q, v)
        E = kinetic_energy(model, q, v) + (potential_energy(model, q) if gravity else 0.0)
    else:
        h, E = np.zeros((0, 6)), np.zeros(0)
    return Trajectory.from_solution(
        replace(sol, y=np.concatenate([q, v], axis=1)), nq, model.nv, momentum=h, energy=E,
        momentum_drift=float(np.linalg.norm(h - h[:1], axis=-1).max(initial=0.0)),
        energy_drift=float(np.abs(E - E[:1]).max(initial=0.0)))
