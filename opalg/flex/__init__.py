r"""Flexible bodies as spatial operators: assumed modes on enlarged nodes (docs/REFERENCE.md §13, K3–K7).

A flexible body with m_k assumed modes becomes one node of the operator algebra with state
[η̇_k; V_k]; ℳ = ℋΦ𝓜Φ*ℋ* and the rigid recursions carry over with rectangular Φ blocks.
Node kinematics are exact in η (:mod:`opalg.flex.body`).

Examples
--------
>>> import numpy as np
>>> from opalg import flex
>>> fm = flex.examples.two_link_arm(modes=2)
>>> x, v, a = np.random.default_rng(1).normal(size=(3, fm.ndof)) * 0.1
>>> bool(np.allclose(flex.crba(fm, x) @ a, flex.rnea(fm, x, v, a) - flex.rnea(fm, x, v, 0 * a)))
True
"""

from opalg.flex import examples  # noqa: F401
from opalg.flex.body import FlexBody
from opalg.flex.dynamics import aba, crba, hybrid, rnea
from opalg.flex.linearize import linearize
from opalg.flex.model import FlexModel
from opalg.flex.soa import FlexOperators, operators

__all__ = ["FlexBody", "FlexModel", "FlexOperators", "aba", "crba", "hybrid", "linearize", "operators", "rnea", "examples"]
