r"""Under-actuated arms: the Acrobot, the Pendubot, Ider's arm without motor 1, and their control.

docs/REFERENCE.md G2–G5.  An arm with motors on some joints only is hybrid
dynamics (:func:`opalg.hybrid`): the passive joints' forces are known (zero, or
friction), the active joints' accelerations are what a controller chooses, and
the active torques that realize them come out of the same two O(n) passes —
the use the JPL patent makes of the hybrid algorithm.

* :func:`acrobot`, :func:`pendubot`, :func:`ider_arm` build the examples as
  (model, passive mask) pairs;
* :func:`task_control` realizes c task rows ``B q̈ = h`` (c = number of motors)
  with the motors only: **collocated** (B = S_a, the active accelerations) it
  is hybrid dynamics and always feasible; **non-collocated** (e.g. prescribing
  the Acrobot's passive shoulder) it needs ``det(B Θ) ≠ 0`` with Θ the passive
  response to the active accelerations — for the Acrobot Spong's strong
  inertial coupling ℳ₁₂ ≠ 0, the same condition as Ider's ``B ℳ⁻¹ S_aᵀ`` (G5);
* :func:`simulate` integrates a controller through :func:`opalg.simulate.integrate`
  and returns a :class:`~opalg.simulate.Trajectory`; the passive motion emerges
  from the dynamics (e.g. the collocated partial-feedback-linearization swing
  of the Acrobot, :func:`swing_controller`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from opalg.model import _validate, builders
from opalg.model._checks import refuse_free  # noqa: F401  (re-exported: the package's names before the layers)
from opalg.errors import InfeasibleDirections, OpalgError, StateError  # noqa: F401  (as above)
from opalg.algorithms.hybrid import hybrid, hybrid_on, unit_response  # noqa: F401  (as above)
from opalg.algorithms.constrained.passes import conditioning_passes
from opalg.model.kinematics import body_kinematics, check_forces, check_state, overflow_guard
from opalg.model.multibody import Model
from opalg.algorithms.riccati import _riccati, check_passive
from opalg.underactuated.simulation import simulate
from opalg.underactuated.lqr import LQR, lqr, lqr_controller, state_error  # noqa: F401  (LQR on opalg.linearize, E20)
from opalg.underactuated.balance import energy_swing_controller, mechanical_energy, swing_up_and_balance  # noqa: F401  (swing-up and catch)

#: The Acrobot/Pendubot link of Spong (1995): m = 1 kg, l = 1 m, l_c = 0.5 m, I_c = 1/12 kg m².
SPONG = dict(lengths=(1.0, 1.0), masses=(1.0, 1.0), inertias=(1 / 12, 1 / 12))


class UnderactuatedArm(NamedTuple):
    """A model and its passive-dof mask (unpacks as ``model, passive = acrobot()``)."""

    model: Model
    passive: np.ndarray


def _double_pendulum(gravity: float) -> Model:
    if isinstance(gravity, (bool, str)) or not isinstance(gravity, (int, float, np.integer, np.floating)) \
            or not np.isfinite(gravity):
        raise StateError(f"gravity must be a finite number of m/s², got {gravity!r}")
    g = float(gravity)
    return builders.planar_arm(SPONG["lengths"], SPONG["masses"], SPONG["inertias"], gravity=(0.0, -g, 0.0))


def acrobot(gravity: float = 9.81) -> UnderactuatedArm:
    """Spong's Acrobot: a double pendulum in the vertical x–y plane with a passive shoulder.

    Angles follow :func:`opalg.planar_arm` (q = 0: the arm stretched along +x), so
    the arm hangs down at q = (−π/2, 0) and stands upright at (π/2, 0).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import underactuated
    >>> model, passive = underactuated.acrobot()
    >>> passive.tolist(), model.ndof
    ([True, False], 2)
    """
    return UnderactuatedArm(_double_pendulum(gravity), np.array([True, False]))


def pendubot(gravity: float = 9.81) -> UnderactuatedArm:
    """The same double pendulum with a motor at the shoulder and a passive elbow.

    Examples
    --------
    >>> from opalg import underactuated
    >>> underactuated.pendubot().passive.tolist()
    [False, True]
    """
    return UnderactuatedArm(_double_pendulum(gravity), np.array([False, True]))


def ider_arm(inertia: str = "joint", gravity: float = 0.0) -> UnderactuatedArm:
    """Ider's redundant 3-link arm (:func:`opalg.ider.arm`) with no motor at joint 1.

    Examples
    --------
    >>> from opalg import underactuated
    >>> underactuated.ider_arm().passive.tolist()
    [True, False, False]
    """
    from opalg.ider import arm

    return UnderactuatedArm(arm(inertia, gravity), np.array([True, False, False]))


@dataclass
class TaskSolution:
    """``qdd`` (N), ``tau`` (N; the passive entries are the given passive forces), the task
    coupling ``coupling`` = B Θ (N_a × N_a) and Ider's feasibility measure ``kappa`` with
    Z = S_a (1 best, 0 singular)."""

    qdd: np.ndarray
    tau: np.ndarray
    coupling: np.ndarray
    kappa: float


def task_control(model: Model, q, qd, passive, B, h, tau_p=None, f_ext=None, gravity: bool = True,
                 tol: float = 1e-8) -> TaskSolution:
    r"""Motor torques that realize ``B q̈ = h`` on an under-actuated arm (G5), in O(n·N_a).

    With the passive forces T_p given, hybrid dynamics makes θ̈ an affine
    function of the active accelerations:

    .. math::
        \ddot θ = \ddot θ^0 + Θ \ddot θ_a,\qquad
        Θ = \begin{bmatrix} −ℳ_{pp}^{-1}ℳ_{pa} \\ I \end{bmatrix}\ \text{(rows in dof order)},

    where θ̈⁰ is the motion with θ̈_a = 0.  Both come from :func:`opalg.hybrid`
    (1 + N_a runs of its two O(n) passes, the N_a at once), and so does the
    torque τ_a = τ_a⁰ + R θ̈_a with R = ℳ_aa − ℳ_apℳ_pp⁻¹ℳ_pa (G3).  The task
    gives (BΘ) θ̈_a = h − Bθ̈⁰, solvable iff BΘ is invertible.  Since
    ℳ⁻¹S_aᵀ = Θ (ℳ⁻¹)_aa, BΘ = (Bℳ⁻¹S_aᵀ) R: this is Ider's condition with
    Z = S_a, and its scale-free measure κ (:func:`opalg.algorithms.constrained.conditioning`)
    is computed here by ABA passes on the columns of Bᵀ and S_aᵀ
    (:func:`opalg.algorithms.constrained.passes.conditioning_passes`), without a dense ℳ.

    Parameters
    ----------
    model : Model
    q, qd : array_like, shape (N,)
    passive : array_like of bool, shape (N,)
    B : array_like, shape (N_a, N)
        Task rows, as many as there are motors.
    h : array_like, shape (N_a,)
    tau_p : array_like, shape (N_p,), optional
        Forces on the passive dofs (default 0), e.g. friction.
    f_ext, gravity
        As in :func:`opalg.hybrid`.
    tol : float
        The task counts as infeasible when κ < tol (default that of Ider's solves).

    Raises
    ------
    InfeasibleDirections
        If κ < tol: the motors cannot realize this task here (e.g. the Acrobot's
        shoulder prescribed where ℳ₁₂ = 0, no inertial coupling).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import underactuated
    >>> model, passive = underactuated.acrobot()
    >>> q, qd = np.array([-1.2, 0.4]), np.array([0.3, -0.2])
    >>> sol = underactuated.task_control(model, q, qd, passive, B=[[1.0, 0.0]], h=[2.0])   # shoulder: 2 rad/s²
    >>> bool(np.isclose(sol.qdd[0], 2.0)), bool(np.allclose(opalg.rnea(model, q, qd, sol.qdd), sol.tau))
    (True, True)
    >>> M = opalg.crba(model, q)                       # the measure is |ℳ₁₂| / √(ℳ₁₁ℳ₂₂) here
    >>> bool(np.isclose(sol.kappa, abs(M[0, 1]) / np.sqrt(M[0, 0] * M[1, 1])))
    True
    """
    tol = _validate.real(tol, "tol", "task_control", positive=True)
    _validate.flag(gravity, "gravity", "task_control")
    mask = check_passive(model, passive)
    q, qd = check_state(model, q, "q"), check_state(model, qd, "qd")
    if q.ndim != 1 or qd.ndim != 1 or q.dtype.kind != "f" or qd.dtype.kind != "f":
        raise StateError("task_control takes one numeric state: q and qd of shape (N,)")
    n_a, n_p, N = int(np.count_nonzero(~mask)), int(np.count_nonzero(mask)), model.ndof
    if n_a == 0:
        raise StateError("task_control needs at least one active dof (passive is all True)")
    B = check_state(model, B, "B")
    if B.shape != (n_a, N):
        raise StateError(f"B has shape {B.shape}: expected ({n_a}, {N}), one task row per motor")
    h = check_state(model, h, "h", last=n_a)
    if h.shape != (n_a,):
        raise StateError(f"h has shape {h.shape}: expected ({n_a},)")
    tau0 = np.zeros(N)
    if tau_p is not None:
        tau0[mask] = check_state(model, tau_p, "tau_p", last=n_p)
    # One kinematics and one hybrid Riccati recursion serve θ̈⁰ (θ̈_a = 0) and the columns of Θ and R.
    f = None if f_ext is None else check_forces(model, f_ext, "f_ext")

    def passes():
        kin = body_kinematics(model, q, qd, gravity, validate=False)
        art = _riccati(model, q, kin, mask)
        return [*hybrid_on(model, kin, art, tau0, np.zeros(N), f), *unit_response(model, art)]

    qdd0, t0, Theta_p, R = overflow_guard("task_control", passes, {"q": q, "qd": qd})
    Theta = np.zeros((N, n_a))
    Theta[mask], Theta[~mask] = Theta_p, np.eye(n_a)
    E = np.eye(N)[~mask]          # S_a, the motor directions
    C = B @ Theta
    try:    # Ider's measure with Z = S_a, from ABA passes on the columns of Bᵀ and S_aᵀ
        kappa = conditioning_passes(model, q, B, E)
    except InfeasibleDirections:
        kappa = 0.0                     # dependent task rows: no choice of motors realizes them
    if not kappa >= tol:
        # Below ~1e-13 the measure is round-off and its digits vary between machines.
        shown = f"κ = {kappa:.3g}" if kappa > 1e-13 else "κ = 0 to round-off (< 1e-13)"
        raise InfeasibleDirections(
            f"the motors cannot realize this task at q = {np.round(q, 12).tolist()}: feasibility measure "
            f"{shown}, below {tol:g} (the task rows B and the motor directions S_a are ℳ⁻¹-orthogonal "
            "in some direction; for the Acrobot's prescribed shoulder, ℳ₁₂ = 0: no inertial coupling)")
    qdd_a = np.linalg.solve(C, h - B @ qdd0)
    tau = t0.copy()
    tau[~mask] = t0[~mask] + R @ qdd_a
    return TaskSolution(qdd0 + Theta @ qdd_a, tau, C, kappa)


def swing_controller(model: Model, passive, alpha: float = -2.0, kp: float = 50.0, kd: float = 10.0) -> Callable:
    r"""Spong's collocated swing law for the Acrobot: θ̈₂* = k_p(α arctan θ̇₁ − θ₂) − k_d θ̇₂.

    The elbow tracks a target that follows the shoulder's velocity, which pumps
    energy into the passive shoulder.  Returns ``controller(t, q, v) -> θ̈_a``
    for :func:`simulate`.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import underactuated
    >>> ctrl = underactuated.swing_controller(*underactuated.acrobot())
    >>> bool(np.isclose(ctrl(0.0, np.array([-1.5, 0.1]), np.array([1.0, 0.0]))[0], 50 * (-2 * np.arctan(1.0) - 0.1)))
    True
    """
    alpha, kp, kd = (_validate.real(x, nm, "swing_controller") for nm, x in (("alpha", alpha), ("kp", kp), ("kd", kd)))
    mask = check_passive(model, passive)
    if mask.tolist() != [True, False]:
        raise StateError(f"swing_controller is for the Acrobot (passive = [True, False]), got {mask.tolist()}")

    def controller(t, q, qd):
        return np.array([kp * (alpha * np.arctan(qd[0]) - q[1]) - kd * qd[1]])

    return controller


def __getattr__(name: str):
    if name == "Run":      # the old result class: simulate returns a Trajectory now
        import warnings

        from opalg.simulate import Trajectory
        warnings.warn("opalg.underactuated.Run is now opalg.simulate.Trajectory (qd is v, t_fail is t_stop; "
                      "qdd and tau are extras); the name goes in the next release", DeprecationWarning, stacklevel=2)
        return Trajectory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
