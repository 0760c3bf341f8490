r"""The old keyword names of the simulators, accepted for one release with a DeprecationWarning.

Every ``simulate`` takes ``q0, v0, t_span, tau=, t_eval=, method=, rtol=, atol=``.  A call with
a name of the previous release (``qd0``, ``nu0``, ``x0``, ``t_end`` …) still runs: the value
moves to the new name, and the warning names both.
"""

from __future__ import annotations

import warnings

from opalg.errors import StateError


def renamed(where: str, kwargs: dict, renames: dict[str, str], *, extra_ok: bool = False, **given) -> dict:
    """The new-name arguments of a call, with each old name of ``renames`` (old → new) moved in.

    ``kwargs`` holds the call's other keywords (where the old names arrive); ``given`` the
    values the call received under the new names (None: not given).  Each old name used warns
    once (DeprecationWarning, naming the new one).  Raises StateError when a value comes under
    both names, and TypeError for a keyword that is neither new nor old unless ``extra_ok``
    (then it is returned as it is, for the caller to pass on).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     renamed("quasi.simulate", {"nu0": [0.0]}, {"nu0": "v0"}, v0=None, t_span=(0, 1))
    {'t_span': (0, 1), 'v0': [0.0]}
    >>> str(w[0].message)
    'quasi.simulate: the keyword nu0 is now v0 (nu0 is accepted until the next release)'
    >>> renamed("quasi.simulate", {"nu0": [0.0]}, {"nu0": "v0"}, v0=[1.0])
    Traceback (most recent call last):
    ...
    opalg.errors.StateError: quasi.simulate: give v0 or its old name nu0, not both
    >>> renamed("quasi.simulate", {"nu": [0.0]}, {"nu0": "v0"})
    Traceback (most recent call last):
    ...
    TypeError: quasi.simulate() got unexpected keyword arguments ['nu']
    """
    unknown = sorted(set(kwargs) - set(renames))
    if unknown and not extra_ok:
        raise TypeError(f"{where}() got unexpected keyword arguments {unknown}")
    out = {k: v for k, v in given.items() if v is not None}
    out.update((k, kwargs[k]) for k in unknown)
    for old, new in renames.items():
        if old not in kwargs:
            continue
        warnings.warn(f"{where}: the keyword {old} is now {new} ({old} is accepted until the next release)",
                      DeprecationWarning, stacklevel=3)
        if new in out:
            raise StateError(f"{where}: give {new} or its old name {old}, not both")
        out[new] = kwargs[old]
    return out
