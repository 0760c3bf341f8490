r"""Closed chains: loop closures on a spanning tree (docs/REFERENCE.md H2–H6).

:class:`LoopClosure` (weld, ball, revolute, or selected rows), :class:`ClosedSystem`
(G_c, the drift U, the compliance Λ_c⁻¹ from Ω, forward dynamics by the tree passes, the dense
KKT oracle, assembly and velocity projection), :func:`simulate` (Baumgarte-stabilized
integration with the constraint drift reported) and example mechanisms
(:func:`four_bar`, :func:`random_closed_system`).
"""

from __future__ import annotations

from .assembly import Assembly
from .closure import LoopClosure
from .examples import four_bar, random_closed_system
from .system import ClosedSystem, ForwardResult, RankDeficientWarning, solve_compliance

__all__ = ["Assembly", "ClosedSystem", "ForwardResult", "LoopClosure", "RankDeficientWarning",
           "four_bar", "random_closed_system", "solve_compliance", "simulate", "Simulation"]


def __getattr__(name: str):
    # The integrator (scipy.integrate) is loaded on first use only.
    if name in ("simulate", "Simulation"):
        import importlib
        return getattr(importlib.import_module(f"{__name__}.simulation"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
