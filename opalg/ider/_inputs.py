"""Validation of the arguments of :func:`opalg.ider.simulate` and its helpers: numbers are
numbers (never a bool, never a parsed string), times are finite and increasing, and the old
name ``t_end`` of ``t_span`` is accepted with a DeprecationWarning."""

from __future__ import annotations

import numbers
import warnings

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


def _span(t_span) -> float:
    """The end time t1 of t_span = (0, t1): the arm starts on the path at t = 0."""
    if isinstance(t_span, (str, bytes)) or not hasattr(t_span, "__len__") or len(t_span) != 2:
        raise StateError(f"t_span must be a pair (0, t_end) of seconds, got {t_span!r}")
    _real(t_span[0], "t_span[0]", "0 (the arm starts on the path at t = 0)", lambda v: v == 0)
    return _real(t_span[1], "t_span[1]", "a positive number of seconds (the end of the run)", lambda v: v > 0)


def _settings(t_end, t_eval, stabilization):
    """Validated (t_end, output times, Baumgarte gains); t_end the end of t_span, already checked."""
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
            raise StateError(f"t_eval must be increasing times within t_span = [0, {t_end:g}] s")
    gains = stabilization
    if gains is not None:
        if isinstance(gains, (str, bytes)) or np.ndim(gains) != 1 or len(gains) != 2:
            raise StateError(f"stabilization must be None or two finite gains (alpha, beta) >= 0 in 1/s, "
                             f"got {gains!r}")
        gains = tuple(_real(g, f"stabilization[{i}]", f"a finite gain >= 0 (1/s) in {stabilization!r}",
                            lambda v: v >= 0) for i, g in enumerate(gains))
    return te, gains


def _time_span(where: str, t_span, default, kw: dict) -> float:
    """t1 of ``t_span``, or of the old ``t_end``: a keyword (``kw``, already through
    :func:`~opalg.simulate.compat.renamed` by the caller, so that its warning names the caller's
    caller), or a number where t_span stands (the previous release's second argument, warned here)."""
    if "t_span" in kw:
        if t_span is not default:
            raise StateError(f"{where}: give t_span or its old name t_end, not both")
        t_span = kw["t_span"]
    elif isinstance(t_span, numbers.Real) and not isinstance(t_span, (bool, np.bool_)):
        warnings.warn(f"{where}: a number as the second argument is the old t_end; pass t_span=(0, t_end) "
                      "(accepted until the next release)", DeprecationWarning, stacklevel=3)
    else:
        return _span(t_span)
    return _real(t_span, "t_end", "a positive number of seconds", lambda v: v > 0)
