r"""Layer 1, spatial algebra: 6-vectors angular-first, crm/crf, φ(x, y), spatial inertia, quaternions.

:mod:`opalg.spatial.vectors` holds the spatial vector algebra (docs/REFERENCE.md §1),
:mod:`opalg.spatial.quaternion` the unit quaternions and the SE(3) exponential of a free joint.
"""

from opalg.spatial.vectors import (  # noqa: F401
    crf, crm, cross_force, cross_motion, motion_transform, phi_free, rotation_about, rpy_to_matrix, skew,
    spatial_inertia)
