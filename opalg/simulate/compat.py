r"""The old keyword names of the simulators, accepted for one release with a DeprecationWarning.

Every ``simulate`` takes ``q0, v0, t_span, tau=, t_eval=, method=, rtol=, atol=``.  A call with
a name of the previous release (``qd0``, ``nu0``, ``x0``, ``t_end`` …) still runs: the value
moves to the new name, and the warning names both.
"""

from __future__ import annotations

import warnings

from opalg.errors import StateError


def renamed(where: str, kwargs: dict, renames: dict[str, str]) -> dict:
    """``kwargs`` with each old name of ``renames`` (old → new) moved to its new name, warning once each.

    Raises StateError when both the old and the new name are given, or when an argument is
    neither a known keyword nor an old name (left to the caller: ``kwargs`` keeps the rest).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     renamed("quasi.simulate", {"nu0": [0.0]}, {"nu0": "v0"})
    {'v0': [0.0]}
    >>> str(w[0].message)
    'quasi.simulate: the keyword nu0 is now v0 (nu0 is accepted until the next release)'
    """
    out = dict(kwargs)
    for old, new in renames.items():
        if old not in out:
            continue
        if new in out:
            raise StateError(f"{where}: give {new} or its old name {old}, not both")
        warnings.warn(f"{where}: the keyword {old} is now {new} ({old} is accepted until the next release)",
                      DeprecationWarning, stacklevel=3)
        out[new] = out.pop(old)
    return out
