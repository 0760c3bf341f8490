r"""The deployment with a free-floating truss, by the two routes of docs/REFERENCE.md K13.

* Euler route: ``deployable_example("deploy", base="free")`` (the truss is B1 on a 6-DoF hinge:
  slides along the inertial axes and z-x-z angles) integrated by
  :func:`opalg.symbolic.numeric.simulate` (``M(q) q̈ + bias = Q``, DOP853), with the
  bias derived by ``method="recursive"`` (:mod:`opalg.symbolic.recursive_bias`: the Kane
  derivation takes ~6–9 s here, Lagrange's ~60 s).
* Operator route: :func:`~opalg.symbolic.free_root.free_root_model` (the truss on an opalg
  FreeJoint) integrated by :func:`opalg.floating.simulate` in its own configuration space: the
  state is ``(q_op, v)`` with the truss quaternion, ``v̇ = aba(model, q_op, v, τ)`` and the
  configuration rate ``ṗ = R v_lin``, ``quaṫ = ½ quat ⊗ (ω, 0)`` (body twist), every other
  ``q̇ = v``; the quaternion is renormalized in every right-hand side and in the output.  The
  Euler chart is never used, so the comparison of the two runs checks the state map and the
  chart as well as ℳ and the bias.

Both routes are stepped by the one integrator seam, :func:`opalg.simulate.integrate` (the same
DOP853 at the same tolerances); what keeps them independent is the dynamics each steps (sympy's
Lagrange equations in Euler angles, opalg's ABA on the manifold), not the stepper.

The truss starts turned by ``FREE_TRUSS_ANGLES`` (H1_3 = π/2, away from the chart's singular
sin H1_3 = 0): its z axis, along which the platform stands, lies along the inertial −y, so the
view ``"xz"`` of :func:`~opalg.symbolic.examples.box_outlines` shows the truss from above
(body x to the right, body y up), as ``"xy"`` does for the fixed truss of notebook 09.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from opalg.errors import StateError
from opalg.symbolic.examples import deployable_example, deployment_setup
from opalg.symbolic.free_root import free_root_model, free_state, operator_poses


def _hinge_torques(system, model, setup):
    """τ(q_op, v) of the setup's springs and dampers in the model's velocity order (free joints: 0)."""
    idx = []                                  # (q index, v index, k, q0, c)
    for k in range(model.n):
        if model.joints[k].free:
            continue
        s = system.q[[str(x) for x in system.q].index(model.names[k])]
        kk, q0 = setup.springs.get(s, (0.0, 0.0))
        idx.append((model.q_slice[k].start, model.dof_slice[k].start, float(kk), float(q0),
                    float(setup.dampers.get(s, 0.0))))

    def tau(q, v):
        out = np.zeros(model.nv)
        for iq, iv, kk, q0, c in idx:
            out[iv] = -kk * (q[iq] - q0) - c * v[iv]
        return out

    return tau


@dataclass
class FreeDeployment:
    """Result of :func:`free_deployment`.

    ``t`` (m,); operator route ``q`` (m, nq: truss ``[p; x, y, z, w]`` then the six hinge
    angles), ``v`` (m, nv); ``euler`` the Euler route's :class:`opalg.simulate.Trajectory`
    (``q``, ``v`` = q̇ in Euler coordinates, the energy extras; or None); ``truss_angle`` (m,) the truss's rotation from its start (rad, operator route);
    ``momentum`` (m, 6) the spatial momentum h_0 of the operator route (K10); ``system``,
    ``model``, ``setup``; ``timings`` in seconds (``derive``: ℳ and the bias in sympy,
    ``euler``: lambdify and the symbolic run, ``operator``: the operator run)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    euler: object
    truss_angle: np.ndarray
    momentum: np.ndarray
    system: object
    model: object
    setup: object
    timings: dict = field(default_factory=dict)

    def poses(self):
        """``poses(q_op, t=0.0) -> (R, p)`` of B0..B6 for :func:`box_outlines` (operator route)."""
        return operator_poses(self.system, self.model)


