"""The notebooks' exercises: every hidden check accepts its model answer and refuses wrong ones.

The model answers are the code blocks of ``docs/solutions/NN_*.md`` (one ``## NN.k`` section per
exercise); they are written from the derivation, not from the checker, so a check that accepted
anything or computed the wrong solution fails here.  Each notebook's check cells must name
registered exercises, each exercise once, in its own notebook, and a notebook shows no solution
(its check cells are one call to ``check``).
"""

from __future__ import annotations

import functools
import json
import pathlib
import re

import numpy as np
import pytest

from opalg.course import exercises

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "docs" / "solutions").glob("*.md"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REGISTRY = exercises.registry()
SECTION = re.compile(r"^## (\d\d\.\d+)\s*$", re.M)
CODE = re.compile(r"```python\n(.*?)```", re.S)
CHECK = re.compile(r"""check\(\s*["'](\d\d\.\d+)["']""")
HEADING = re.compile(r"\*\*Exercise (\d\d\.\d+)")


def _solutions() -> dict[str, tuple[str, str]]:
    """key -> (prose, code) from every solutions document."""
    out = {}
    for path in SOLUTIONS:
        text = path.read_text(encoding="utf-8")
        parts = SECTION.split(text)
        for key, body in zip(parts[1::2], parts[2::2]):
            assert key not in out, f"{path.name}: exercise {key} answered twice"
            assert key.split(".")[0] == path.name[:2], f"{path.name}: section {key} belongs elsewhere"
            out[key] = (body, "\n".join(CODE.findall(body)))
    return out


ANSWERS = _solutions()


@functools.lru_cache(maxsize=None)
def _model_answer(key: str):
    """The model answer's value (its code run once per process: the accepted and the wrong-answer
    tests of a key share it, and tests/xdist_units.py's SHARED_UNITS puts the costly ones on one
    worker)."""
    body, code = ANSWERS[key]
    ex = REGISTRY[key]
    assert code.strip(), f"docs/solutions: exercise {key} has no code block for its model answer"
    ns: dict = {}
    exec(compile(code, f"<model answer {key}>", "exec"), ns)  # noqa: S102 - our own documents
    assert ex.name in ns, f"model answer {key} does not define {ex.name!r}"
    return ns[ex.name]


def _wrong_values(ex, right):
    if ex.kind == "function":
        return [lambda *args: args[-1], lambda *args: 1 / 0]
    if isinstance(right, str):
        return [chr(ord(right.strip().lower()) + 1) if right.strip().lower() != "z" else "a"]
    if isinstance(right, (int,)) and not isinstance(right, bool):
        return [right + 1, right - 1]
    if np.ndim(right) > 0:   # an array answer: every entry off by 0.1 % (and 1e-3 absolute)
        return [np.asarray(right, dtype=float) * (1 + 1e-3) + 1e-3]
    return [float(right) * (1 + 1e-3) + 1e-3]


@pytest.mark.parametrize("key", sorted(REGISTRY))
def test_model_answer_is_accepted(key):
    fb = exercises.grade(key, _model_answer(key))
    assert fb.correct is True, f"{key}: the model answer is refused: {fb.message}"
    assert fb.message == "correct.", f"{key}: a right answer gets only 'correct.', not the hint: {fb.message!r}"


@pytest.mark.parametrize("key", sorted(REGISTRY))
def test_wrong_answers_are_refused(key):
    ex = REGISTRY[key]
    for wrong in _wrong_values(ex, _model_answer(key)):
        fb = exercises.grade(key, wrong)
        assert fb.correct is False, f"{key}: accepted the wrong answer {wrong!r}: {fb.message}"
        assert fb.message.startswith("not quite"), fb.message


@pytest.mark.parametrize("key", sorted(REGISTRY))
def test_placeholder_is_not_answered(key):
    def stub(*args):
        raise NotImplementedError

    def dots(*args): ...

    def documented(*args):
        """What the student is to write."""
        ...

    for placeholder in (..., stub, dots, documented) if REGISTRY[key].kind == "function" else (...,):
        fb = exercises.grade(key, placeholder)
        if placeholder is stub:
            assert fb.correct is False and "NotImplementedError" in fb.message
        else:
            assert fb.correct is None and "not answered" in fb.message, fb.message


def test_unknown_key_is_a_clear_error():
    with pytest.raises(KeyError, match="no exercise '03.99'"):
        exercises.grade("03.99", 1)
    with pytest.raises(KeyError, match="look like"):
        exercises.grade("three", 1)


def test_wrong_type_is_feedback_not_a_traceback():
    fb = exercises.grade("03.1", "seven")
    assert fb.correct is False and "expected an integer" in fb.message


def _notebook_cells(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return nb["cells"]


def test_every_check_in_the_notebooks_is_registered_and_answered_once():
    seen: dict[str, str] = {}
    for path in NOTEBOOKS:
        for cell in _notebook_cells(path):
            if cell["cell_type"] != "code":
                continue
            for key in CHECK.findall("".join(cell["source"])):
                assert key in REGISTRY, f"{path.name}: check({key!r}) is not a registered exercise"
                assert key not in seen, f"exercise {key} is checked in {seen[key]} and {path.name}"
                assert key.split(".")[0] == path.name[:2], f"{path.name} checks exercise {key}"
                seen[key] = path.name
    missing = sorted(set(REGISTRY) - set(seen))
    assert not missing, f"registered exercises no notebook checks: {missing}"


def test_every_exercise_heading_has_a_model_answer():
    """Checked or not ("explain", "derive"), every exercise has a model answer in docs/solutions."""
    for path in NOTEBOOKS:
        for cell in _notebook_cells(path):
            if cell["cell_type"] == "markdown":
                for key in HEADING.findall("".join(cell["source"])):
                    assert key in ANSWERS, f"{path.name}: exercise {key} has no section in docs/solutions"


def test_check_cells_show_no_solution():
    """A cell that calls check() holds only that call (the solution is computed in opalg.course.exercises)."""
    for path in NOTEBOOKS:
        for i, cell in enumerate(_notebook_cells(path)):
            src = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
            if CHECK.search(src):
                lines = [ln for ln in src.splitlines() if ln.strip() and not ln.strip().startswith("#")]
                assert all(CHECK.search(ln) or ln.startswith("from opalg.course.exercises import") for ln in lines), (
                    f"{path.name}, cell {i}: a check cell holds more than check(...) calls:\n{src}")


def test_function_grader_builds_cases_once_and_isolates_answers():
    """exercises.function: cases() runs once for every check of a grader, and an answer that
    mutates its arguments (or the expected value it was compared with) reaches no later check."""
    calls = []

    def cases():
        calls.append(1)
        return [("a list", (np.array([1.0, 2.0]),), np.array([2.0, 4.0]))]

    # exact: 2·x is the expected array to the last bit (3·x is 50% off), so any tolerance works.
    grader = exercises.function(cases, exercises.close_arrays(1e-12))

    def vandal(x):
        out = 2 * x
        x[:] = 100.0       # writes into the argument it was handed
        return out

    assert grader(vandal)[0] and grader(lambda x: 2 * x)[0]
    assert not grader(lambda x: 3 * x)[0]
    assert len(calls) == 1
