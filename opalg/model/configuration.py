r"""Configuration space: :func:`integrate`, :func:`difference` and :func:`neutral` (nq ≠ nv).

A free joint (:class:`opalg.model.free_joint.FreeJoint`) has 7 configuration coordinates
``[p; x, y, z, w]`` and 6 velocities ``[ω; v]`` (body frame, angular first), so a
configuration is not advanced by ``q + v dt``: docs/REFERENCE.md K8.

* ``integrate(model, q, v, dt)``: the free joints by the SE(3) exponential of the
  body twist v·dt (:func:`opalg.spatial.quaternion.exp_free`: exact for a constant body
  velocity), every other joint by ``q + v dt``;
* ``difference(model, q0, q1)``: the v with ``integrate(model, q0, v, 1) == q1``
  (the shortest rotation of each free joint);
* ``neutral(model)``: zeros, with identity quaternions (0, 0, 0, 1).

For a model without free joints these are ``q + v dt``, ``q1 − q0`` and zeros.
"""

from __future__ import annotations

import numpy as np

from opalg.errors import StateError
from opalg.model import _validate
from opalg.model.kinematics import broadcast_batch, check_state
from opalg.model.multibody import Model
from opalg.spatial.quaternion import exp_free, log_free


def neutral(model: Model) -> np.ndarray:
    """The zero configuration (nq,): zeros, and the identity quaternion (x, y, z, w) = (0, 0, 0, 1).

    Examples
    --------
    >>> import opalg
    >>> m = opalg.random_model(2, seed=0, joints="revolute", floating=True)
    >>> opalg.neutral(m)[:7].tolist(), m.nq, m.nv
    ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], 8, 7)
    """
    _validate.model(model, "neutral")
    q = np.zeros(model.nq)
    for k in model.free_bodies:
        q[model.q_slice[k].stop - 1] = 1.0
    return q


def integrate(model: Model, q, v, dt=1.0) -> np.ndarray:
    r"""The configuration reached from ``q`` with velocity ``v`` held for time ``dt`` (K8).

    Free joint k: :math:`(R, p) \mapsto (R\,\mathrm{Exp}(\omega\,dt),\ p + R\,V(\omega dt)\,v\,dt)`
    (the body twist is constant in the body frame); any other joint: q + v dt.
    ``q`` (..., nq), ``v`` (..., nv), ``dt`` a scalar or an array broadcasting with
    the batch; complex arguments are allowed (the map is analytic: complex-step tests).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, "chain", seed=0, floating=True)
    >>> q, v = opalg.neutral(m), np.random.default_rng(0).normal(size=m.nv)
    >>> q1 = opalg.integrate(m, q, v, 0.5)
    >>> bool(np.allclose(opalg.difference(m, q, q1), 0.5 * v))
    True
    """
    q = check_state(model, q, "q")
    v = check_state(model, v, "v")
    dt = np.asarray(dt)
    if dt.dtype.kind not in "fciu" or not np.all(np.isfinite(dt)):
        raise StateError(f"dt must be a finite number (or array), got {dt!r}")
    batch = np.broadcast_shapes(broadcast_batch(model, q=q, v=v), dt.shape)
    step = v * dt[..., None]
    out = np.empty(batch + (model.nq,), dtype=np.result_type(q, step))
    for k in range(model.n):
        qs, vs = model.q_slice[k], model.dof_slice[k]
        if model.joints[k].free:
            out[..., qs] = exp_free(q[..., qs], step[..., vs])
        else:
            out[..., qs] = q[..., qs] + step[..., vs]
    return out


def difference(model: Model, q0, q1) -> np.ndarray:
    """The velocity v (..., nv) with ``integrate(model, q0, v, 1) == q1`` (K8).

    Free joints: :func:`opalg.spatial.quaternion.log_free` (shortest rotation); others q1 − q0.
    Real configurations only.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(2, seed=1, floating=True)
    >>> q0 = opalg.neutral(m)
    >>> float(np.abs(opalg.difference(m, q0, q0)).max())
    0.0
    """
    q0 = check_state(model, q0, "q0", config=True)
    q1 = check_state(model, q1, "q1", config=True)
    if q0.dtype.kind != "f" or q1.dtype.kind != "f":
        raise StateError("difference needs real (float) configurations q0 and q1")
    batch = broadcast_batch(model, q0=q0, q1=q1)
    out = np.zeros(batch + (model.nv,))
    for k in range(model.n):
        qs, vs = model.q_slice[k], model.dof_slice[k]
        if model.joints[k].free:
            out[..., vs] = log_free(q0[..., qs], q1[..., qs])
        else:
            out[..., vs] = q1[..., qs] - q0[..., qs]
    return out
