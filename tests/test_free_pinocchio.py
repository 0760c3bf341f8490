"""Pinocchio oracle for free-floating models (docs/REFERENCE.md K9): a ``JointModelFreeFlyer``
root, q = [p; x, y, z, w] in both, v = [ω; v] (opalg) against [v; ω] (Pinocchio), both in
the body frame — converted by the twin's index maps (opalg.pinocchio_bridge).

Compared at random states (random floating trees, Solo12, Talos): ℳ, RNEA, bias, ABA, ℳ⁻¹ (compare_dynamics of the fixed-base
oracle test, with its tolerances: the measured RTOL_ID for the identities, K_SOLVE·cond(ℳ)·ε for solves), body
Jacobians in the LOCAL frame, and integrate/difference against pin.integrate/difference.
"""

from __future__ import annotations

import functools

import numpy as np
import pinocchio as pin  # the oracle is required: a missing Pinocchio must fail, never skip
import pytest

import opalg
from opalg.errors import URDFError
from opalg.pinocchio_bridge import build_pinocchio, motion_to_opalg, twin_from_urdf

from helpers import assert_close, measured, no_string_evaluated  # noqa: F401
from test_oracle_pinocchio import RTOL_ID, _pin_jac_local, compare_dynamics, robot_urdf_path

CASES = [("chain", 1, 5), ("tree", 3, 6), ("tree", 4, 8)]

#: opalg.integrate / difference against pin.integrate / difference: the SE(3) exponential and log
#: of random states (far apart: ‖q1 − q0‖ ~ ‖q‖, so difference is well conditioned).  Measured
#: (throwaway script in /tmp, not committed) by running the test at 200 random seeds under the
#: default, Sandybridge and Prescott kernels.  The LOCAL Jacobians use test_oracle_pinocchio's
#: measured RTOL_ID; on these floating models and robots they reached 2.7e-15 (these tests at 200
#: random seeds, 600 states of each kind, under the 3 kernels).
TOL_LIE = measured(1e-12, 9.6e-16, "200 random floating trees and state pairs under 3 kernels")


def _states(model, seed, count):
    """Random (q, v, a): unit quaternions reached by opalg.integrate from the neutral q."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = opalg.integrate(model, opalg.neutral(model), rng.uniform(-np.pi, np.pi, model.nv))
        yield q, rng.normal(size=model.nv), rng.normal(size=model.nv)


def _body_joint_id(model, tw, k):
    """Pinocchio id of the joint whose frame is body k's frame (the last axis of its joint)."""
    j, jn = model.joints[k], model.joint_names[k]
    return tw.model.getJointId(jn if j.ndof == 1 or j.free else f"{jn}_{j.ndof - 1}")


@pytest.mark.verifies("K9", route="ℳ, RNEA, bias, ABA, ℳ⁻¹ and LOCAL Jacobians vs Pinocchio's free flyer")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_random_floating_tree(kind, seed, n):
    model = opalg.random_model(n, kind, seed=seed, joints="all", floating=True)
    tw = build_pinocchio(model)
    assert (tw.model.nq, tw.model.nv) == (model.nq, model.nv)
    assert tw.model.joints[1].shortname() == "JointModelFreeFlyer"
    for i, (q, v, a) in enumerate(_states(model, seed, 3)):
        compare_dynamics(f"floating {kind}", model, tw, q, v, a, gravity=True, tau_seed=i)
        pin.computeJointJacobians(tw.model, tw.data, tw.q(q))
        for k in range(model.n):
            Jp = pin.getJointJacobian(tw.model, tw.data, _body_joint_id(model, tw, k), pin.ReferenceFrame.LOCAL)
            J = opalg.frame_jacobian(model, q, (k, np.zeros(3)))
            assert_close(J, motion_to_opalg(np.asarray(Jp))[:, tw.v_idx], RTOL_ID, f"LOCAL Jacobian of body {k}")


@pytest.mark.verifies("K9", route="integrate/difference vs pin.integrate/pin.difference")
def test_integrate_difference_match_pinocchio():
    """opalg.integrate/difference equal pin.integrate/difference (SE(3) exponential, q order shared)."""
    model = opalg.random_model(5, "tree", seed=2, joints="all", floating=True)
    tw = build_pinocchio(model)
    (q0, v, _), (q1, _, _) = _states(model, 5, 2)
    qp = pin.integrate(tw.model, tw.q(q0), tw.v(v))
    assert_close(opalg.integrate(model, q0, v), qp[tw.q_idx], TOL_LIE, "integrate")
    assert_close(opalg.difference(model, q0, q1), tw.from_v(pin.difference(tw.model, tw.q(q0), tw.q(q1))),
                 TOL_LIE, "difference")


@functools.lru_cache(maxsize=None)
def _floating_robot(filename):
    path = robot_urdf_path(filename)
    model = opalg.from_urdf(path, floating=True)
    with open(path, encoding="utf-8") as fh:
        tw = twin_from_urdf(model, fh.read(), floating=True)
    return model, tw


# (file, (nq, nv) with the free flyer, links whose LOCAL Jacobians are compared)
ROBOTS = {"solo12": ("solo12.urdf", (19, 18), ("FL_FOOT", "HR_FOOT")),
          "talos": ("talos_reduced.urdf", (39, 38), ("left_sole_link", "gripper_right_base_link"))}


@pytest.mark.verifies("K9", route="Solo12 and Talos on a free flyer: dynamics and LOCAL link Jacobians vs Pinocchio")
@pytest.mark.parametrize("name", list(ROBOTS))
def test_robot_floating(name):
    """Solo12 and Talos on a free-flyer root: dynamics and LOCAL link Jacobians at random states."""
    filename, sizes, links = ROBOTS[name]
    model, tw = _floating_robot(filename)
    assert model.joint_names[0] == "root_joint" and model.free_bodies == (0,)
    assert (model.nq, model.nv) == (tw.model.nq, tw.model.nv) == sizes
    for i, (q, v, a) in enumerate(_states(model, 17, 3)):
        compare_dynamics(f"{name} floating", model, tw, q, v, a, gravity=True, tau_seed=i)
        for ln in links:
            assert_close(opalg.frame_jacobian(model, q, model.link_frames[ln]),
                         _pin_jac_local(tw, tw.data, q, tw.model.getFrameId(ln)), RTOL_ID, f"{name} {ln} Jacobian")


@pytest.mark.verifies("K8", route="from_urdf refuses a floating joint below the root")
def test_urdf_floating_joint_below_root_refused():
    xml = """<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>
      <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="floating"><parent link="a"/><child link="b"/></joint></robot>"""
    with pytest.raises(URDFError, match=r"joint 'j': unsupported joint type 'floating' below the root link.*floating=True"):
        opalg.from_urdf(xml, floating=True)
