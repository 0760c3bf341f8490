"""Every topic's ``simulate`` takes the seam's budgets and reports a run over budget the same way.

One run per simulator, each cut by ``max_steps=3``: the result is a :class:`Trajectory` with status
"failed", a message naming the step budget, ``t_stop`` short of t1, the samples reached kept (the
first one is the initial state given), and ``ok`` false.  A wall-clock budget of 1e-9 s ends
every run after its first step for the same reason.  Nothing here is a tolerance: the checks
compare the initial state given with the one returned, which the seam copies unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import closed, floating, ider, quasi, underactuated
from opalg.closed.ider_link import simulate as ider_link_simulate, two_arms_box
from opalg.simulate import Trajectory
from opalg.symbolic import Body, Hinge, TreeSystem


def _symbolic():
    system = TreeSystem([0, 1], [Hinge(1), Hinge(1, offset=(1, 0, 0))],
                        [Body(2.0, (0.5, 0, 0), np.diag([0.01, 0.2, 0.2])),
                         Body(1.0, (0.4, 0, 0), np.diag([0.01, 0.1, 0.1]))], gravity=(0, -9.81, 0))
    q0 = np.array([0.3, -0.4])
    return (lambda **b: system.simulate(q0, np.array([0.0, 1.0]), (0.0, 1.0), **b)), q0


def _cases():
    """(name, run(**budget) over t_span (0, 1) or shorter, the q0 given or None)."""
    m = opalg.random_model(3, seed=7, joints="revolute")
    q0, v0 = np.array([0.2, -0.1, 0.4]), np.array([0.5, 0.0, -0.5])
    yield "quasi", (lambda **b: quasi.simulate(m, q0, quasi.nu(m, q0, v0), (0.0, 1.0), **b)), q0
    fb = opalg.random_model(3, seed=7, joints="single", floating=True)
    fq0 = opalg.neutral(fb)
    yield "floating", (lambda **b: floating.simulate(fb, fq0, np.full(fb.nv, 0.3), (0.0, 1.0), **b)), fq0
    na = fb.nv - 6
    path = lambda t: (np.full(na, np.sin(t)), np.full(na, np.cos(t)))          # noqa: E731
    yield "floating.base_reaction", (lambda **b: floating.base_reaction(
        fb, fq0, path, np.linspace(0.0, 1.0, 11), **b)), None
    four, fq = closed.four_bar()
    yield "closed", (lambda **b: closed.simulate(four, fq, np.zeros(3), (0.0, 1.0), **b)), fq
    acro, passive = underactuated.acrobot()
    a0 = np.array([-1.5, 0.0])
    yield "underactuated", (lambda **b: underactuated.simulate(
        acro, passive, lambda t, q, v: np.zeros(1), a0, np.zeros(2), (0.0, 1.0), **b)), a0
    yield "ider", (lambda **b: ider.simulate(None, **b)), None
    task = two_arms_box((3, 4))
    yield "closed.ider_link", (lambda **b: ider_link_simulate(task, (0, 3), t_span=(0.0, 1.0), **b)), None
    yield "symbolic", *_symbolic()


CASES = list(_cases())


@pytest.mark.parametrize("name, run, q0", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("budget, words", [({"max_steps": 3}, "step budget of 3 steps exhausted"),
                                           ({"wall_time": 1e-9}, "wall-clock budget of 1e-09 s exhausted")])
def test_a_run_over_budget_is_failed_and_keeps_its_steps(name, run, q0, budget, words):
    traj = run(**budget)
    assert isinstance(traj, Trajectory)
    assert traj.status == "failed" and not traj.ok, traj.message
    assert words in traj.message, traj.message
    assert len(traj.t) >= 1 and traj.t_stop < 1.0
    if q0 is not None:
        assert np.array_equal(traj.q[0], q0)
