"""opalg.simulate.Trajectory: splitting a Solution, extras as attributes, sampling, plotting."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from matplotlib.figure import Figure

from opalg.errors import StateError
from opalg.simulate import Event, Trajectory, integrate

from helpers import EPS, Tol


def oscillator(t, y):
    return np.array([y[1], -y[0]])


def line(status="completed", message="reached t = 1 (end of t_span)", **extras):
    """q = (1 + 2t, −t), v = (2, −1) at 5 uneven times: linear interpolation reproduces it."""
    t = np.array([0.0, 0.1, 0.35, 0.7, 1.0])
    q = np.c_[1 + 2 * t, -t]
    v = np.tile([2.0, -1.0], (len(t), 1))
    return Trajectory(t, q, v, status, message, float(t[-1]), extras)


def test_from_solution_splits_the_state():
    sol = integrate(lambda t, y: np.r_[y[2:4], -y[:2], 0.0], [1.0, 0.0, 0.0, 1.0, 5.0], (0.0, 1.0))
    traj = Trajectory.from_solution(sol, nq=2, nv=2, energy=np.ones(len(sol.t)))
    assert traj.q.shape == traj.v.shape == (len(sol.t), 2) and traj.ok and traj.event is None
    assert np.array_equal(traj.q, sol.y[:, :2]) and np.array_equal(traj.v, sol.y[:, 2:4])
    assert traj.t_stop == sol.t_stop and traj.message == sol.message and "t_events" not in traj.extras
    rest = Trajectory.from_solution(sol, nq=2)                      # nv defaults to the rest
    assert rest.v.shape[1] == 3
    for nq, nv in ((6, None), (2, 4), (-1, 2), (2.0, 2), (True, 2)):
        with pytest.raises(StateError, match="nq"):
            Trajectory.from_solution(sol, nq=nq, nv=nv)


def test_from_solution_carries_the_event():
    ev = Event(lambda t, y: y[0], direction=-1, name="zero")
    sol = integrate(oscillator, [1.0, 0.0], (0.0, 3.0), events=ev)
    traj = Trajectory.from_solution(sol, nq=1)
    assert traj.status == "event" and traj.event == "zero" and not traj.ok
    assert traj.t_events["zero"].tolist() == [sol.t_stop] and traj.t[-1] == traj.t_stop


def test_extras_are_attributes_and_survive_copy_and_pickle():
    traj = line(energy=np.arange(5.0), nu=np.zeros((5, 2)))
    assert traj.energy is traj.extras["energy"] and traj.nu.shape == (5, 2)
    with pytest.raises(AttributeError, match=r"'momentum'.*\['energy', 'nu'\]"):
        traj.momentum
    for other in (copy.copy(traj), copy.deepcopy(traj), pickle.loads(pickle.dumps(traj))):
        assert other.energy.tolist() == traj.energy.tolist() and other.status == traj.status
        assert other.q.tolist() == traj.q.tolist()


@pytest.mark.parametrize("name", ["q", "t", "ok", "sample", "extras", "__len__"])
def test_extras_may_not_hide_attributes(name):
    with pytest.raises(StateError, match="hidden"):
        line(**{name: 1.0})


@pytest.mark.parametrize("kwargs, match", [
    ({"status": "done"}, "status"), ({"q": np.zeros((4, 2))}, "shapes"), ({"t": np.zeros((5, 1))}, "shapes"),
    ({"v": np.zeros(5)}, "shapes"),
])
def test_checks_its_fields(kwargs, match):
    base = line()
    fields = {"t": base.t, "q": base.q, "v": base.v, "status": "completed", "message": "", "t_stop": 1.0}
    with pytest.raises(StateError, match=match):
        Trajectory(**{**fields, **kwargs})


def test_sample_interpolates_linearly():
    traj = line()
    # rounding only: (1 − w)a + w·b of O(1) numbers, a few ε (8ε allowed)
    tol = Tol(8 * EPS * 3, "(1 − w)a + w·b rounding, |q| ≤ 3")
    for s in (0.0, 0.05, 0.35, 0.5, 0.99, 1.0):
        q, v = traj.sample(s)
        assert np.abs(q - [1 + 2 * s, -s]).max() <= tol and np.abs(v - [2.0, -1.0]).max() <= tol
    q, v = traj.sample(np.array([0.2, 0.8]))
    assert q.shape == v.shape == (2, 2) and np.abs(q[:, 0] - [1.4, 2.6]).max() <= tol
    for s in (-1e-9, 1.0 + 1e-9, np.nan):
        with pytest.raises(StateError, match="outside"):
            traj.sample(s)
    single = Trajectory([0.5], [[1.0]], [[2.0]], "failed", "failed at t = 0.5: x", 0.5)
    assert [a.tolist() for a in single.sample(0.5)] == [[1.0], [2.0]]
    empty = Trajectory(np.zeros(0), np.zeros((0, 1)), np.zeros((0, 1)), "failed", "", 0.0)
    with pytest.raises(StateError, match="no samples"):
        empty.sample(0.0)


def test_sample_of_a_simulation_is_within_the_interpolation_error():
    """cos t sampled at 101 points: linear interpolation errs by at most h²/8·max|q̈| = h²/8."""
    te = np.linspace(0.0, 2.0, 101)
    traj = Trajectory.from_solution(integrate(oscillator, [1.0, 0.0], (0.0, 2.0), t_eval=te), nq=1)
    s = np.linspace(0.0, 2.0, 997)
    q, v = traj.sample(s)
    h = te[1] - te[0]
    tol = Tol(h ** 2 / 8 + 1e-8, "h²/8·max|q̈| (linear interpolation) + the run's error (rtol 1e-10)")
    assert np.abs(q[:, 0] - np.cos(s)).max() <= tol and np.abs(v[:, 0] + np.sin(s)).max() <= tol
    # and it can fail: the interpolation error between samples is not far below the bound
    assert np.abs(q[:, 0] - np.cos(s)).max() > tol / 10


def test_plot_marks_a_run_that_stopped():
    failed = line("failed", "failed at t = 1: rhs raised RuntimeError: " + "x" * 100, energy=np.arange(5.0))
    ax = failed.plot("q", ax=Figure().subplots(), labels=["a", "b"])
    assert len(ax.lines) == 3 and ax.lines[-1].get_xdata()[0] == failed.t_stop
    assert ax.get_title().startswith("failed: failed at t = 1") and ax.get_title().endswith("…")
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == ["a", "b"]
    done = line()
    ax = done.plot("v", ax=Figure().subplots())
    assert len(ax.lines) == 2 and ax.get_title() == "completed: reached t = 1 (end of t_span)"
    ax = failed.plot("energy", ax=Figure().subplots())
    assert ax.lines[0].get_ydata().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(StateError, match="which"):
        done.plot("momentum", ax=Figure().subplots())
    with pytest.raises(StateError, match="labels"):
        done.plot("q", ax=Figure().subplots(), labels=["only one"])


def test_plot_makes_its_own_axes():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = line().plot()
    try:
        assert len(ax.lines) == 2
    finally:
        plt.close(ax.figure)


def _drawn(traj, **kw):
    """Run the animation's frames (to_jshtml draws each once) and return the (q, t) drawn, the title."""
    fig = Figure(figsize=(1.0, 1.0), dpi=20)
    ax = fig.subplots()
    (dot,) = ax.plot([], [], "o")
    seen = []

    def draw(q, t):
        seen.append((q.copy(), t))
        dot.set_data([q[0]], [q[1]])
        return [dot]
    anim = traj.animate(draw, fig=fig, **kw)
    anim.to_jshtml()
    return anim, seen, ax.title.get_text()


