r"""A ClosedSystem as Pinocchio rigid constraints: lcaba and the Delassus matrix (H4, H5).

Pinocchio (4.1.0) is an optional oracle; this module imports it on use.  Weld closures become
``CONTACT_6D`` and ball closures ``CONTACT_3D`` constraints in the LOCAL frame of each
closure frame, between the two joints (joint 2 = the universe for a closure to ground).
Pinocchio's constraint rows are linear-first; opalg's are angular-first.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from opalg.errors import StateError
from opalg.algorithms.operational import frame_jacobian
from opalg.pinocchio_bridge import build_pinocchio
from opalg.closed.system import ClosedSystem

#: Row permutation from opalg's angular-first to Pinocchio's linear-first 6-vectors.
LINEAR_FIRST = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])


def _joint_id(tw, model, k: int) -> int:
    """Pinocchio id of the last axis of body k (build_pinocchio names multi-axis joints name_i)."""
    jn, nk = model.joint_names[k], model.joint_sizes[k]
    return tw.model.getJointId(jn if nk == 1 else f"{jn}_{nk - 1}")


def pinocchio_constraints(system: ClosedSystem, tw=None) -> SimpleNamespace:
    r"""Pinocchio twin ``tw`` of the tree and the constraint models/datas of the closures.

    Examples
    --------
    >>> from opalg.closed import random_closed_system
    >>> from opalg.closed.pinocchio_check import pinocchio_constraints
    >>> sys, q = random_closed_system(6, 1, seed=1, kinds=("weld",), where=("ground",))
    >>> len(pinocchio_constraints(sys).models)
    1
    """
    import pinocchio as pin

    m = system.model
    tw = build_pinocchio(m) if tw is None else tw
    cms = pin.StdVec_RigidConstraintModel()
    for i, c in enumerate(system.closures):
        if c.kind not in ("weld", "ball"):
            raise StateError(f"pinocchio_constraints: closure {i} is {c.kind!r}; only weld (CONTACT_6D) "
                             "and ball (CONTACT_3D) closures have a Pinocchio counterpart")
        ct = pin.ContactType.CONTACT_6D if c.kind == "weld" else pin.ContactType.CONTACT_3D
        j2 = 0 if c.ground else _joint_id(tw, m, c.body2)
        cms.append(pin.RigidConstraintModel(ct, tw.model, _joint_id(tw, m, c.body1), pin.SE3(c.R1, c.p1),
                                            j2, pin.SE3(c.R2, c.p2), pin.ReferenceFrame.LOCAL))
    cds = pin.StdVec_RigidConstraintData()
    for cm in cms:
        cds.append(cm.createData())
    return SimpleNamespace(tw=tw, models=cms, datas=cds)


def delassus_comparison(system: ClosedSystem, q) -> SimpleNamespace:
    r"""Pinocchio's Delassus matrix, opalg's Λ_c⁻¹ and J₁ℳ⁻¹J₁ᵀ, all in Pinocchio's row order (H4).

    ``pinocchio`` = ``pin.computeDelassusMatrix`` (μ = 0); ``opalg`` = P Λ_c⁻¹ Pᵀ from
    :meth:`ClosedSystem.compliance` (Ω-based, H4), P = angular-first → linear-first per closure;
    ``j1`` = P J₁ℳ⁻¹J₁ᵀ Pᵀ with J₁ the stacked frame Jacobians (opalg, e1 coordinates = LOCAL)
    of each closure's frame 1 only (selected rows) and ℳ from :func:`opalg.crba`.  For a closure
    to ground the three agree; in Pinocchio 4.1.0 a two-joint loop gives ``pinocchio == j1``
    (joint 2 ignored), not Λ_c⁻¹.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import random_closed_system
    >>> from opalg.closed.pinocchio_check import delassus_comparison
    >>> sys, q = random_closed_system(6, 1, seed=1, kinds=("weld",), where=("ground",))
    >>> d = delassus_comparison(sys, q)
    >>> bool(np.allclose(d.pinocchio, d.opalg) and np.allclose(d.opalg, d.j1))
    True
    """
    import pinocchio as pin

    from opalg.algorithms.crba import crba

    pc = pinocchio_constraints(system)
    q = np.asarray(q, float)
    D = pin.computeDelassusMatrix(pc.tw.model, pc.tw.data, pc.tw.q(q), pc.models, pc.datas, 0.0)
    P = np.zeros((system.m, system.m))
    J1 = np.zeros((system.m, system.model.ndof))
    for c, rs in zip(system.closures, system.row_slice):
        perm = c.Pi @ LINEAR_FIRST @ c.Pi.T          # linear-first order of the closure's rows
        P[rs, rs] = perm
        J1[rs] = c.Pi @ frame_jacobian(system.model, q, (c.body1, c.R1, c.p1))
    Minv_J1T = np.linalg.solve(crba(system.model, q), J1.T)
    return SimpleNamespace(pinocchio=np.asarray(D), opalg=P @ system.compliance(q) @ P.T,
                           j1=P @ (J1 @ Minv_J1T) @ P.T)


def lcaba_qdd(system: ClosedSystem, q, qd, tau, mu: float = 1e-6, max_iter: int = 100) -> np.ndarray:
    r"""θ̈ from Pinocchio's ``lcaba`` (after ``computeJointMinimalOrdering``), in opalg's dof order.

    ``lcaba`` needs a proximal μ > 0; its iterations (``max_iter``, accuracy 1e-12) converge to
    the exact constrained θ̈ (one iteration with μ = 1e-12 leaves errors ~1e-4).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import random_closed_system
    >>> from opalg.closed.pinocchio_check import lcaba_qdd
    >>> sys, q = random_closed_system(6, 1, seed=1, kinds=("weld",), where=("ground",))
    >>> tau = np.ones(sys.model.ndof)
    >>> bool(np.allclose(lcaba_qdd(sys, q, 0 * q, tau), sys.forward(q, 0 * q, tau).qdd, atol=1e-8))
    True
    """
    import pinocchio as pin

    pc = pinocchio_constraints(system)
    tw = pc.tw
    pin.initConstraintDynamics(tw.model, tw.data, pc.models, pc.datas)
    pin.computeJointMinimalOrdering(tw.model, tw.data, pc.models)
    a = pin.lcaba(tw.model, tw.data, tw.q(np.asarray(q, float)), tw.v(np.asarray(qd, float)),
                  tw.v(np.asarray(tau, float)), pc.models, pc.datas, pin.ProximalSettings(1e-12, mu, max_iter))
    return tw.from_v(np.asarray(a))
