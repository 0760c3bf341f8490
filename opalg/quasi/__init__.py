r"""Quasi-velocities: the dynamics in the innovations coordinates ν = (I + HφK)* θ̇.

docs/REFERENCE.md J1–J8.  In ν the kinetic energy is block diagonal,
½θ̇*ℳθ̇ = ½ν*Dν (J1), with D the articulated pivots of the Riccati recursion.

* :func:`nu`, :func:`qd_from_nu`: the O(n) maps θ̇ → ν (J2) and back (J3);
* :func:`articulated_rates`: Ṗ, Ṗ⁺, Ḋ, Ġ along the motion, by an inward recursion (J6);
* :func:`nu_dot`: ν̇ in its kinematic and dynamic forms, gravity handled explicitly (J5);
* :func:`simulate`: integration in (q, ν) with q̇ = (I + HφK)^{-*}ν, through :func:`opalg.simulate.integrate`
  (a :class:`~opalg.simulate.Trajectory` with v = ν and the extras qd = θ̇, energy, power);
* :func:`schur_in_nu`: Ider's feasibility Schur complement in ν coordinates (J8).
"""

from __future__ import annotations

from opalg.quasi.accel import nu_dot, nu_dot_from_qdd
from opalg.quasi.ider_nu import NuConstraints, schur_in_nu
from opalg.quasi.simulate import simulate
from opalg.quasi.rates import ArticulatedRates, articulated_rates
from opalg.quasi.velocities import nu, qd_from_nu

__all__ = ["ArticulatedRates", "articulated_rates", "nu", "nu_dot", "nu_dot_from_qdd", "qd_from_nu", "simulate", "NuConstraints", "schur_in_nu"]


def __getattr__(name: str):
    if name == "QuasiSimulation":  # the old result class: simulate returns a Trajectory now
        import warnings

        from opalg.simulate import Trajectory
        warnings.warn("opalg.quasi.QuasiSimulation is now opalg.simulate.Trajectory (nu is v, success is ok; "
                      "qd and energy are extras); the name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return Trajectory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
