"""Validation of the arguments of :func:`opalg.ider.simulate` and its helpers: numbers are
numbers (never a bool, never a parsed string), times are finite and increasing."""

from __future__ import annotations

import numbers

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError

def _real(x, name: str, expect: str, ok=lambda v: True) -> float:
    """x as a float if it is a real number (never a bool, never a parsed string) with ok(x)."""
    x = x[()] if isinstance(x, np.ndarray) and x.shape == () else x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise StateError(f"{name} must be {expect}, got {x!r} (a {type(x).__name__}; strings are never parsed)")
    if not (np.isfinite(float(x)) and ok(float(x))):
        raise StateError(f"{name} must be {expect}, got {x!r}")
    return float(x)


def _settings(t_end, t_eval, stabilization):
    """Validated (t_end, output times, Baumgarte gains)."""
    t_end = _real(t_end, "t_end", "a positive number of seconds", lambda v: v > 0)
    if t_eval is None:
        te = np.linspace(0.0, t_end, 201)
    else:
        bk.check_no_strings(t_eval, "t_eval", StateError)
        te = np.asarray(t_eval)
        if te.dtype.kind not in "iuf":
            raise StateError(f"t_eval must be numeric times (s), got {t_eval!r}")
        if not np.all(np.isfinite(te := te.astype(float))):
            raise StateError(f"t_eval has non-finite entries: {t_eval!r}")
        if te.ndim != 1 or te.size == 0 or te[0] < 0 or te[-1] > t_end or np.any(np.diff(te) <= 0):
            raise StateError("t_eval must be increasing times within [0, t_end]")
    gains = stabilization
    if gains is not None:
        if isinstance(gains, (str, bytes)) or np.ndim(gains) != 1 or len(gains) != 2:
            raise StateError(f"stabilization must be None or two finite gains (alpha, beta) >= 0 in 1/s, "
                             f"got {gains!r}")
        gains = tuple(_real(g, f"stabilization[{i}]", f"a finite gain >= 0 (1/s) in {stabilization!r}",
                            lambda v: v >= 0) for i, g in enumerate(gains))
    return t_end, te, gains
