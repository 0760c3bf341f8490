r"""Closed chains: loop closures on a spanning tree, and several arms holding a common object.

docs/REFERENCE.md §10.  :class:`LoopClosure` (weld, ball, revolute, or selected rows) and
:class:`ClosedSystem` (G_c, the drift U, the compliance Λ_c⁻¹ from Ω, forward dynamics by the
tree passes, the dense KKT oracle, assembly and velocity projection; H2–H6), :func:`simulate`
(Baumgarte-stabilized integration through :func:`opalg.simulate.integrate`, a
:class:`~opalg.simulate.Trajectory` with the constraint drift) and example mechanisms
(:func:`four_bar`, :func:`random_closed_system`); :class:`MultiArm` (the grasp-force system H1,
the augmented object H7, their Woodbury link H8, planar rows H9) with :class:`Grasp`.
"""

from __future__ import annotations

from opalg.closed.assembly import Assembly
from opalg.closed.closure import LoopClosure
from opalg.closed.examples import four_bar, random_closed_system
from opalg.closed.grasp import Grasp
from opalg.closed.linearize import ClosedLinearization, linearize
from opalg.closed.multiarm import MultiArm, MultiArmResult
from opalg.closed.system import ClosedSystem, ForwardResult, RankDeficientWarning, solve_compliance

__all__ = ["Assembly", "ClosedLinearization", "ClosedSystem", "ForwardResult", "Grasp", "LoopClosure",
           "MultiArm", "MultiArmResult", "RankDeficientWarning", "four_bar", "linearize",
           "random_closed_system", "solve_compliance", "simulate"]


def __getattr__(name: str):
    # The integrator (scipy.integrate) is loaded on first use only.
    if name == "simulate":
        import importlib
        return importlib.import_module(f"{__name__}.simulation").simulate
    if name == "Simulation":      # the old result class: simulate returns a Trajectory now
        import warnings

        from opalg.simulate import Trajectory
        warnings.warn("opalg.closed.Simulation is now opalg.simulate.Trajectory (qd is v, success is ok, "
                      "rank is rank_drops; position_error, velocity_error and energy are extras); the name "
                      "goes in the next release", DeprecationWarning, stacklevel=2)
        return Trajectory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
