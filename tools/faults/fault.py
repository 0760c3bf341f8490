"""One planted fault (:class:`Fault`) and the areas of the package the catalogue must cover.

The fields are described in :mod:`faults.catalogue`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    area: str
    meaning: str
    identity: str
    target: str
    old: str
    new: str
    tests: tuple[str, ...]


#: The areas the catalogue must cover (issue 37, item 1).
AREAS = ("spatial", "kinematics", "rnea", "crba", "riccati", "aba", "operators", "hybrid", "closed",
         "quasi", "fijany", "flex", "floating", "symbolic", "ider", "derivatives")
