"""The suite's work units under pytest-xdist (``--dist loadgroup``): which tests share a worker,
and roughly how long each unit takes.

The root conftest.py's scheduler hook (``pytest_xdist_make_scheduler``) puts each notebook's
cells and its byte check in one work unit (one worker, one execution), and the real-browser
tests in one unit (they start servers and a Chromium each).  Every other test is scheduled
alone.  The units are read from node ids (:func:`xdist_scope`), so a new notebook or browser
test is grouped with no edit here.  The units are handed out longest first
(:func:`unit_seconds`, a rough estimate per unit): the browser unit and the slow notebooks start
at once instead of whenever collection order reaches them, and the last minute is left to short
units, so the workers finish together.  Hypothesis is derandomized and every random model is
seeded, so a worker runs the same examples as a serial run.

Plain tables and functions, no pytest hook: conftest.py loads this file by path (tests/ is not
a package), and the suite collects its doctests (``--doctest-modules`` over ``tests``).
"""
from __future__ import annotations

import re

# A notebook's cells ("notebooks/NN.ipynb::Cell 3") and every test parametrized by it
# ("tests/test_notebooks.py::test_executor_is_deterministic[NN.ipynb]") form one work unit.
_CELL = re.compile(r"^(?:notebooks/)?(?P<nb>.+\.ipynb)::Cell \d+$")
_BY_NOTEBOOK = re.compile(r"\[(?P<nb>[^\[\]]+\.ipynb)\]$")


#: Tests that share one expensive result computed once per worker process (a module-level
#: cache): one unit each, so that the result is computed once.
SHARED_UNITS = {
    # two runs of `python -m opalg.ider` serve the determinism test and the committed-CSV test
    "ider-figure-script": re.compile(r"^tests/test_ider_figures\.py::test_(figure_script_is_"
                                     r"deterministic|committed_csv_matches_a_fresh_run)$"),
    # the model answers of 08.1 and 08.2 and their expected values are Ider simulations (cached
    # per process): the accepted and the wrong-answer tests of both run each one once
    "exercises-08-simulations": re.compile(r"^tests/test_exercises\.py::test_(model_answer_is_accepted"
                                           r"|wrong_answers_are_refused)\[08\.[12]\]$"),
    # tests/test_ider.py caches its Ider runs per process (one run serves many tests); the
    # singular-time check of tests/test_ider_status.py uses its cached refined preset runs
    "ider-runs": re.compile(r"^tests/test_ider\.py::|^tests/test_ider_status\.py::"
                            r"test_t_singular_matches_where_the_determinant_vanishes"),
    # the free-truss deployable's symbolic equations are derived once per process (module fixture)
    "symbolic-free-root": re.compile(r"^tests/test_symbolic_free_root\.py::"),
    # tests/test_symbolic_motion.py's cached systems: the deployable (and its pose function) and
    # the slides tree, fixed and on the general root motion, each derived and lambdified once
    "symbolic-motion-shared": re.compile(
        r"^tests/test_symbolic_motion\.py::test_(pose_function_against|box_outlines|deployment_|"
        r"applied_work|simulate_bad_input|setup_torques|unset_parameters|root_state_and_errors|"
        r"root_in_uniform_translation|prescribed_root_against_rnea\[slides-tree\])"),
    # tests/test_symbolic.py's cached rot3 (with gravity) and full6 systems
    "symbolic-shared-systems": re.compile(
        r"^tests/test_symbolic\.py::test_(deployable_rot3_numeric|energy_consistency_numeric|"
        r"q_order_and_names|euler_convention_matches_body_poses)$"),
}


