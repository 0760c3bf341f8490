r"""Position assembly and velocity projection onto the closure constraints (docs/REFERENCE.md H6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError
from opalg.algorithms.aba import innovations_passes
from opalg.model.kinematics import check_state
from opalg.algorithms.riccati import articulated
from opalg.closed import geometry as geo
from opalg.closed.solve import _solve_compliance as solve_compliance


@dataclass
class Assembly:
    """Result of :func:`assemble`: the closed configuration, Newton iterations and max |e(q)|."""

    q: np.ndarray
    iterations: int
    residual: float


def assemble(system, q0, tol: float = 1e-12, max_iter: int = 50) -> Assembly:
    r"""Solve e(q) = 0 by damped least-norm Gauss–Newton from q0 (H6).

    .. math:: Δq = −G_c^+(q)\, e(q),\qquad q ← q + s\,Δq,

    with G_c⁺ the pseudo-inverse (least-norm step, so that q moves as little as possible in the
    coordinates) and s halved until ‖e‖ decreases (at most 30 halvings).  Converged when
    max |e| ≤ tol (lengths in the model's units, angles in radians).

    Raises
    ------
    StateError
        If q0 is not a single state (N,), or if max_iter iterations do not reach tol (the message
        gives the residual; the closure may not be reachable from q0).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar
    >>> sys, q = four_bar()
    >>> res = sys.assemble(q + 0.05)
    >>> res.residual < 1e-12, res.iterations < 10
    (True, True)
    """
    q = check_state(system.model, q0, "q0", config=True)
    if q.ndim != 1 or q.dtype.kind != "f":
        raise StateError(f"assemble: q0 must be one real state of shape ({system.model.ndof},), got {q.shape}")
    if not (isinstance(max_iter, int) and max_iter >= 1 and tol > 0):
        raise StateError(f"assemble: need max_iter >= 1 and tol > 0, got {max_iter!r}, {tol!r}")
    q = q.copy()
    e = system.constraint_error(q)
    res = float(np.abs(e).max())
    for it in range(max_iter):
        if res <= tol:
            return Assembly(q, it, res)
        G = system.jacobian(q)
        dq = -np.linalg.lstsq(G, e, rcond=None)[0]
        s = 1.0
        for _ in range(30):
            e_new = system.constraint_error(q + s * dq)
            if np.linalg.norm(e_new) < np.linalg.norm(e):
                break
            s *= 0.5
        else:
            raise StateError(f"assemble: no step decreases the constraint error at iteration {it} "
                             f"(max |e| = {res:.3e}); the closures may be unreachable from q0 "
                             "(a singular or infeasible configuration)")
        q, e = q + s * dq, e_new
        res = float(np.abs(e).max())
    if res <= tol:
        return Assembly(q, max_iter, res)
    raise StateError(f"assemble: not converged after {max_iter} iterations (max |e| = {res:.3e} > "
                     f"tol {tol:g}); the closures may be unreachable from q0")


def project(system, q, qd, metric: str = "mass") -> np.ndarray:
    r"""The velocity closest to θ̇ with G_c θ̇ = 0 (H6).

    ``metric="mass"`` (default) minimizes the kinetic energy of the change,
    ½(θ̇′ − θ̇)ᵀℳ(θ̇′ − θ̇):

    .. math:: θ̇′ = θ̇ − ℳ^{-1} G_c^* Λ_c G_c θ̇,

    the velocity after a perfectly plastic constraint impulse; it is independent of the
    choice of joint coordinates and units (radians vs metres), and uses the O(n) passes and
    Λ_c⁻¹ of :meth:`ClosedSystem.forward`.  ``metric="euclidean"`` gives θ̇ − G_c⁺G_cθ̇ (mixes
    units; for comparison).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar
    >>> sys, q = four_bar()
    >>> qd = sys.project(q, np.ones(3))
    >>> bool(np.abs(sys.jacobian(q) @ qd).max() < 1e-12)
    True
    """
    if metric not in ("mass", "euclidean"):
        raise StateError(f"project: metric must be 'mass' or 'euclidean', got {metric!r}")
    qq, qqd, kin, fr = system._kin(q, qd)
    G = geo.constraint_jacobian(system.model, kin, system.closures, fr)
    if metric == "euclidean":
        Gp = np.linalg.pinv(G, rcond=system.rcond)
        return qqd - bk.mv(Gp @ G, qqd)
    art = articulated(system.model, qq, kin)
    lam, _ = solve_compliance(system._compliance(art, fr), bk.mv(G, qqd), system.rcond)
    return qqd - innovations_passes(system.model, art, bk.mv(bk.mT(G), lam)[..., None]).qdd[..., 0]
