"""opalg — the spatial operator algebra of multibody dynamics, for teaching and verification.

Quick tour::

    import numpy as np, opalg
    model = opalg.random_model(7, "tree", seed=0)
    q, qd, qdd = np.random.default_rng(0).normal(size=(3, model.ndof))
    ops = opalg.operators(model, q, qd)          # φ, ℰφ, H, M, P, D, G, K, ψ, Ω ...
    Mq = (ops.H @ ops.phi @ ops.M @ ops.phi.T @ ops.H.T).dense()
    assert np.allclose(Mq, opalg.crba(model, q))
    assert np.allclose(opalg.aba(model, q, qd, opalg.rnea(model, q, qd, qdd)), qdd)

Layers, lowest first (docs/ARCHITECTURE.md): :mod:`opalg.spatial` (spatial vectors,
transforms, inertias, quaternions), :mod:`opalg.model` (joints, the model, its kinematics,
builders, URDF), :mod:`opalg.algorithms` (one module per recursion: RNEA, CRBA, the Riccati
sweep, ABA, hybrid, operational space, constrained dynamics ...), :mod:`opalg.algebra` (the
operator objects φ, ℰφ, H, M, P, D, G, K, ψ, Ω and their block algebra), :mod:`opalg.simulate`
(the one integrator and its :class:`~opalg.simulate.Trajectory`, below every algorithm that steps
time); then the topics
(:mod:`opalg.closed`, :mod:`opalg.quasi`, :mod:`opalg.fijany`, :mod:`opalg.flex`,
:mod:`opalg.floating`, :mod:`opalg.symbolic`, :mod:`opalg.underactuated`, :mod:`opalg.ider`)
and what serves the notebooks (:mod:`opalg.course`) and the oracle (:mod:`opalg.pinocchio_bridge`).
"""

from __future__ import annotations

import importlib

from opalg import opcount  # noqa: F401
from opalg import algebra, algorithms, model, spatial  # noqa: F401
from opalg.algorithms.aba import Innovations, aba, innovations_passes, minv, minv_diag, upsilon
from opalg.algorithms.crba import composite_inertias, crba, mass_matrix_diag
from opalg.algorithms.derivatives import aba_derivatives, rnea_derivatives
from opalg.algorithms.derivatives_hybrid import HybridDerivatives, hybrid_derivatives
from opalg.algorithms.hybrid import hybrid, reduced_inertia
from opalg.algorithms.linearize import linearize
from opalg.algorithms.ltdl import LTDL, ltdl, ltdl_solve
from opalg.algorithms.operational import frame_jacobian, lambda_inv
from opalg.algorithms.riccati import Articulated, articulated
from opalg.algorithms.rnea import bias, rnea
from opalg.algorithms.tree_sparse import TreeSparse
from opalg.errors import (
    InfeasibleDirections, ModelError, OpalgError, SingularConfigurationError, StateError, URDFError)
from opalg.model.builders import planar_arm, random_model, serial_chain
from opalg.model.configuration import difference, integrate, neutral
from opalg.model.free_joint import FreeJoint
from opalg.model.kinematics import body_poses
from opalg.model.multibody import Inertia, Joint, Model
from opalg.model.urdf import from_urdf
from opalg.algebra.soa import SpatialOperators, operators

__version__ = "0.1.0"

__all__ = [
    "Articulated", "Inertia", "Innovations", "innovations_passes", "Joint", "Model", "ModelError", "SpatialOperators", "StateError",
    "aba", "articulated", "bias", "body_poses", "composite_inertias", "crba", "frame_jacobian",
    "lambda_inv", "minv", "minv_diag", "operators", "planar_arm", "random_model", "rnea",
    "serial_chain", "upsilon", "from_urdf", "URDFError", "OpalgError", "SingularConfigurationError",
    "InfeasibleDirections", "hybrid", "reduced_inertia", "mass_matrix_diag", "TreeSparse", "ltdl",
    "ltdl_solve", "LTDL", "FreeJoint", "integrate", "difference", "neutral",
    "rnea_derivatives", "aba_derivatives", "linearize", "hybrid_derivatives", "HybridDerivatives",
]

#: Subpackages loaded on first attribute access: ``import opalg`` imports neither sympy
#: (``opalg.symbolic``) nor scipy's integrators and the widgets (``opalg.ider``).
_LAZY = ("simulate", "symbolic", "ider", "underactuated", "closed", "quasi", "fijany", "flex", "floating",
         "course", "pinocchio_bridge")


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
