r"""Validation of model data for :class:`opalg.Model`, in O(n) time for n bodies.

Each check raises :class:`~opalg.errors.ModelError` naming the body (label and
name) and the field.  Numeric models take a batched fast path: every placement
and inertia is stacked into one array and checked in a few vectorized numpy
calls (the per-body checks of small arrays cost ~0.3 ms a body); only if that
finds a problem do the per-body checks run, to report the first bad body exactly.
Symbolic (sympy) entries are checked only where they are numbers.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.errors import ModelError
from opalg.model import _validate


def numeric(x) -> np.ndarray | None:
    """Float array of ``x`` if every entry is a number, else None (call after the string check)."""
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None


def parent_index(k: int, p) -> int:
    """An integer parent index (floats only if integral, as from a numpy float array)."""
    if isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)):
        return int(p)
    if isinstance(p, (float, np.floating)) and float(p).is_integer():
        return int(p)
    raise ModelError(f"body {k}: parent index {p!r} is not an integer")


def is_rotation(R: np.ndarray, tol: float = 1e-9) -> bool:
    """True if the numeric 3x3 ``R`` is finite, orthonormal to ``tol`` and has det +1."""
    return bool(np.all(np.isfinite(R)) and np.allclose(R.T @ R, np.eye(3), atol=tol)
                and np.linalg.det(R) > 0)


def model_array(x, what: str) -> np.ndarray:
    """``x`` as an array of numbers or sympy expressions, else a ModelError naming ``what``
    (strings are refused before anything can evaluate them, and so are sympy nan, zoo, ±oo)."""
    a = bk.asarray(x, what, ModelError)
    if a.dtype == object:
        bad = bk.first_nonfinite(a)
        if bad is not None:
            raise ModelError(f"{what} has a non-finite entry {bad[1]} at index {bad[0]}")
    return a


def is_massless(inertia) -> bool:
    """Zero mass and zero inertia tensor (numbers, not symbols)."""
    m, J = numeric(inertia.mass), numeric(inertia.I_com)
    return m is not None and J is not None and m == 0 and not np.any(J)


def check_inertia(k: int, name: str, inertia, allow_massless: bool) -> None:
    """Mass > 0 (or a massless body if allowed), a finite 3-vector mass centre and a
    symmetric positive definite inertia tensor obeying the triangle inequality."""
    for what, x in (("mass", inertia.mass), ("mass centre", inertia.com), ("inertia tensor", inertia.I_com)):
        model_array(x, f"body {k} ({name}): {what}")
    if bk.asarray(inertia.mass).shape != ():
        raise ModelError(f"body {k} ({name}): mass must be a scalar, got {inertia.mass!r}")
    m = numeric(inertia.mass)
    if m is None and not bk.is_symbolic(inertia.mass):
        raise ModelError(f"body {k} ({name}): mass must be a number or a sympy expression, "
                         f"got {inertia.mass!r}")
    if allow_massless and is_massless(inertia):
        return
    if m is not None and (not np.isfinite(m) or m <= 0):
        hint = "" if allow_massless else " (massless bodies need allow_massless=True)"
        raise ModelError(f"body {k} ({name}): mass must be > 0, got {float(m):g}{hint}")
    c = bk.asarray(inertia.com)
    if c.shape != (3,):
        raise ModelError(f"body {k} ({name}): mass centre has shape {c.shape}, expected (3,)")
    cn = numeric(c)
    if cn is not None and not np.all(np.isfinite(cn)):
        raise ModelError(f"body {k} ({name}): mass centre has non-finite entries {cn}")
    J = bk.asarray(inertia.I_com)
    if J.shape != (3, 3):
        raise ModelError(f"body {k} ({name}): inertia tensor has shape {J.shape}, expected (3, 3)")
    Jn = numeric(J)
    if Jn is None:
        return
    if not np.all(np.isfinite(Jn)):
        raise ModelError(f"body {k} ({name}): inertia tensor has non-finite entries")
    # Relative to the tensor's own size: the verdict must not depend on the units (E12's rule).
    scale = float(np.abs(Jn).max())
    if not np.allclose(Jn, Jn.T, atol=1e-12 * scale):
        raise ModelError(f"body {k} ({name}): inertia tensor is not symmetric")
    ev = np.linalg.eigvalsh(Jn)
    # Degenerate (point-mass, rod) tensors are accepted only with allow_massless,
    # as for URDF imports; a joint that then moves no inertia fails at its pivot D(k).
    if allow_massless:
        not_definite = ev[0] < -1e-12 * scale
    else:
        not_definite = ev[0] <= 0
    if not_definite:
        raise ModelError(
            f"body {k} ({name}): inertia tensor is not positive definite (eigenvalues {ev})"
        )
    if ev[2] > ev[0] + ev[1] + 1e-12 * scale:
        raise ModelError(
            f"body {k} ({name}): principal moments {ev} violate the triangle inequality "
            f"({ev[2]:.6g} > {ev[0]:.6g} + {ev[1]:.6g})"
        )


def check_placement(k: int, name: str, pl) -> tuple[np.ndarray, np.ndarray]:
    """(R, r) of a placement: a proper 3x3 rotation and a finite 3-vector."""
    try:
        R, r = pl[0], pl[1]
    except (TypeError, IndexError, KeyError):
        raise ModelError(f"body {k} ({name}): placement must be (3x3 rotation, 3-vector), got {pl!r}") from None
    R = model_array(R, f"body {k} ({name}): placement rotation")
    r = model_array(r, f"body {k} ({name}): placement origin")
    if R.shape != (3, 3) or r.shape != (3,):
        raise ModelError(f"body {k} ({name}): placement must be (3x3 rotation, 3-vector)")
    Rn = numeric(R)
    if Rn is not None and not is_rotation(Rn):
        raise ModelError(f"body {k} ({name}): placement rotation is not a proper rotation")
    rn = numeric(r)
    if rn is not None and not np.all(np.isfinite(rn)):
        raise ModelError(f"body {k} ({name}): placement origin has non-finite entries {rn}")
    return R, r


def check_gravity(gravity) -> np.ndarray:
    g = model_array(gravity, "gravity")
    if g.shape != (3,):
        raise ModelError(f"gravity has shape {g.shape}, expected (3,)")
    gn = numeric(g)
    if gn is not None and not np.all(np.isfinite(gn)):
        raise ModelError(f"gravity has non-finite entries {gn}")
    return g


# --------------------------------------------------------------------------- batched fast path
def stack(items, shape: tuple) -> np.ndarray | None:
    """One float array (n, *shape) of numeric items of that shape, else None (strings, symbols, ragged)."""
    try:
        a = np.array(items)
    except (TypeError, ValueError):
        return None
    if a.dtype.kind not in "fiu" or a.shape != (len(items),) + shape:
        return None
    return a.astype(float, copy=False)


def placements_ok(R: np.ndarray, r: np.ndarray) -> bool:
    """Every stacked placement passes :func:`check_placement` (same tolerances, batched)."""
    if not (np.isfinite(R).all() and np.isfinite(r).all()):
        return False
    return bool(np.isclose(np.swapaxes(R, -1, -2) @ R, np.eye(3), atol=1e-9).all()
                and (np.linalg.det(R) > 0).all())


def inertias_ok(m: np.ndarray, c: np.ndarray, J: np.ndarray, allow_massless: bool) -> bool:
    """Every stacked inertia passes :func:`check_inertia` (same tolerances, batched)."""
    skip = (m == 0) & ~J.any(axis=(1, 2)) if allow_massless else np.zeros(m.shape, bool)
    m, c, J = m[~skip], c[~skip], J[~skip]
    if not (np.isfinite(m).all() and (m > 0).all() and np.isfinite(c).all() and np.isfinite(J).all()):
        return False
    if not len(m):
        return True
    scale = np.abs(J).max(axis=(1, 2))   # the tensor's own size: unit-free (E12's rule)
    if not np.isclose(J, np.swapaxes(J, -1, -2), atol=1e-12 * scale[:, None, None]).all():
        return False
    ev = np.linalg.eigvalsh(J)
    definite = ev[:, 0] >= -1e-12 * scale if allow_massless else ev[:, 0] > 0
    return bool(definite.all() and (ev[:, 2] <= ev[:, 0] + ev[:, 1] + 1e-12 * scale).all())


# --------------------------------------------------------------------------- topology, names
def children(parents: Sequence[int]) -> list[list[int]]:
    """Children of every body in ascending label order, in one pass."""
    kids: list[list[int]] = [[] for _ in parents]
    for c, p in enumerate(parents):
        if p >= 0:
            kids[p].append(c)
    return kids


def topological_order(parents: Sequence[int], names: Sequence[str]) -> tuple[int, ...]:
    """Bodies sorted by (depth, label), breadth first; a cycle is reported with its bodies in order."""
    n = len(parents)
    for k, p in enumerate(parents):
        if p == k:
            raise ModelError(f"body {k} ({names[k]}) is its own parent")
        if not (-1 <= p < n):
            raise ModelError(
                f"body {k} ({names[k]}): parent index {p} out of range (-1 for the inertial frame, "
                f"0..{n - 1} for bodies)"
            )
    kids = children(parents)
    reached = [False] * n
    level, by_depth = [k for k in range(n) if parents[k] == -1], []
    while level:
        by_depth.append(sorted(level))
        for k in level:
            reached[k] = True
        level = [c for k in level for c in kids[k]]
    if sum(map(len, by_depth)) < n:
        # The smallest body not reached from a root walks up into a cycle.
        j, pos, path = reached.index(False), {}, []
        while j not in pos:
            pos[j] = len(path)
            path.append(j)
            j = parents[j]
        cyc = path[pos[j]:] + [j]
        raise ModelError("parent array has a cycle through bodies " + " -> ".join(map(str, cyc)))
    return tuple(k for level in by_depth for k in level)


def check_unique(names: Sequence[str], what: str, hint=lambda k: "") -> None:
    """Refuse a name used twice, naming it and both bodies."""
    first: dict[str, int] = {}
    for k, nm in enumerate(names):
        if nm in first:
            raise ModelError(f"{what} {nm!r} is used twice (bodies {first[nm]} and {k}{hint(k)}): "
                             "names must be unique")
        first[nm] = k


def check_link_frames(link_frames: dict | None, n: int) -> dict:
    """``{name: (body, R, p)}`` with body in -1..n-1, as a new dict."""
    frames = {} if link_frames is None else dict(link_frames)
    for nm, fr in frames.items():
        if not (isinstance(fr, tuple) and len(fr) == 3 and isinstance(fr[0], (int, np.integer))
                and -1 <= fr[0] < n):
            raise ModelError(f"link frame {nm!r}: expected (body in -1..{n - 1}, R, p), got {fr!r}")
    return frames


def refuse_free(model, where: str, hint: str = "") -> None:
    """ModelError naming the first free joint of ``model`` (K8), for entry points that do not take them.

    Examples
    --------
    >>> import opalg
    >>> refuse_free(opalg.random_model(2, seed=0, floating=True), "quasi.simulate", "use opalg.floating.simulate")
    Traceback (most recent call last):
    ...
    opalg.errors.ModelError: quasi.simulate does not take free joints (body 0, joint 'joint0'); use opalg.floating.simulate
    """
    if not hasattr(model, "joints"):
        _validate.model(model, where)
    free = getattr(model, "free_bodies", None)
    if free is None:
        free = tuple(k for k, j in enumerate(model.joints) if getattr(j, "free", False))
    if free:
        k = free[0]
        name = model.joints[k].name or f"joint{k}"
        raise ModelError(f"{where} does not take free joints (body {k}, joint {name!r})"
                         + (f"; {hint}" if hint else ""))
