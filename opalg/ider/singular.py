"""How a run of :func:`opalg.ider.simulate` ends when it cannot go on, for this arm: the time the
path leaves the arm's reach, and the likely reason an integration failed, read off the last state
it reached.

The stop events on the feasibility measures and the time of the singularity beyond a stop are
Ider's method, for any model: :mod:`opalg.algorithms.constrained.singular`.
"""

from __future__ import annotations

import numpy as np

from opalg.algorithms.crba import crba
from opalg.algorithms.constrained import conditioning
# The default stop threshold is the method's (a public name of opalg.ider too).
from opalg.algorithms.constrained.singular import STOP_TOL  # noqa: F401
from opalg.ider.geometry import LENGTHS, path, reach_measure, tip, tip_jacobian


def _reach_time(t0: float) -> float | None:
    """First time after t0 at which the path itself leaves the disc of radius L1 + L2 + L3."""
    from scipy.optimize import brentq

    g = lambda t: float(np.linalg.norm(path(t))) - sum(LENGTHS)  # noqa: E731
    span = next((s for s in 2.0 ** np.arange(11) if g(t0 + s) > 0), None)  # up to ~1000 s on
    return None if span is None else brentq(g, t0, t0 + span, xtol=1e-14)


def _diagnosis(model, Zc, x) -> str:
    """The likely reason an integration failed, read off the last state it reached."""
    q, B = x[:3], tip_jacobian(x[:3])
    kappa, mu = conditioning(crba(model, q), B, B if Zc is None else Zc), reach_measure(q)
    rates = f"joint rates up to {np.abs(x[3:]).max():.3g} rad/s"
    if mu <= min(kappa, 1e-2):
        return (f"likely reason: the path left the arm's reach — the tip Jacobian B is nearly rank "
                f"deficient there (σ_min/σ_max = {mu:.2g}, tip {np.linalg.norm(tip(q)):.6f} m from "
                f"the base, reach {sum(LENGTHS):g} m): the augmented matrix became singular; {rates}")
    if kappa <= 1e-2:
        return (f"likely reason: the control directions become singular (feasibility measure "
                f"κ = {kappa:.2g}): the accelerations and forces grow like 1/κ; {rates}")
    return f"the state is regular (κ = {kappa:.2g}, σ_min/σ_max(B) = {mu:.2g}, {rates}): try other tolerances"
