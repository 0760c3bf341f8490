"""ℳ(q) and the bias C(q, y) of one state of the arm, for the integrator's right-hand side.

An Ider run evaluates the arm thousands of times at one state each.  :func:`opalg.crba` and
:func:`opalg.bias` validate their arguments and results on every call (shapes, finiteness,
overflow), which costs about a fifth of a right-hand side; here the integrator's float64
states go straight to the same computations (:func:`opalg.crba_world.mass_matrix`, the
unwrapped :func:`opalg.rnea`), so the numbers are bit for bit those of the public calls; ℳ of
one state of the arm's chain comes from :class:`opalg.ider._mass.ChainMass`, the common-frame
route's operations on Python floats (~3x faster than its numpy calls on arrays of a few entries),
and C from :class:`opalg.ider._bias.OneStateBias`, rnea's numpy calls without its wrapping.
A state or a result that is not finite goes through the public call instead, which raises
its usual :class:`~opalg.errors.StateError` (the integrator then retries a smaller step).
"""

from __future__ import annotations

import numpy as np

from .. import crba_world, dynamics
from ..constrained import Solution, _augmented_solve, solve_augmented
from ._bias import OneStateBias
from ._mass import ChainMass


class ArmState:
    """ℳ and C of ``model`` at one state, ℳ kept for the last configuration asked for.

    The terminal event of a run evaluates κ at the state the step has just ended on, where
    the right-hand side has already formed ℳ; so do the start and the samples.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import ider
    >>> from opalg.ider._state import ArmState
    >>> arm = ider.arm(gravity=9.81)
    >>> s, q, y = ArmState(arm), ider.THETA0, ider.initial_speeds()
    >>> bool(np.array_equal(s.mass(q), opalg.crba(arm, q))), bool(np.array_equal(s.bias(q, y), opalg.bias(arm, q, y)))
    (True, True)
    """

    def __init__(self, model):
        self.model = model
        # the common-frame route of dynamics.crba (numeric inertias and joints), else the public call
        self.direct = crba_world.plan(model).numeric and model.nq == model.ndof
        # the same route for one state in Python floats (the arm's chain; None for other models)
        self._one = ChainMass.for_model(model) if self.direct else None
        self._bias = OneStateBias.for_model(model)   # rnea's numpy calls without its wrapping
        self._zeros = np.zeros(model.ndof)
        self._key, self._M = None, None
        self._batch = {}   # ℳ of states formed together by prefetch, by the bytes of q

    def prefetch(self, Q: np.ndarray) -> None:
        """Form ℳ of every row of Q (b, N) in one batched pass, for :meth:`mass` to return.

        The samples of a run are known together once the integration ends; the common-frame
        route evaluates all of them at once, and its result for each row is bit for bit that
        of the row alone (it runs the same elementwise operations and small products per state;
        tests/test_ider.py checks it).  Rows that are not finite, or whose ℳ is not, are left to
        :meth:`mass`, which takes its usual route for them.
        """
        Q = np.ascontiguousarray(Q)
        if not self.direct or Q.dtype != np.float64 or Q.ndim != 2 or not len(Q):
            return
        ok = np.isfinite(Q).all(axis=1)
        with np.errstate(all="ignore"):
            Ms = crba_world.mass_matrix(self.model, Q[ok])
        good = np.isfinite(Ms).all(axis=(1, 2))
        self._batch = {q.tobytes(): M for q, M, g in zip(Q[ok], Ms, good) if g}

    def mass(self, q: np.ndarray) -> np.ndarray:
        """ℳ(q) (do not modify: the array is reused for the same q)."""
        key = q.tobytes()
        if key == self._key:
            return self._M
        M = self._batch.get(key)
        if M is not None:
            self._key, self._M = key, M
            return M
        if self.direct and q.dtype == np.float64 and np.isfinite(q).all():
            with np.errstate(all="ignore"):   # as dynamics.crba: overflow is checked, not warned
                M = (self._one(q) if self._one is not None
                     else crba_world.mass_matrix(self.model, q.reshape(1, -1))[0])
            if not np.isfinite(M).all():
                M = None
        if M is None:
            M = dynamics.crba(self.model, q)
        self._key, self._M = key, M
        return M

    def bias(self, q: np.ndarray, y: np.ndarray) -> np.ndarray:
        """C(q, y) with the model's gravity."""
        if q.dtype == y.dtype == np.float64 and np.isfinite(q).all() and np.isfinite(y).all():
            with np.errstate(all="ignore"):
                C = (self._bias(q, y, self._zeros) if self._bias is not None
                     else dynamics.rnea.__wrapped__(self.model, q, y, self._zeros, None, True))
            if np.isfinite(C).all():
                return C
        return dynamics.bias(self.model, q, y)


def solve_augmented_step(M, Q, B, h, Z) -> Solution:
    """``solve_augmented(M, Q, 0, B, h, Z, check=False)`` for the right-hand side's own arrays.

    M and Q come from :class:`ArmState` (finite float64, checked there), B, h and Z are float64
    of shapes (c, n), (c,), (c, n): the public call's re-validation of all six is skipped, and
    its solve is run as it is (so the solution is bit for bit the same); a B or h that is not
    finite goes to the public call, which raises as usual.
    """
    if not (np.isfinite(B).all() and np.isfinite(h).all()):
        return solve_augmented(M, Q, np.zeros(len(Q)), B, h, Z, check=False)
    return _augmented_solve(M, np.zeros(len(Q)) - Q, B, h, Z)