def test_animate_draws_the_chosen_samples_in_time_order():
    t = np.linspace(0.0, 2.0, 101)
    traj = Trajectory(t, np.c_[np.cos(t), np.sin(t)], np.c_[-np.sin(t), np.cos(t)], "completed", "done", 2.0)
    anim, seen, title = _drawn(traj, title="t = {t:.2f} s")
    idx = list(anim.new_frame_seq())
    assert len(idx) == 40 and idx[0] == 0 and idx[-1] == 100 and idx == sorted(set(idx))   # the cap of 40
    # matplotlib may draw the first frame once more to set up; the frames drawn are the samples chosen
    drawn_t = [s[1] for s in seen]
    assert set(drawn_t) == {t[i] for i in idx} and drawn_t[-1] == 2.0
    for q, tt in seen:
        assert np.array_equal(q, [np.cos(tt), np.sin(tt)])
    assert title == "t = 2.00 s"
    anim, seen, _ = _drawn(traj, frames=[3, 7])
    assert list(anim.new_frame_seq()) == [3, 7] and seen[-1][1] == t[7]


def test_animate_says_on_the_last_frame_that_a_run_stopped():
    _, seen, title = _drawn(line("failed", "failed at t = 1: fault"), frames=2, title="t = {t:.1f} s")
    assert title == "t = 1.0 s (failed at t_stop = 1)"
    assert len(line().t) == 5 and _drawn(line(), title="{t}")[2] == "1.0"      # all 5 samples, no status


@pytest.mark.parametrize("kw, match", [({"frames": 0}, "frames must be >= 1"), ({"frames": [0, 9]}, r"indices in \[0, 5\)"),
                                       ({"frames": [0.5]}, "indices"), ({"frames": []}, "indices")])
def test_animate_refuses_bad_frames(kw, match):
    with pytest.raises(StateError, match=match):
        line().animate(lambda q, t: [], fig=Figure(), **kw)
    with pytest.raises(StateError, match="draw must be callable"):
        line().animate("draw", fig=Figure())
