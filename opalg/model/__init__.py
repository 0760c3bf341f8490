r"""Layer 2, the model: joints and their axes, bodies and the parent array, kinematics, builders, URDF.

:mod:`~opalg.model.axes` and :mod:`~opalg.model.joints` (joint kinds, X_J, H*, c_J),
:mod:`~opalg.model.free_joint`, :mod:`~opalg.model.multibody` (:class:`Model`, :class:`Inertia`),
:mod:`~opalg.model.kinematics` (per-body quantities at a state), :mod:`~opalg.model.configuration`
(integrate / difference when nq ≠ nv), :mod:`~opalg.model.builders`, :mod:`~opalg.model.urdf` and
:mod:`~opalg.model.urdf_write`.
"""

from opalg.model.multibody import Inertia, Joint, Model  # noqa: F401