def free_deployment(t_end: float = 2.0, n_out: int = 21, euler: bool = True, system=None,
                    rtol: float = 1e-10, atol: float = 1e-10) -> FreeDeployment:
    r"""The stowed-to-open deployment with the free truss, by both routes (docs/REFERENCE.md K13).

    Starts at ``deployment_setup(system).stowed`` at rest (truss at the origin, turned by
    ``FREE_TRUSS_ANGLES``), springs and dampers of :func:`deployment_setup`, no gravity; the
    truss turns and moves by momentum exchange only, so h_0 stays 0.

    Parameters
    ----------
    t_end, n_out : the run is sampled at ``linspace(0, t_end, n_out)``
    euler : also run the Euler route (derives the 12-DoF equations in sympy, ~3 s, and
        lambdifies them, ~5 s, once per ``system``)
    system : ``deployable_example("deploy", base="free")`` to reuse (its derived equations
        are cached on it); default a new one
    rtol, atol : tolerances of both runs (DOP853 through :func:`opalg.simulate.integrate`)

    Raises
    ------
    StateError
        if either route stops before ``t_end`` (its message says when and why): the two routes
        are compared at the same samples.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.symbolic.free_run import free_deployment
    >>> run = free_deployment(t_end=1.0, n_out=3, euler=False)
    >>> run.q.shape, run.v.shape, float(abs(run.momentum).max()) < 1e-9
    ((3, 13), (3, 12), True)
    >>> bool(run.truss_angle[-1] > 1e-2)                 # the truss really turns
    True
    """
    from opalg.floating.simulate import simulate
    from opalg.spatial.quaternion import log_free

    t_end = float(t_end) if isinstance(t_end, (int, float, np.floating, np.integer)) else None
    if t_end is None or not np.isfinite(t_end) or t_end <= 0:
        raise StateError(f"t_end must be a positive number of seconds, got {t_end!r}")
    if isinstance(n_out, bool) or not isinstance(n_out, (int, np.integer)) or n_out < 2:
        raise StateError(f"n_out must be an integer >= 2, got {n_out!r}")
    system = deployable_example("deploy", base="free") if system is None else system
    setup = deployment_setup(system)            # a StateError for any other system
    if setup.stowed.size != 12:
        raise StateError("free_deployment needs deployable_example('deploy', base='free'), "
                         "not the fixed-truss deployable")
    model = free_root_model(system)
    q0, v0 = free_state(system, setup.stowed, np.zeros(12))
    t_eval = np.linspace(0.0, t_end, n_out)
    timings = {}
    t0 = time.perf_counter()
    tau = _hinge_torques(system, model, setup)
    sim = simulate(model, q0, v0, (0.0, t_end), tau=lambda _, q, v: tau(q, v), t_eval=t_eval,
                   rtol=rtol, atol=atol)
    if not sim.ok:
        raise StateError(f"free_deployment: the operator route stopped: {sim.message}")
    q, v = sim.q, sim.v
    timings["operator"] = time.perf_counter() - t0
    run = None
    if euler:
        t0 = time.perf_counter()
        system.mass_matrix(), system.bias("recursive")
        timings["derive"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        run = system.simulate(setup.stowed, np.zeros(12), (0.0, t_end), springs=setup.springs,
                              dampers=setup.dampers, t_eval=t_eval, rtol=rtol, atol=atol,
                              bias_method="recursive")
        timings["euler"] = time.perf_counter() - t0
        if not run.ok:
            raise StateError(f"free_deployment: the Euler route stopped: {run.message}")
    truss = model.q_slice[model.free_bodies[0]]
    angle = np.linalg.norm(log_free(np.broadcast_to(q[0, truss], (n_out, 7)), q[:, truss])[:, :3], axis=1)
    return FreeDeployment(t_eval, q, v, run, angle, sim.momentum, system, model, setup, timings)