def xdist_scope(nodeid: str) -> str:
    """The work unit a test belongs to under ``--dist loadgroup`` (one worker runs a unit).

    A notebook's nbval cells and the tests whose parameter id is that notebook's path below
    ``notebooks/`` share the unit ``notebook:<path>``, so its one execution
    (``conftest.notebook_run``) serves them all; the tests of a :data:`SHARED_UNITS` pattern share
    its unit; the real-browser tests share ``browser`` (each
    starts servers and a Chromium; two at once on two cores only slow each other); every other
    test is its own unit.

    >>> xdist_scope("notebooks/08_ider.ipynb::Cell 3")
    'notebook:08_ider.ipynb'
    >>> xdist_scope("tests/test_notebooks.py::test_executor_is_deterministic[08_ider.ipynb]")
    'notebook:08_ider.ipynb'
    >>> xdist_scope("tests/test_ider_figures.py::test_committed_csv_matches_a_fresh_run")
    'ider-figure-script'
    >>> xdist_scope("tests/test_algebra.py::test_x[3]")
    'tests/test_algebra.py::test_x[3]'
    """
    m = _CELL.match(nodeid) or _BY_NOTEBOOK.search(nodeid)
    if m:
        return "notebook:" + m.group("nb")
    for unit, pattern in SHARED_UNITS.items():
        if pattern.search(nodeid):
            return unit
    if nodeid.split("::", 1)[0].rsplit("/", 1)[-1].startswith("test_browser"):
        return "browser"
    return nodeid


#: Rough seconds of the slow work units on an idle 2-core machine (first match wins; any other
#: unit counts 0.1 s).  Only the order of the units depends on them: a stale entry costs some
#: balance at the end of the run, never a test.  ``benchmarks/bench_suite.py`` lists the
#: slowest tests of a run, to refresh them.
UNIT_SECONDS = [
    (r"^browser$", 75),                                    # the site (35 pages) and the Ider panel
    (r"^notebook:(08|09|14)_", 22),
    (r"^notebook:15_", 14),
    (r"^symbolic-free-root$", 14),
    (r"^symbolic-motion-shared$", 20),
    (r"^symbolic-shared-systems$", 6),
    (r"^notebook:", 5),
    (r"test_notebooks\.py::test_shared_execution", 14),   # a pytest -n 2 on planted notebooks
    (r"test_symbolic_figures\.py::test_figure_script", 8),
    (r"test_closed_ider\.py::test_simulation_tracks", 7),
    (r"^ider-figure-script$", 6),                        # two runs of `python -m opalg.ider`
    (r"^ider-runs$", 25),                                 # the whole of tests/test_ider.py
    (r"^exercises-08-simulations$", 5),                  # four Ider simulations, cached
    (r"test_symbolic_motion\.py::test_prescribed_root_against_rnea\[deploy\]", 8),
    (r"test_(flex|flex_exact)\.py::test_(energy_two_link|one_link_one_mode_sympy)", 3),
    (r"test_ider_panel\.py::test_panel_callbacks", 5),
    (r"test_symbolic_motion\.py::test_(random_trees_against_opalg\[3\]|prescribed_root_against)", 5),
    (r"test_symbolic\.py::test_(deployable_rot3|small_case|full6|generated_functions)", 4),
    (r"test_ider(_status|_figures)?\.py::test_(infeasible|run_past|committed_csv|animation)", 3),
    (r"test_(symbolic_motion|joints|oracle_kane|independent|symbolic)\.py::", 1.5),
    (r"test_(property|ider|ider_status|underactuated|exercises)\.py::", 0.8),
]
_UNIT_SECONDS = [(re.compile(p), t) for p, t in UNIT_SECONDS]


def unit_seconds(scope: str) -> float:
    """The expected seconds of a work unit (:data:`UNIT_SECONDS`), to hand out long ones first.

    >>> unit_seconds("browser"), unit_seconds("notebook:09_symbolic_tree_modelling.ipynb")
    (75, 22)
    >>> unit_seconds("tests/test_algebra.py::test_x[3]")
    0.1
    """
    return next((t for p, t in _UNIT_SECONDS if p.search(scope)), 0.1)
