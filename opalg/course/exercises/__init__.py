"""Hidden checks for the notebooks' exercises: ``check("03.1", answer)``.

An exercise cell in a notebook holds only the student's answer and one call::

    answer_1 = ...                     # the student replaces the ...
    check("03.1", answer_1)            # prints: not answered yet / correct / not quite — a hint

The expected value is computed here, by opalg or by a literal derived in
``docs/solutions/``, never in the notebook, so the notebook shows no solution.  Model answers
(with the reasoning, and code for the "implement it" exercises) are in
``docs/solutions/NN_*.md``; ``tests/test_exercises.py`` runs every model answer through its
check, and checks that a wrong answer is refused.

Kinds of exercise
-----------------
``value``
    a number, an integer, a letter of a multiple choice, an array; compared by the exercise's
    own rule (exact for integers, a stated tolerance for floats).
``function``
    "implement it": the student writes a function (a sweep, a recursion); it is called on
    seeded random chains and trees (multi-axis and prismatic joints, arbitrary labels) and
    compared with opalg's own, and the first failing case is reported.

Exercises live in one module per notebook (``opalg/course/exercises/nb03.py`` holds ``03.*``), each a
dict ``EXERCISES`` of :class:`Exercise`.
"""

from __future__ import annotations

import copy
import dis
import functools
import importlib
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Exercise", "Feedback", "check", "grade", "exercise", "registry", "not_answered"]


@dataclass(frozen=True)
class Feedback:
    """The outcome of a check: ``correct`` is None while the exercise is not answered."""

    key: str
    correct: bool | None
    message: str

    def __str__(self) -> str:
        return f"Exercise {self.key}: {self.message}"


@dataclass(frozen=True)
class Exercise:
    """One exercise.

    ``grader(answer)`` returns ``(ok, detail)``: ``ok`` True when the answer is right, and
    ``detail`` a hint (never the answer) when it is not.  ``kind`` is ``"value"`` or
    ``"function"``; ``what`` says what kind of answer is expected (shown when the type is wrong);
    ``name`` is the variable (``answer_1``) or function (``phi_apply``) the notebook's answer
    cell defines, and the name the model answer in ``docs/solutions/`` defines.
    """

    key: str
    kind: str
    what: str
    grader: Callable[[Any], tuple[bool, str]] = field(repr=False)
    name: str = "answer"

    def __post_init__(self):
        if self.kind not in ("value", "function"):
            raise ValueError(f"exercise {self.key}: kind must be 'value' or 'function', got {self.kind!r}")


def not_answered(answer: Any) -> bool:
    """True for the placeholders a notebook ships with: ``...``, None, or a function that does
    nothing (``def f(...): ...``, with or without a docstring or comments).  A function that
    raises ``NotImplementedError`` is reported by the grader instead.

    Examples
    --------
    >>> def stub(x):
    ...     "Return 2 x."
    ...     ...
    >>> not_answered(...), not_answered(stub), not_answered(lambda x: 2 * x)
    (True, True, False)
    """
    if answer is ... or answer is None:
        return True
    code = getattr(answer, "__code__", None)
    if code is None:
        return False
    # An empty body compiles to "return None" whatever the docstring shifts in the constants
    # (LOAD_CONST None; RETURN_VALUE up to 3.11, RETURN_CONST None from 3.12).
    ops = [(ins.opname, ins.argval) for ins in dis.get_instructions(code)
           if ins.opname not in ("RESUME", "NOP", "CACHE")]
    return ops in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


def registry() -> dict[str, Exercise]:
    """All exercises of all notebooks, by key (imports every ``nbNN`` module)."""
    import pkgutil

    out: dict[str, Exercise] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("nb"):
            out.update(importlib.import_module(f"{__name__}.{info.name}").EXERCISES)
    return out


def exercise(key: str) -> Exercise:
    """The exercise ``key`` ("NN.k"); a clear error for an unknown key."""
    if not isinstance(key, str) or "." not in key:
        raise KeyError(f"exercise key must look like '03.1', got {key!r}")
    mod = f"{__name__}.nb{key.split('.')[0]}"
    try:
        table = importlib.import_module(mod).EXERCISES
    except ModuleNotFoundError:
        raise KeyError(f"no exercises for notebook {key.split('.')[0]!r} (no module {mod})") from None
    if key not in table:
        raise KeyError(f"no exercise {key!r}; notebook {key.split('.')[0]} has {sorted(table)}")
    return table[key]


def grade(key: str, answer: Any) -> Feedback:
    """Check ``answer`` to exercise ``key`` without printing.

    Examples
    --------
    >>> grade("03.1", ...).correct is None
    True
    >>> grade("03.1", -1).correct
    False
    """
    ex = exercise(key)
    if not_answered(answer):
        return Feedback(key, None, f"not answered yet — replace the ... with {ex.what} and rerun.")
    try:
        ok, detail = ex.grader(answer)
    except _StudentError as e:
        return Feedback(key, False, f"not quite — {e}")
    if ok:
        return Feedback(key, True, "correct.")          # the hint is for a wrong answer only
    return Feedback(key, False, f"not quite — {detail}")


