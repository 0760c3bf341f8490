"""opalg — the spatial operator algebra of multibody dynamics, for teaching and verification.

Quick tour::

    import numpy as np, opalg
    model = opalg.random_model(7, "tree", seed=0)
    q, qd, qdd = np.random.default_rng(0).normal(size=(3, model.ndof))
    ops = opalg.operators(model, q, qd)          # φ, ℰφ, H, M, P, D, G, K, ψ, Ω ...
    Mq = (ops.H @ ops.phi @ ops.M @ ops.phi.T @ ops.H.T).dense()
    assert np.allclose(Mq, opalg.crba(model, q))
    assert np.allclose(opalg.aba(model, q, qd, opalg.rnea(model, q, qd, qdd)), qdd)

Modules: :mod:`opalg.spatial` (spatial algebra), :mod:`opalg.model` (bodies, joints,
topology), :mod:`opalg.builders`, :mod:`opalg.kinematics`, :mod:`opalg.algebra`
(operator objects), :mod:`opalg.soa` (the operators of a model), :mod:`opalg.dynamics`
(RNEA, CRBA), :mod:`opalg.innovations` (Riccati, ABA, ℳ⁻¹, Υ, Λ⁻¹),
:mod:`opalg.hybrid_dynamics` (hybrid dynamics, the actuators' reduced inertia).
"""

from __future__ import annotations

import importlib

from . import algebra, constrained, constrained_passes, innovations, kinematics, opcount, operational, riccati, spatial, urdf  # noqa: F401
from .riccati import Articulated, articulated
from .innovations import Innovations, aba, innovations_passes, minv, minv_diag, upsilon
from .operational import frame_jacobian, lambda_inv
from .hybrid_dynamics import hybrid, reduced_inertia
from .builders import planar_arm, random_model, serial_chain
from .dynamics import bias, composite_inertias, crba, mass_matrix_diag, rnea
from .ltdl import LTDL, ltdl, ltdl_solve
from .tree_sparse import TreeSparse
from .errors import (InfeasibleDirections, ModelError, OpalgError, SingularConfigurationError, StateError,
                     URDFError)
from .kinematics import body_poses
from .configuration import difference, integrate, neutral
from . import momentum  # noqa: F401
from .free_joint import FreeJoint
from .model import Inertia, Joint, Model
from .soa import SpatialOperators, operators
from .urdf import from_urdf

__version__ = "0.1.0"

__all__ = [
    "Articulated", "Inertia", "Innovations", "innovations_passes", "Joint", "Model", "ModelError", "SpatialOperators", "StateError",
    "aba", "articulated", "bias", "body_poses", "composite_inertias", "crba", "frame_jacobian",
    "lambda_inv", "minv", "minv_diag", "operators", "planar_arm", "random_model", "rnea",
    "serial_chain", "upsilon", "from_urdf", "URDFError", "OpalgError", "SingularConfigurationError",
    "InfeasibleDirections", "hybrid", "reduced_inertia", "mass_matrix_diag", "TreeSparse", "ltdl",
    "ltdl_solve", "LTDL", "FreeJoint", "integrate", "difference", "neutral",
]

#: Subpackages loaded on first attribute access: ``import opalg`` imports neither sympy
#: (``opalg.symbolic``) nor scipy's integrators and the widgets (``opalg.ider``).
_LAZY = ("symbolic", "ider", "underactuated", "closed", "quasi", "fijany", "flex", "floating")


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
