r"""Fijany's Schur-complement factorization and the O(log n) constraint-force algorithm.

* :func:`factors` — Q, W, Ĥ, A, B, C with ℳ⁻¹ = C − B* A⁻¹ B (docs/REFERENCE.md I0–I2);
* :func:`forward` — the constraint-force algorithm (I4): q̈ and the constraint forces F_c = W f;
* :func:`critical_path` — the depth of the dependency graph of the block operations that the
  ABA or the CFA actually performs (I5).

A on a chain is a :class:`opalg.algebra.block_ops.BlockTridiagonal`, solved by block cyclic
reduction in ⌈log₂ n⌉ + 1 batched levels (I3).
"""

from opalg.fijany.depth import CriticalPath, critical_path
from opalg.fijany.factors import Factors, constraint_directions, depth_levels, factors, forward

__all__ = ["CriticalPath", "critical_path", "Factors", "constraint_directions", "depth_levels", "factors", "forward"]
