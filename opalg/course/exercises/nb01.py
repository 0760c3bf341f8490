"""Exercises of notebook 01 (the index: topology, numbering, conventions).  Model answers: docs/solutions/01_index.md."""

from __future__ import annotations

import numpy as np

from opalg.course.exercises import Exercise, integer


def _depths(parents) -> list[int]:
    """Bodies on the path from the inertial frame down to each body (the body itself included)."""
    out = []
    for k in range(len(parents)):
        d, j = 1, k
        while parents[j] != -1:
            d, j = d + 1, parents[j]
        out.append(d)
    return out


def _depth() -> int:
    import opalg

    return max(_depths(opalg.random_model(10, "tree", seed=3).parents))


def _jain_root() -> int:
    import opalg

    m = opalg.random_model(10, "tree", seed=3)
    jain = m.relabeled(list(reversed(range(m.n))))
    roots = [k for k, p in enumerate(jain.parents) if p == -1]
    assert len(roots) == 1      # random_model draws one root unless asked for a forest
    return roots[0]


def _phi_blocks() -> int:
    """Nonzero 6x6 blocks of the dense φ = (I − ℰφ)⁻¹ of notebook 01's tree, at a seeded state."""
    import opalg

    m = opalg.random_model(8, "tree", seed=0)
    q = np.random.default_rng(101).normal(size=m.ndof)
    P = opalg.operators(m, q).phi.dense().reshape(m.n, 6, m.n, 6)
    return int((np.abs(P).max(axis=(1, 3)) > 0).sum())


EXERCISES = {
    "01.1": Exercise("01.1", "value", "an integer",
                     integer(_depth, "follow model.parents up from each body and count the bodies")),
    "01.2": Exercise("01.2", "value", "an integer (a body label)",
                     integer(_jain_root, "look for the -1 in the relabelled model's parents")),
    "01.3": Exercise("01.3", "value", "an integer",
                     integer(_phi_blocks, "block (i, j) of φ is nonzero exactly when i is j or an ancestor "
                                          "of j (B2): count those pairs")),
}
