r"""Reusable argument validators for opalg's public entry points (the bad-input contract).

Every check runs before any work, refuses without converting anything that could be
evaluated (a string is never parsed or sympified), and raises an :mod:`opalg.errors`
exception whose message names the entry point, the argument, what was expected and what
was given.  ``error`` selects the class: :class:`~opalg.errors.StateError` for states,
options and flags (the default), :class:`~opalg.errors.ModelError` for model data.
docs/INPUT_CONTRACT.md states what each entry point promises.

Examples
--------
>>> from opalg.model._validate import flag, integer
>>> flag(True, "gravity", "quasi.simulate")
True
>>> flag("no", "gravity", "quasi.simulate")
Traceback (most recent call last):
...
opalg.errors.StateError: quasi.simulate: gravity must be True or False, got a str 'no'
>>> integer(2.5, "n", "random_model", lo=1)
Traceback (most recent call last):
...
opalg.errors.StateError: random_model: n must be an integer >= 1, got a float 2.5
"""

from __future__ import annotations

import math
import numbers
import unicodedata

import numpy as np

from opalg.errors import ModelError, StateError


def describe(x) -> str:
    """``a str 'panda'``: the type and a short repr of a bad value, for a message."""
    r = repr(x)
    r = r if len(r) <= 60 else r[:57] + "..."
    t = type(x).__name__
    return f"{'an' if t[:1].lower() in 'aeiou' else 'a'} {t} {r}"


def _fail(where: str, name: str, expected: str, x, error) -> None:
    prefix = f"{where}: " if where else ""
    raise error(f"{prefix}{name} must be {expected}, got {describe(x)}")


