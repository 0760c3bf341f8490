"""Closed chains: several arms holding a common object (docs/REFERENCE.md §10, H1, H7–H9)."""

from .grasp import Grasp
from .multiarm import MultiArm, MultiArmResult

__all__ = ["Grasp", "MultiArm", "MultiArmResult"]