def check(key: str, answer: Any) -> None:
    """Print the verdict on ``answer`` to exercise ``key`` (the call in a notebook's check cell).

    Returns None, so that ``check(...)`` as the last line of a cell shows the verdict once (a
    returned object would be displayed a second time, and a trailing ``;`` does not hide it
    under nbval); :func:`grade` gives the :class:`Feedback` itself, for a student's own tests.

    Examples
    --------
    >>> check("03.1", ...)
    Exercise 03.1: not answered yet — replace the ... with an integer and rerun.
    """
    print(grade(key, answer))


class _StudentError(Exception):
    """The student's answer could not be used (wrong type, their function raised)."""


# ----------------------------------------------------------------------------- graders


def integer(expected: Callable[[], int], hint: str) -> Callable[[Any], tuple[bool, str]]:
    """A grader for an integer answer; ``expected`` is computed when the check runs."""

    def grader(answer):
        try:
            value = int(answer)
        except (TypeError, ValueError):
            raise _StudentError(f"expected an integer, got {answer!r}") from None
        if value != answer:
            raise _StudentError(f"expected an integer, got {answer!r}")
        return value == expected(), hint

    return grader


def number(expected: Callable[[], float], hint: str, rtol: float) -> Callable[[Any], tuple[bool, str]]:
    """A grader for a real number, within relative tolerance ``rtol`` (state why in the module)."""

    def grader(answer):
        try:
            value = float(answer)
        except (TypeError, ValueError):
            raise _StudentError(f"expected a number, got {answer!r}") from None
        want = expected()
        return abs(value - want) <= rtol * max(abs(want), 1e-300), hint

    return grader


def choice(expected: str, options: str, hint: str) -> Callable[[Any], tuple[bool, str]]:
    """A grader for a multiple choice: one letter among ``options`` (e.g. "abcd")."""

    def grader(answer):
        if not isinstance(answer, str) or answer.strip().lower() not in options:
            raise _StudentError(f"expected one letter among {', '.join(options)}, got {answer!r}")
        return answer.strip().lower() == expected, hint

    return grader


def function(cases: Callable[[], list[tuple[str, tuple, Any]]], compare: Callable[[Any, Any], str | None],
             ) -> Callable[[Any], tuple[bool, str]]:
    """A grader for an "implement it" exercise.

    ``cases()`` gives ``(description, args, expected)`` triples (seeded models: chains, trees,
    multi-axis joints); the student's function is called as ``f(*args)``;
    ``compare(result, expected)`` returns None when they agree, else what is wrong.  The first
    failing case is reported with its description; an exception in the student's function is
    reported with its type, message and the student's line.

    ``cases()`` runs once per process (some build symbolic models); each check gets a deep
    copy of its result, so what one answer does to its arguments never reaches another.
    """
    built = functools.cache(cases)

    def grader(f):
        if not callable(f):
            raise _StudentError(f"expected a function, got {type(f).__name__}")
        results = []
        for what, args, want in copy.deepcopy(built()):
            try:
                got = f(*args)
            except NotImplementedError:
                raise _StudentError("the function still raises NotImplementedError") from None
            except Exception as e:  # noqa: BLE001 - any error in student code is feedback
                tb = traceback.extract_tb(e.__traceback__)[-1]
                raise _StudentError(f"on {what} your function raised {type(e).__name__}: {e} "
                                    f"(line {tb.lineno}: {tb.line})") from None
            problem = compare(got, want)
            if problem is not None:
                return False, f"on {what}: {problem}"
            results.append(what)
        return True, f"Agrees with opalg on {len(results)} cases ({'; '.join(results)})."

    return grader


def close_arrays(rtol: float):
    """``compare`` for arrays: same shape, max abs error ≤ rtol · max|expected|."""
    import numpy as np

    def compare(got, want):
        try:
            got = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            return f"the result is not an array of numbers ({type(got).__name__})"
        want = np.asarray(want, dtype=float)
        if got.shape != want.shape:
            return f"shape {got.shape}, expected {want.shape}"
        if not np.all(np.isfinite(got)):
            return "the result has NaN or inf entries"
        err = float(np.abs(got - want).max()) / max(float(np.abs(want).max()), 1e-300)
        if err > rtol:
            i = np.unravel_index(np.argmax(np.abs(got - want)), want.shape)
            return f"relative error {err:.1e} (tolerance {rtol:g}), largest at index {tuple(int(k) for k in i)}"
        return None

    return compare


def close_arrays_cond(k: float):
    """``compare`` for cases whose expected value is ``(array, cond)``: :func:`close_arrays` with
    the tolerance ``k·cond·ε``, the forward-error bound of the solve that computed the array,
    ``cond`` the condition number of its matrix (computed when the cases are built).

    Examples
    --------
    >>> import numpy as np
    >>> compare = close_arrays_cond(100)
    >>> compare(np.array([1.0, 2.0]), (np.array([1.0, 2.0 + 1e-13]), 10.0)) is None
    True
    >>> compare(np.array([1.0, 2.0]), (np.array([1.0, 2.0 + 1e-12]), 10.0))[:14]
    'relative error'
    """
    import numpy as np

    eps = float(np.finfo(float).eps)

    def compare(got, want):
        value, cond = want
        return close_arrays(k * max(float(cond), 1.0) * eps)(got, value)

    return compare