def flag(x, name: str, where: str = "", error: type[Exception] = StateError) -> bool:
    """A real boolean (``True``/``False``, numpy bool too): never a truthy string or number."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    _fail(where, name, "True or False", x, error)


def choice(x, options, name: str, where: str = "", error: type[Exception] = StateError):
    """One of the known strings (or values) ``options``."""
    if isinstance(x, str) and x in options:
        return x
    if not isinstance(x, str) and any(x is o for o in options):
        return x
    opts = list(map(repr, options))
    want = opts[0] if len(opts) == 1 else ", ".join(opts[:-1]) + " or " + opts[-1]
    prefix = f"{where}: " if where else ""
    raise error(f"{prefix}{name} must be {want}, got {x!r:.60}" if isinstance(x, str) else
                f"{prefix}{name} must be {want}, got {describe(x)}")


def integer(x, name: str, where: str = "", lo: int | None = None, hi: int | None = None,
            error: type[Exception] = StateError) -> int:
    """An int (or numpy integer; not a bool, not a float) in ``lo..hi`` (inclusive)."""
    ok = isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
    if ok and (lo is None or x >= lo) and (hi is None or x <= hi):
        return int(x)
    rng = (f" in {lo}..{hi}" if lo is not None and hi is not None else
           f" >= {lo}" if lo is not None else f" <= {hi}" if hi is not None else "")
    _fail(where, name, f"an integer{rng}", x, error)


def real(x, name: str, where: str = "", *, positive: bool = False, nonneg: bool = False,
         finite: bool = True, error: type[Exception] = StateError) -> float:
    """A real number (not a bool, not a string): finite, and > 0 or >= 0 if asked."""
    ok = isinstance(x, (numbers.Real, np.floating, np.integer)) and not isinstance(x, (bool, np.bool_))
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        x, ok = x[()], True
    if ok:
        v = float(x)
        if (not finite or math.isfinite(v)) and not math.isnan(v) \
                and (not positive or v > 0) and (not nonneg or v >= 0):
            return v
    what = ("a finite number" if finite else "a number") + \
        (" > 0" if positive else " >= 0" if nonneg else "")
    _fail(where, name, what, x, error)


def array(x, name: str, where: str = "", shape: tuple | None = None, *, finite: bool = True,
          complex_ok: bool = False, error: type[Exception] = StateError) -> np.ndarray:
    """``x`` as a float (or, if allowed, complex) array of ``shape`` (None entries: any size).

    Strings, objects and booleans are refused unconverted; so are nan and inf if ``finite``.
    """
    prefix = f"{where}: " if where else ""
    if isinstance(x, (str, bytes)):
        _fail(where, name, "an array of numbers", x, error)
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):   # ragged nesting
        _fail(where, name, "an array of numbers", x, error)
    kinds = "iufc" if complex_ok else "iuf"
    if a.dtype.kind not in kinds:
        got = f"dtype {a.dtype}" if a.dtype.kind != "O" else "entries that are not numbers"
        hint = "" if complex_ok or a.dtype.kind != "c" else " (complex entries would lose their imaginary part)"
        raise error(f"{prefix}{name} must be {'numbers' if complex_ok else 'real numbers'}, got {got}{hint}")
    if shape is not None:
        if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
            want = "(" + ", ".join("n" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            raise error(f"{prefix}{name} must have shape {want}, got shape {a.shape}")
    a = a.astype(complex if a.dtype.kind == "c" else float)
    if finite and not np.all(np.isfinite(a)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise error(f"{prefix}{name} has a non-finite entry {a[idx]} at index {idx}")
    return a


def spd(M, name: str, where: str = "", error: type[Exception] = StateError, *, size: int | None = None,
        semidefinite: bool = False, what: str = "a mass matrix") -> np.ndarray:
    """A finite, symmetric (to 1e-10 of its largest entry) positive definite matrix, (size, size) if
    given; positive *semi*definite (smallest eigenvalue ≥ −1e-12 of its scale) with ``semidefinite``.
    ``what`` names the kind of matrix in the message ("a mass matrix is symmetric")."""
    prefix = f"{where}: " if where else ""
    a = array(M, name, where, (size, size), error=error)
    if a.shape[0] != a.shape[1] or a.shape[0] == 0:
        raise error(f"{prefix}{name} must be a non-empty square matrix, got shape {a.shape}")
    scale = float(np.abs(a).max())
    asym = float(np.abs(a - a.T).max())
    if asym > 1e-10 * scale:
        raise error(f"{prefix}{name} is not symmetric (max |{name} - {name}ᵀ| = {asym:.3g}, "
                    f"max |{name}| = {scale:.3g}): {what} is symmetric")
    kind = "semidefinite" if semidefinite else "definite"
    if semidefinite:
        ev = float(np.linalg.eigvalsh(a)[0])
        ok = ev >= -1e-12 * max(scale, 1.0)
    else:
        try:
            np.linalg.cholesky(a)
            ok = True
        except np.linalg.LinAlgError:
            ok, ev = False, float(np.linalg.eigvalsh(a)[0])
    if not ok:
        raise error(f"{prefix}{name} is not positive {kind} (smallest eigenvalue {ev:.3g}): "
                    f"{what} is positive {kind}")
    return a


def model(x, where: str, name: str = "model", kind=None) -> object:
    """``x`` if it is an :class:`opalg.Model` (recognized by its attributes, so that this module
    imports no model class) or an instance of ``kind``; else a ModelError naming ``name``."""
    if kind is None:
        if all(hasattr(x, a) for a in ("parents", "joints", "nq", "ndof")):
            return x
        label = "opalg.Model"
    elif isinstance(x, kind):
        return x
    else:
        label = ".".join(kind.__module__.split(".")[:2] + [kind.__name__])
    hint = " (a robot by name is not known: read its URDF with opalg.from_urdf)" \
        if isinstance(x, str) and kind is None else ""
    raise ModelError(f"{where + ': ' if where else ''}{name} must be an {label}, got {describe(x)}{hint}")


def index(i, n: int, name: str, where: str = "") -> int:
    """A block/body index in 0..n-1 (no negative wrap-around, no float, no bool)."""
    return integer(i, name, where, lo=0, hi=n - 1)


def text(x, name: str, where: str = "", error: type[Exception] = ModelError) -> str:
    """A str (not bytes, not a number)."""
    if isinstance(x, str):
        return x
    _fail(where, name, "a str", x, error)


def xml_text(x, name: str, where: str = "", error: type[Exception] = ModelError) -> str:
    """A str that XML 1.0 can hold: no control characters (other than tab, newline, CR) and no
    lone surrogates, so that what is written reads back unchanged."""
    s = text(x, name, where, error)
    for i, c in enumerate(s):
        o = ord(c)
        if (o < 0x20 and c not in "\t\n\r") or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF) \
                or (0x7F <= o <= 0x9F):
            prefix = f"{where}: " if where else ""
            raise error(f"{prefix}{name} {s!r} has the character {unicodedata.name(c, hex(o))!s} "
                        f"(U+{o:04X}) at position {i}, which a URDF (XML 1.0) file cannot hold")
    return s


def identifier(name: str, what: str, where: str = "", error: type[Exception] = ModelError) -> str:
    """A plain Python identifier (letters, digits, underscores; not a keyword position issue):
    nothing else is ever printed into generated code."""
    if isinstance(name, str) and name.isidentifier() and name.isascii():
        return name
    prefix = f"{where}: " if where else ""
    raise error(f"{prefix}{what} {name!r:.80} is not a plain identifier (letters, digits, '_'): "
                "such a name is never printed into generated code")
