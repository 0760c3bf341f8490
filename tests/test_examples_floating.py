"""opalg.floating.examples: the satellite with an arm of notebook 15, and its drawing.

The arm's points and the box's corners are checked against poses composed by hand from rotation
matrices (no opalg transforms); the model's mass properties against the cube and rod formulas;
bad arguments against ModelError.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import opalg  # noqa: E402
from opalg.floating.examples import (
    arm_points, box_corners, draw_satellite, satellite_with_arm, update_satellite)
from opalg.spatial.quaternion import rotation  # noqa: E402

from helpers import assert_close, measured  # noqa: E402

#: Positions of order 3 m composed from a few 3x3 products, against the same poses composed by hand
#: (absolute, in metres): worst 4.4e-15 over 1,000 random states (throwaway script in /tmp, not
#: committed) under the default, Sandybridge and Prescott kernels.
ATOL_POINTS = measured(1e-12, 4.4e-15, "1,000 random states of the satellite under 3 kernels")
#: ℳ_bb's translational block against m_tot I₃ = 410 I₃, relative: sums of entries ~400 over five
#: bodies through the composite-inertia transforms.  An absolute 1e-12 kg had only 2.5x margin
#: (4.0e-13 kg seen: a few ulps of 410), so relative: worst 8.0e-16.
RTOL_MASS = measured(1e-13, 8.0e-16, "1,000 random states of the test's satellite under 3 kernels")


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1.0, 0], [-s, 0, c]])


def _random_state(sat, seed):
    rng = np.random.default_rng(seed)
    return opalg.integrate(sat, opalg.neutral(sat), rng.normal(size=sat.nv))


def _points_by_hand(q):
    # mount, shoulder, elbow, wrist, tool of the default satellite, from rotation matrices
    Rb, pb = rotation(q[3:7]), q[:3]
    yaw, th2, th3, th4 = q[7:]
    mount = np.array([0.35, 0, 0.75])
    shoulder = mount + [0, 0, 0.25]
    elbow = shoulder + _rz(yaw) @ _ry(th2) @ [1.2, 0, 0]
    wrist = elbow + _rz(yaw) @ _ry(th2 + th3) @ [1.0, 0, 0]
    tool = wrist + _rz(yaw) @ _ry(th2 + th3 + th4) @ [0.4, 0, 0]
    return pb + np.array([mount, shoulder, elbow, wrist, tool]) @ Rb.T


def test_arm_points_and_box_against_poses_by_hand():
    sat = satellite_with_arm()
    for seed in range(4):
        q = _random_state(sat, seed)
        # positions of order 3 m from a few 3x3 products: round-off ~1e-15 relative
        np.testing.assert_allclose(arm_points(sat, q), _points_by_hand(q), rtol=0, atol=ATOL_POINTS)
        Rb = rotation(q[3:7])
        corners = box_corners(sat, q)
        np.testing.assert_allclose(corners[7], q[:3] + Rb @ [0.75, 0.75, 0.75], rtol=0, atol=ATOL_POINTS)
        np.testing.assert_allclose(corners.mean(axis=0), q[:3], rtol=0, atol=ATOL_POINTS)


def test_mass_properties():
    sat = satellite_with_arm(base_mass=400.0, side=2.0, link_masses=(1, 2, 3, 4), link_lengths=(0.1, 1, 2, 0.5))
    assert sat.nq == 11 and sat.nv == 10 and sat.free_bodies == (0,)
    assert np.allclose(sat.gravity, 0.0)
    np.testing.assert_allclose(sat.inertias[0].I_com, 400.0 * 4.0 / 6.0 * np.eye(3))
    # the forearm: a 3 kg rod of 2 m along x, mass centre at 1 m, transverse inertia m L²/12 = 1
    np.testing.assert_allclose(sat.inertias[3].com, [1.0, 0, 0])
    np.testing.assert_allclose(np.diag(sat.inertias[3].I_com)[1:], [1.0, 1.0])
    # ℳ_bb is the composite inertia of the whole system: its translational block is m_tot I_3
    M = opalg.crba(sat, _random_state(sat, 9))
    assert_close(M[3:6, 3:6], 410.0 * np.eye(3), RTOL_MASS, "translational block of ℳ_bb = m_tot I₃")


def test_drawing_follows_the_configuration():
    sat = satellite_with_arm()
    fig, ax = plt.subplots()
    try:
        lines = draw_satellite(ax, sat, opalg.neutral(sat))
        assert len(lines) == 13
        q = _random_state(sat, 3)
        update_satellite(lines, sat, q)
        P = _points_by_hand(q)
        np.testing.assert_allclose(lines[-1].get_xdata(), P[:, 0], rtol=0, atol=ATOL_POINTS)
        np.testing.assert_allclose(lines[-1].get_ydata(), P[:, 2], rtol=0, atol=ATOL_POINTS)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("kw, word", [({"link_masses": (1, 2, 3)}, "4 entries"),
                                      ({"link_lengths": (1, 2, -3, 1)}, "link_lengths"),
                                      ({"base_mass": 0.0}, "base_mass"),
                                      ({"side": float("nan")}, "side")])
def test_bad_arguments_are_model_errors(kw, word):
    with pytest.raises(opalg.ModelError, match=word):
        satellite_with_arm(**kw)
