"""The bad-input corpus (issue 36): every public name of opalg and of its topic packages gets
wrong types, shapes, NaN/inf, empty and huge inputs and hostile strings, and must refuse them
with an opalg error whose message names the argument; legitimate inputs (float32,
complex-step states) must give the right result.

The tables are tests/input_corpus_core.py (layers 0-4) and tests/input_corpus_topics.py (the
topics, simulate, constrained).  :func:`test_every_public_name_has_an_entry` fails for a public
name without an entry, saying what to add.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings

import pytest

import opalg
from input_corpus_core import CORE, Bad, Exempt, Good
from input_corpus_topics import TOPICS

from helpers import no_string_evaluated  # noqa: F401  (autouse: fails if a string was evaluated)

CORPUS = {**CORE, **TOPICS}

#: The packages whose public names the corpus must cover.
PACKAGES = ("opalg", "opalg.closed", "opalg.quasi", "opalg.fijany", "opalg.flex", "opalg.floating",
            "opalg.symbolic", "opalg.underactuated", "opalg.ider", "opalg.simulate",
            "opalg.algorithms.constrained", "opalg.algebra.block_ops")


def public_names(module) -> dict:
    """``{"pkg.name": object}``: the module's ``__all__``; without one, every attribute not starting
    with "_" that is not a module, nor a name that belongs to another package (typing, dataclasses)."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and not inspect.ismodule(v) and n != "annotations"
                 and (not callable(v) or getattr(v, "__module__", "").startswith("opalg"))]
    return {f"{module.__name__}.{n}": getattr(module, n) for n in names}


def missing_entries(corpus: dict, packages=PACKAGES) -> list[str]:
    """The public names of ``packages`` with no corpus entry, neither their own nor one of the same
    object reached through another public address (``opalg.ider.crba`` is ``opalg.crba``)."""
    everything = {}
    for p in PACKAGES:
        everything.update(public_names(importlib.import_module(p)))
    covered = {id(everything[k]) for k in corpus if k in everything}
    return sorted(k for k, v in everything.items() if k.rsplit(".", 1)[0] in packages
                  and k not in corpus and id(v) not in covered)


def test_every_public_name_has_an_entry():
    """A public name added to a package's __all__ (or, without one, its namespace) needs a corpus entry."""
    missing = missing_entries(CORPUS)
    assert not missing, (
        f"{len(missing)} public name(s) have no bad-input corpus entry: {missing}. Add to the table in "
        "tests/input_corpus_core.py (opalg.*) or tests/input_corpus_topics.py (topics), e.g. "
        f"'{missing[0]}': [Bad(lambda: <a call with a wrong argument>, StateError, '<the argument's name>'), "
        "...] — or 'name': Exempt('<why it takes no user input>') for a constant, exception or result class.")


def test_the_coverage_check_can_fail():
    """missing_entries reports a name the corpus lacks (here: the corpus without opalg.rnea's entry),
    and accepts an alias of a covered object."""
    without = {k: v for k, v in CORPUS.items() if k != "opalg.rnea"}
    assert missing_entries(without, ("opalg",)) == ["opalg.rnea"]
    assert "opalg.ider.crba" not in missing_entries(CORPUS, ("opalg.ider",))


def test_no_stale_entries():
    """Every corpus key names something public: a renamed function must not leave a dead entry."""
    everything = {}
    for p in PACKAGES:
        everything.update(public_names(importlib.import_module(p)))
    stale = sorted(k for k in CORPUS if k not in everything)
    assert not stale, f"corpus entries for names that are not public (renamed or removed?): {stale}"


CASES = [pytest.param(key, case, id=f"{key}[{i}]")
         for key, cases in CORPUS.items() if not isinstance(cases, Exempt)
         for i, case in enumerate(cases)]


@pytest.mark.parametrize("key, case", CASES)
def test_corpus(key, case):
    """A bad input raises the named opalg error, its message naming the argument; a good one is right."""
    if isinstance(case, Good):
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # a ComplexWarning would mean an imaginary part was dropped
            case.check(case.call())
        return
    assert isinstance(case, Bad)
    if case.known:
        pytest.xfail(case.known) if not _refused(case) else pytest.fail(
            f"{key}: fixed ({case.known!r} no longer holds): drop known= from its corpus entry")
    assert issubclass(case.error, opalg.OpalgError), f"{key}: the corpus must expect an opalg error"
    with pytest.raises(case.error) as info:
        case.call()
    assert re.search(case.names, str(info.value)), (
        f"{key}: the message does not name {case.names!r}: {info.value}")


def _refused(case: Bad) -> bool:
    """True if the call raises the expected error naming the argument."""
    try:
        case.call()
    except case.error as e:
        return bool(re.search(case.names, str(e)))
    except Exception:  # noqa: BLE001  (any other outcome: the defect is still there)
        return False
    return False


def test_exemptions_have_reasons():
    """An exemption says why the name takes no input of its own."""
    for key, entry in CORPUS.items():
        if isinstance(entry, Exempt):
            assert len(entry.reason) > 10, key
