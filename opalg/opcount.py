r"""Count the floating-point multiply-adds of opalg's recursions: ``with opcount.counting() as c``.

What is counted (the convention of notebook 06): one multiply-add is one multiplication
together with the addition that accumulates it; lone additions are not counted.  Every
matrix product made through :func:`opalg._backend.mm` or :func:`opalg._backend.mv` counts
``m·k·n`` (an (m×k)(k×n) product, plain dense algebra: no use is made of zeros or symmetry),
the spatial cross products ``crm(V)u`` and ``crf(V)f`` count 18, the joint velocity ``S q̇`` 6
per axis, and the common-frame kernels of :mod:`opalg.algorithms.crba_world` count their 3-vector and
3×3 products the same way (a cross product 6, a 3×3 product 27, a dot product of length d, d).
A division (:func:`opalg._backend.div`, by the pivots d_i of E11) counts one, as in notebook 06.
Counts are **per state**: a batched call adds what one state costs.  Forming the transforms
``ᵏX_℘(q)`` (sines and cosines) is not counted, as in notebook 06, nor are the Python-level
gathers, nor the singularity tests of E12 (scales and comparisons, not part of the algorithm).
Covered: :func:`opalg.crba` (both frames), :func:`opalg.mass_matrix_diag`,
:func:`opalg.rnea` and :func:`opalg.bias`, which reproduce notebook 06's hand counts, and the
Riccati recursion (:func:`opalg.articulated`), :func:`opalg.innovations_passes`,
:func:`opalg.aba` (E9: 794n − 504r for 1-dof joints, n bodies, r roots) and :func:`opalg.minv`
(E8), term by term in tests/test_opcount.py.  Not yet routed: :func:`opalg.algorithms.aba.upsilon`
and :func:`opalg.algorithms.aba.minv_diag`.

Examples
--------
>>> import numpy as np, opalg
>>> from opalg import opcount
>>> chain = opalg.random_model(4, "chain", seed=0, joints="revolute")
>>> with opcount.counting() as c:
...     _ = opalg.crba(chain, np.zeros(4), frame="body")
>>> c.total == 432 * 3 + 42 * 4 + 42 * (0 + 1 + 2 + 3)    # notebook 06's CRBA count (D4)
True
>>> with opcount.counting() as c:
...     _ = opalg.aba(chain, np.zeros(4), np.zeros(4), np.zeros(4))
>>> c.total == 794 * 4 - 504 * 1                           # the ABA, 1-dof joints (E9)
True
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

#: The active counters (innermost last); empty when nothing is being counted.
_ACTIVE: list = []


class OpCount:
    """Multiply-adds counted so far: ``total`` and ``by_kind`` (per primitive, e.g. ``"mm"``).

    Examples
    --------
    >>> from opalg.opcount import OpCount
    >>> OpCount()
    OpCount(total=0, by_kind={})
    """

    def __init__(self) -> None:
        self.total = 0
        self.by_kind: Counter = Counter()

    def __repr__(self) -> str:
        return f"OpCount(total={self.total}, by_kind={dict(self.by_kind)})"


def tally(n: int, kind: str) -> None:
    """Add ``n`` multiply-adds (per state) of primitive ``kind`` to every active counter.

    Examples
    --------
    >>> from opalg import opcount
    >>> with opcount.counting() as c:
    ...     opcount.tally(6, "dot")
    >>> c.total
    6
    """
    for c in _ACTIVE:
        c.total += int(n)
        c.by_kind[kind] += int(n)


@contextmanager
def counting():
    """Context manager yielding an :class:`OpCount` that the recursions run inside it add to.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import _backend as bk, opcount
    >>> with opcount.counting() as c:
    ...     _ = bk.mm(np.ones((6, 6)), np.ones((6, 1)))
    >>> c.total, dict(c.by_kind)
    (36, {'mm': 36})
    """
    c = OpCount()
    _ACTIVE.append(c)
    try:
        yield c
    finally:
        _ACTIVE.remove(c)
