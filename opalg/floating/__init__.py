r"""Free-floating systems: the base that moves by momentum exchange (docs/REFERENCE.md K11, K12).

* :func:`base_velocity`: the root twist v_b that keeps the momentum h for given arm rates θ̇;
* :func:`coupling_inertia`: ℳ_bb and ℳ_bm in O(n); :func:`generalized_jacobian`: J* = J_m − J_bℳ_bb⁻¹ℳ_bm;
* :func:`base_reaction`: the base pose history while the arm follows a prescribed θ(t);
* :func:`simulate`: forward dynamics on the configuration manifold (quaternions kept unit).

Both run through :func:`opalg.simulate.integrate` and return a :class:`~opalg.simulate.Trajectory`
(extras ``momentum``, and for ``simulate`` ``energy`` and the two drifts).

The model's only root is on :class:`opalg.FreeJoint`; θ̇ is v without the root's six entries.
"""

from __future__ import annotations

from opalg.floating.base import arm_dofs, base_velocity, coupling_inertia, generalized_jacobian
from opalg.floating.reaction import base_reaction
from opalg.floating.simulate import simulate

__all__ = ["arm_dofs", "base_reaction", "base_velocity", "coupling_inertia", "generalized_jacobian", "simulate"]


def __getattr__(name: str):
    if name in ("FloatingSimulation", "BaseReaction"):  # the old result classes: both return a Trajectory now
        import warnings

        from opalg.simulate import Trajectory
        warnings.warn(f"opalg.floating.{name} is now opalg.simulate.Trajectory (success is ok; momentum"
                      f"{', energy and the drifts are' if name == 'FloatingSimulation' else ' is'} extras); "
                      "the name goes in the next release", DeprecationWarning, stacklevel=2)
        return Trajectory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
