r"""Ider's method in one home: constrained dynamics with control forces of chosen direction.

``M(q) ẏ + Q(q, y) = F + Zᵀ v`` with the constraints ``B ẏ = h`` realized by forces of
directions Z: Z = B (the conventional model) or Z = [B_G; A] (control forces of chosen
directions A).  :mod:`~opalg.algorithms.constrained.dense` holds the augmented and reduced
solves and the feasibility measure κ with a dense ℳ (docs/REFERENCE.md E8);
:mod:`~opalg.algorithms.constrained.passes` the same without ℳ, by O(n) innovations passes
(E8–E9); :mod:`~opalg.algorithms.constrained.singular` where a motion cannot go on (the stop
events on κ, and the time of the singularity beyond a stop).  :mod:`opalg.ider` (the 1990
arm), :mod:`opalg.closed.ider_link` (a closed chain), :mod:`opalg.quasi.ider_nu` (the
equations in ν) and :mod:`opalg.underactuated` (a passive joint as a control-force choice)
all call these.
"""

from opalg.algorithms.constrained.dense import (  # noqa: F401
    SINGULAR_TOL, InfeasibleDirections, Solution, conditioning, force_directions, null_complement,
    solve_augmented, solve_reduced)
from opalg.algorithms.constrained.passes import (  # noqa: F401
    GRAM_TOL, conditioning_passes, schur_columns, solve_passes)
from opalg.algorithms.constrained.singular import (  # noqa: F401
    STOP_TOL, feasibility_measure, singular_time, stop_event)
