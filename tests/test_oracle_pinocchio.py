"""Pinocchio as an independent oracle for opalg's dynamics (URDF import and export routes).

The same URDF text is parsed by ``opalg.from_urdf`` and by Pinocchio's own URDF
parser; ``opalg.pinocchio_bridge.twin_from_urdf`` only maps indices (joint names
-> q/v indices, (cos, sin) of continuous joints) and never computes dynamics.
Every quantity is then compared: ℳ (crba), RNEA, the bias C(q, q̇), ABA, ℳ⁻¹,
frame Jacobians in the LOCAL frame and Λ⁻¹ = J ℳ⁻¹ Jᵀ.

Conventions handled here: Pinocchio's spatial vectors are linear first (A7), its
crba and computeMinverse fill only the upper triangle, and its q order is its own.

Tolerances (relative, Frobenius/2-norm, per state; SWEEP: 320 random states of the test's models
-- the random URDF chains and trees of 2-64 links, the export-route models, the four robots --
plus 90 states with external forces, under the default, Sandybridge and Prescott kernels):

* ``RTOL_ID`` for ℳ, RNEA, bias and Jacobians: products of at most depth <= 64 rigid transforms and
  sums of positive composite inertias, measured (was 1e-11, unmeasured), while any modelling
  difference (axis sign, a lost fixed-child inertia, a wrong inertial rotation, a frame offset)
  shows up at 1e-3 or larger.  The RNEA comparison is relative to max(|τ|, ‖ℳ‖₂|q̈|), the size of
  the terms that are summed.
* ``K_SOLVE·cond(ℳ)·ε`` for ABA, ℳ⁻¹ and Λ⁻¹ (all involve solving with ℳ), cond(ℳ) from Pinocchio's
  ℳ (the oracle side): SWEEP err ≤ 4.6 cond(ℳ)·ε (was 1e-12·cond(ℳ), i.e. K = 4500).
* ABA after RNEA with external forces: τ is rounded at the size of its terms, so the bound also
  carries 1 + S/(‖ℳ‖₂|q̈|), S the size of the summed terms (K_FEXT; SWEEP: ≤ 10.2 of it).
"""

from __future__ import annotations

import functools
import importlib.metadata

import numpy as np
import pinocchio as pin  # the oracle is required: a missing Pinocchio must fail, never skip
import pytest

import opalg
from opalg.pinocchio_bridge import motion_to_opalg, to_pinocchio, twin_from_urdf

from helpers import EPS, Tol, assert_close, cond_tol, measured
from urdf_factory import random_urdf, random_urdf_structure

SWEEP = "320 random states of the test's models (and 90 with f_ext) under 3 BLAS/SIMD kernels"
RTOL_ID = measured(1e-12, 1.8e-14, SWEEP)
#: k of k·cond(ℳ)·ε for the routes that solve with ℳ (module docstring).
K_SOLVE = 100
#: k for ABA after RNEA with external forces (module docstring).
K_FEXT = 1000
#: The verifies route of the comparisons with Pinocchio.
PIN_ROUTE = "opalg vs Pinocchio (its URDF parser, linear-first vectors converted at the boundary)"

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
PERM6 = np.array([3, 4, 5, 0, 1, 2])  # linear-first <-> angular-first within a 6-block


def _rel(a, b, scale=0.0) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    ref = max(np.linalg.norm(a), np.linalg.norm(b), scale)
    return float(np.linalg.norm(a - b) / ref) if ref > 0 else float(np.linalg.norm(a - b))


def _check(source: str, what: str, a, b, rtol: float, scale: float = 0.0) -> None:
    assert_close(np.asarray(a, float), np.asarray(b, float), rtol, f"{source} {what} vs Pinocchio", scale=scale)


def _solve_tol(cond: float) -> Tol:
    return cond_tol(cond, K_SOLVE)


def _sym_upper(A) -> np.ndarray:
    """Pinocchio's crba / computeMinverse fill the upper triangle only."""
    A = np.asarray(A)
    return np.triu(A) + np.triu(A, 1).T


def _states(model, seed: int, count: int):
    """Seeded random (q, q̇, q̈) triples; q covers full turns of every joint."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (rng.uniform(-np.pi, np.pi, model.ndof), rng.normal(size=model.ndof),
               rng.normal(size=model.ndof))


def _pin_jac_local(tw, data, q, frame_id) -> np.ndarray:
    """Pinocchio's LOCAL frame Jacobian, rows angular-first, columns in opalg's dof order."""
    Jp = pin.computeFrameJacobian(tw.model, data, tw.q(q), frame_id, pin.ReferenceFrame.LOCAL)
    return motion_to_opalg(np.asarray(Jp))[:, tw.v_idx]


def _pin_minv(tw, data, q) -> np.ndarray:
    return tw.from_vv(_sym_upper(pin.computeMinverse(tw.model, data, tw.q(q))))


def _pin_cond(tw, data, q) -> float:
    """cond(ℳ) of Pinocchio's mass matrix (sets the forward-dynamics tolerance)."""
    return float(np.linalg.cond(_sym_upper(pin.crba(tw.model, data, tw.q(q)))))


def _pin_lambda_inv(tw, data, q, frame_ids) -> np.ndarray:
    J = np.vstack([_pin_jac_local(tw, data, q, f) for f in frame_ids])
    return J @ _pin_minv(tw, data, q) @ J.T


def compare_dynamics(source: str, model, tw, q, qd, qdd, gravity: bool = True, tau_seed: int = 0) -> None:
    """crba, rnea, bias, aba and ℳ⁻¹ of opalg against Pinocchio at one state."""
    pm, data = tw.model, tw.data
    qp, vp, ap = tw.q(q), tw.v(qd), tw.v(qdd)
    Mp = tw.from_vv(_sym_upper(pin.crba(pm, data, qp)))
    M = opalg.crba(model, q)
    _check(source, "crba", M, Mp, RTOL_ID)
    normM = np.linalg.norm(Mp, 2)
    cond = np.linalg.cond(Mp)

    tau = opalg.rnea(model, q, qd, qdd, gravity=gravity)
    taup = tw.from_v(pin.rnea(pm, data, qp, vp, ap))
    _check(source, "rnea", tau, taup, RTOL_ID, scale=normM * np.linalg.norm(qdd))

    C = opalg.bias(model, q, qd, gravity=gravity)
    Cp = tw.from_v(pin.nonLinearEffects(pm, data, qp, vp))
    _check(source, "bias", C, Cp, RTOL_ID, scale=normM * np.linalg.norm(qd) ** 2)

    # An applied torque of the size of ℳ q̈, independent of the bias (no systematic cancellation).
    T = normM * np.random.default_rng(tau_seed).normal(size=model.ndof)
    qa = opalg.aba(model, q, qd, T, gravity=gravity)
    qap = tw.from_v(pin.aba(pm, data, qp, vp, tw.v(T)))
    _check(source, "aba", qa, qap, _solve_tol(cond))

    _check(source, "Minv", opalg.minv(model, q), _pin_minv(tw, data, q), _solve_tol(cond))


def _link_frame_ids(model, tw, links):
    return [tw.model.getFrameId(ln) for ln in links]


def compare_frames(source: str, model, tw, q, links, pairs=()) -> None:
    """LOCAL Jacobians of the named links, Λ⁻¹ of each link and of each pair of links."""
    data = tw.data
    cond = _pin_cond(tw, data, q)
    for ln in links:
        fid = tw.model.getFrameId(ln)
        assert tw.model.frames[fid].name == ln, f"Pinocchio has no frame {ln!r}"
        J = opalg.frame_jacobian(model, q, model.link_frames[ln])
        _check(source, "Jacobian", J, _pin_jac_local(tw, data, q, fid), RTOL_ID)
        L = opalg.lambda_inv(model, q, [model.link_frames[ln]])
        _check(source, "Lambda_inv", L, _pin_lambda_inv(tw, data, q, [fid]), _solve_tol(cond))
    for a, b in pairs:
        L = opalg.lambda_inv(model, q, [model.link_frames[a], model.link_frames[b]])
        Lp = _pin_lambda_inv(tw, data, q, _link_frame_ids(model, tw, [a, b]))
        _check(source, "Lambda_inv(2 frames)", L, Lp, _solve_tol(cond))


def _ancestors(parents, k):
    out = []
    while k != -1:
        out.append(k)
        k = parents[k]
    return out


def _moving_links(model):
    return sorted(ln for ln, (body, _, _) in model.link_frames.items() if body >= 0)


def _pick_links(model, rng, count):
    """Up to ``count`` links moved by some joint: always the deepest ones and some welded
    (fixed-joint) links with a nontrivial placement, the rest at random."""
    links = _moving_links(model)
    welded = [ln for ln in links if not np.allclose(model.link_frames[ln][2], 0)]
    depth = {ln: len(_ancestors(model.parents, model.link_frames[ln][0])) for ln in links}
    chosen = sorted(links, key=lambda ln: (-depth[ln], ln))[:2] + welded[:2]
    rest = [ln for ln in links if ln not in chosen]
    extra = rng.choice(len(rest), size=min(len(rest), max(0, count - len(chosen))), replace=False)
    return list(dict.fromkeys(chosen + [rest[i] for i in extra]))


def _branch_pair(model):
    """Two links on different branches below a common moving body (F3 case), else any
    two links on bodies neither of which is an ancestor of the other; None for chains."""
    links = _moving_links(model)
    body = {ln: model.link_frames[ln][0] for ln in links}
    best = None
    for i, a in enumerate(links):
        for b in links[i + 1:]:
            A, B = _ancestors(model.parents, body[a]), _ancestors(model.parents, body[b])
            if body[a] in B or body[b] in A:
                continue
            common = [x for x in A if x in B]
            score = (len(common) > 0, len(A) + len(B))
            if best is None or score > best[0]:
                best = (score, (a, b))
    return None if best is None else best[1]


# ---------------------------------------------------------------------------
# random URDFs (import route)
# ---------------------------------------------------------------------------
SIZES = (2, 5, 12, 30, 64)
CASES = [(topo, n, grav) for topo in ("chain", "tree") for n in SIZES for grav in (True, False)]
TILTED_G = (1.3, -2.1, -9.3)  # not the default: checks that gravity is carried over as a vector


def _n_states(n):
    return 3 if n >= 64 else 5


@functools.lru_cache(maxsize=None)
def _random_case(topo, n, grav):
    seed = 100 * n + (topo == "tree") * 7 + grav
    xml = random_urdf(n, topo, seed=seed)
    model = opalg.from_urdf(xml, gravity=TILTED_G if grav else (0.0, 0.0, -9.81))
    tw = twin_from_urdf(model, xml, gravity=grav)
    return model, tw, seed


def _case_id(c):
    return f"{c[0]}-n{c[1]}-{'g' if c[2] else 'nog'}"


def test_factory_makes_what_it_promises():
    """The random URDFs have n movable joints, fixed joints, massless links and real branches."""
    for topo in ("chain", "tree"):
        for n in (2, 12, 64):
            s = random_urdf_structure(n, topo, seed=n)
            kinds = s["kind"][1:]
            assert sum(k != "fixed" for k in kinds) == n
            model = opalg.from_urdf(s["urdf"])
            assert model.ndof == n
            if n >= 12:
                assert "fixed" in kinds and any(s["massless"])
                assert {"revolute", "continuous", "prismatic"} <= set(kinds)
            children = [sum(p == k for p in model.parents) for k in range(model.n)]
            if topo == "chain":
                assert max(children) <= 1
            elif n >= 3:
                assert max(children) >= 2, "tree does not branch below a moving body"
            else:
                assert model.parents.count(-1) == 2
    # massless links are never leaves
    s = random_urdf_structure(30, "tree", seed=3, massless_fraction=0.5)
    for k, ml in enumerate(s["massless"]):
        if ml:
            assert k in s["parent"][1:]


@pytest.mark.verifies("A7", route=PIN_ROUTE + ": crba, rnea, bias, aba, ℳ⁻¹")
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_dynamics_random_urdf(case):
    """crba, rnea, bias, aba and ℳ⁻¹ agree with Pinocchio on random URDF chains and trees."""
    topo, n, grav = case
    model, tw, seed = _random_case(*case)
    assert model.ndof == tw.model.nv == n
    for i, (q, qd, qdd) in enumerate(_states(model, seed, _n_states(n))):
        compare_dynamics(f"random {topo}", model, tw, q, qd, qdd, gravity=grav, tau_seed=seed + i)


@pytest.mark.verifies("A7", route=PIN_ROUTE + ": LOCAL Jacobians, Λ⁻¹")
@pytest.mark.parametrize("case", [c for c in CASES if c[2]], ids=_case_id)
def test_frames_random_urdf(case):
    """LOCAL link-frame Jacobians and Λ⁻¹ (one frame, two frames on different branches) agree."""
    topo, n, _ = case
    model, tw, seed = _random_case(*case)
    rng = np.random.default_rng(seed)
    links = _pick_links(model, rng, 6)
    pair = _branch_pair(model)
    if topo == "tree":
        assert pair is not None
    pairs = [pair] if pair else [tuple(links[:2])]
    for q, _, _ in _states(model, seed + 1, _n_states(n) - 1):
        compare_frames(f"random {topo}", model, tw, q, links, pairs)


@pytest.mark.verifies("A7", route=PIN_ROUTE + ": the unconverted linear-first Jacobian must differ")
def test_frame_jacobian_differs_from_wrong_conventions():
    """Sanity of the comparison itself: the raw linear-first Jacobian does not match opalg's."""
    model, tw, seed = _random_case("tree", 12, True)
    q = np.random.default_rng(0).uniform(-np.pi, np.pi, model.ndof)
    ln = _pick_links(model, np.random.default_rng(0), 1)[0]
    fid = tw.model.getFrameId(ln)
    Jraw = np.asarray(pin.computeFrameJacobian(tw.model, tw.data, tw.q(q), fid,
                                               pin.ReferenceFrame.LOCAL))[:, tw.v_idx]
    J = opalg.frame_jacobian(model, q, model.link_frames[ln])
    assert_close(J, motion_to_opalg(Jraw), RTOL_ID, "LOCAL Jacobian vs Pinocchio's, converted")
    assert _rel(J, Jraw) > 1e-3                                    # not round-off: a wrong convention


# ---------------------------------------------------------------------------
# export route: opalg.random_model -> to_urdf -> Pinocchio
# ---------------------------------------------------------------------------
EXPORT = [("chain", 2, "single", 1), ("tree", 7, "single", 1), ("tree", 20, "single", 2),
          ("chain", 6, "mixed", 1), ("tree", 12, "mixed", 1), ("tree", 25, "mixed", 2)]


def _random_frame(rng):
    from opalg.model.builders import random_rotation
    return random_rotation(rng), rng.uniform(-0.5, 0.5, size=3)


def _add_pin_frame(tw, model, body, R, p, name):
    """An operational frame on the Pinocchio joint that moves opalg body ``body``."""
    j = model.joints[body]
    jn = j.name or f"joint{body}"
    jname = jn if j.ndof == 1 else f"{jn}_{j.ndof - 1}"  # the last axis carries the body
    jid = tw.model.getJointId(jname)
    fid = tw.model.addFrame(pin.Frame(name, jid, pin.SE3(R, p), pin.FrameType.OP_FRAME))
    tw.data = tw.model.createData()
    return fid


@pytest.mark.verifies("A7", route=PIN_ROUTE + ": the export route, dynamics, frame Jacobians, Λ⁻¹")
@pytest.mark.parametrize("continuous", [False, True], ids=["revolute", "continuous"])
@pytest.mark.parametrize("spec", EXPORT, ids=lambda s: f"{s[0]}-n{s[1]}-{s[2]}-roots{s[3]}")
def test_export_route(spec, continuous):
    """to_pinocchio(random_model(...)): dynamics, an added pin.Frame's Jacobian and Λ⁻¹ agree."""
    topo, n, joints, roots = spec
    kw = {"n_roots": roots} if topo == "tree" else {}
    seed = 7 * n + roots
    model = opalg.random_model(n, topo, seed=seed, joints=joints, **kw)
    while joints == "mixed" and model.ndof == model.n:  # want at least one multi-axis joint
        seed += 1
        model = opalg.random_model(n, topo, seed=seed, joints=joints, **kw)
    tw = to_pinocchio(model, continuous=continuous)
    assert tw.model.nv == model.ndof
    if joints == "mixed":
        assert model.ndof > model.n, "the mixed model has no multi-axis joint"
    assert bool(np.any(tw.continuous)) == continuous
    rng = np.random.default_rng(seed)
    bodies = [int(b) for b in rng.choice(model.n, size=min(3, model.n), replace=False)]
    frames = []
    for i, b in enumerate(bodies):
        R, p = _random_frame(rng)
        frames.append(((b, R, p), _add_pin_frame(tw, model, b, R, p, f"test_frame_{i}")))
    for i, (q, qd, qdd) in enumerate(_states(model, seed, 3)):
        compare_dynamics(f"export {joints}", model, tw, q, qd, qdd, tau_seed=seed + i)
        cond = _pin_cond(tw, tw.data, q)
        for fr, fid in frames:
            _check(f"export {joints}", "Jacobian", opalg.frame_jacobian(model, q, fr),
                   _pin_jac_local(tw, tw.data, q, fid), RTOL_ID)
        L = opalg.lambda_inv(model, q, [fr for fr, _ in frames])
        Lp = _pin_lambda_inv(tw, tw.data, q, [fid for _, fid in frames])
        _check(f"export {joints}", "Lambda_inv(2 frames)", L, Lp, _solve_tol(cond))


# ---------------------------------------------------------------------------
# real robots from example-robot-data
# ---------------------------------------------------------------------------
def robot_urdf_path(filename: str) -> str:
    """Path of a URDF file shipped by the example-robot-data distribution."""
    try:
        files = importlib.metadata.files("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("the oracle tests need the 'example-robot-data' distribution "
                    "(pip install 'opalg[oracle]')")
    hits = [f for f in (files or []) if f.name == filename]
    if not hits:
        pytest.fail(f"example-robot-data ships no file named {filename!r}")
    path = hits[0].locate()
    if not path.is_file():
        pytest.fail(f"example-robot-data lists {filename!r} but {path} does not exist")
    return str(path)


# (file, end-effector link(s); two links on different branches for Λ⁻¹ where the robot branches)
ROBOTS = {
    "panda": ("panda.urdf", ["panda_hand", "panda_link8"], ("panda_leftfinger", "panda_rightfinger")),
    "ur5": ("ur5_robot.urdf", ["tool0", "ee_link"], None),
    "solo12": ("solo12.urdf", ["FL_FOOT", "HR_FOOT"], ("FL_FOOT", "HR_FOOT")),
    "talos": ("talos_reduced.urdf", ["gripper_left_base_link", "left_sole_link"],
              ("gripper_left_base_link", "gripper_right_base_link")),
}


@functools.lru_cache(maxsize=None)
def _robot(name):
    path = robot_urdf_path(ROBOTS[name][0])
    model = opalg.from_urdf(path)
    with open(path, encoding="utf-8") as fh:
        tw = twin_from_urdf(model, fh.read())
    return model, tw


@pytest.mark.verifies("A7", route=PIN_ROUTE + ": Panda, UR5, Solo12, Talos dynamics")
@pytest.mark.parametrize("name", list(ROBOTS))
def test_real_robot_dynamics(name):
    """Panda, UR5, Solo12, Talos: crba, rnea, bias, aba and ℳ⁻¹ at 5 random states (gravity on)."""
    model, tw = _robot(name)
    assert model.ndof == tw.model.nv
    assert np.allclose(np.asarray(tw.model.gravity.linear), [0, 0, -9.81])     # a setting, not round-off
    for i, (q, qd, qdd) in enumerate(_states(model, 11, 5)):
        compare_dynamics(name, model, tw, q, qd, qdd, gravity=True, tau_seed=i)


@pytest.mark.verifies("A7", route=PIN_ROUTE + ": Panda, UR5, Solo12, Talos Jacobians and Λ⁻¹")
@pytest.mark.parametrize("name", list(ROBOTS))
def test_real_robot_frames(name):
    """End-effector LOCAL Jacobians and Λ⁻¹ (two branches where the robot branches) agree."""
    model, tw = _robot(name)
    _, links, pair = ROBOTS[name]
    for ln in links + list(pair or ()):
        assert ln in model.link_frames, f"{name} has no link {ln!r}"
        assert model.link_frames[ln][0] >= 0
    if pair:
        A = _ancestors(model.parents, model.link_frames[pair[0]][0])
        B = _ancestors(model.parents, model.link_frames[pair[1]][0])
        assert A[0] not in B and B[0] not in A, f"{pair} are not on different branches"
    for q, _, _ in _states(model, 12, 2):
        compare_frames(name, model, tw, q, links, [pair] if pair else [])


@pytest.mark.verifies("A7", route=PIN_ROUTE + ": from_urdf(locked=...) vs buildReducedModel")
def test_locked_joints_match_pinocchio_reduced_model():
    """from_urdf(locked=...) (the 7-dof Panda arm) equals Pinocchio's buildReducedModel."""
    path = robot_urdf_path("panda.urdf")
    fingers = ("panda_finger_joint1", "panda_finger_joint2")
    model = opalg.from_urdf(path, locked=fingers)
    assert model.ndof == 7 and not set(fingers) & set(model.joint_names)
    full = pin.buildModelFromUrdf(path)
    reduced = pin.buildReducedModel(full, [full.getJointId(j) for j in fingers], pin.neutral(full))
    reduced.gravity.linear = np.array([0.0, 0.0, -9.81])
    tw = opalg.pinocchio_bridge.twin_from_pin(model, reduced)
    for i, (q, qd, qdd) in enumerate(_states(model, 13, 3)):
        compare_dynamics("panda-7dof", model, tw, q, qd, qdd, gravity=True, tau_seed=i)
    # The welded fingers keep their mass: the subtree of the first joint weighs the same.
    free = opalg.from_urdf(path)
    m_locked = opalg.composite_inertias(model, np.zeros(7))[0][0][5, 5]
    m_free = opalg.composite_inertias(free, np.zeros(9))[0][0][5, 5]
    # sums of the same positive masses grouped differently: cond 1, at most ~n roundings each
    # (was 1e-12; the two were equal here under 3 kernels)
    assert_close(m_locked, m_free, cond_tol(1.0, 4 * free.n, "a sum of positive masses"), "subtree mass")


def test_real_robot_topology():
    """The robots have the expected numbers of joints and Talos/Solo12 really branch."""
    expected = {"panda": 9, "ur5": 6, "solo12": 12, "talos": 32}
    for name, nd in expected.items():
        model, tw = _robot(name)
        assert model.ndof == nd == tw.model.nv
        assert set(model.joint_names) == {tw.model.names[i] for i in range(1, tw.model.njoints)}
    for name in ("solo12", "talos"):
        model, _ = _robot(name)
        assert max(sum(p == k for p in model.parents) for k in range(-1, model.n)) >= 2


# ---------------------------------------------------------------------------
# batched calls
# ---------------------------------------------------------------------------
@pytest.mark.verifies("A7", route=PIN_ROUTE + ": batched opalg calls vs Pinocchio state by state")
def test_batched_calls_match_pinocchio_loop():
    """opalg calls on (B, N) state stacks agree with Pinocchio called state by state."""
    model, tw, seed = _random_case("tree", 12, True)
    B = 5
    rng = np.random.default_rng(42)
    Q = rng.uniform(-np.pi, np.pi, (B, model.ndof))
    QD, QDD, T = rng.normal(size=(3, B, model.ndof))
    links = _pick_links(model, rng, 2)
    pair = _branch_pair(model)
    frames = [model.link_frames[ln] for ln in pair]
    fids = _link_frame_ids(model, tw, pair)
    out = {
        "crba": opalg.crba(model, Q), "rnea": opalg.rnea(model, Q, QD, QDD),
        "bias": opalg.bias(model, Q, QD), "aba": opalg.aba(model, Q, QD, T),
        "Minv": opalg.minv(model, Q), "Jacobian": opalg.frame_jacobian(model, Q, model.link_frames[links[0]]),
        "Lambda_inv(2 frames)": opalg.lambda_inv(model, Q, frames),
    }
    N = model.ndof
    shapes = {"crba": (B, N, N), "rnea": (B, N), "bias": (B, N), "aba": (B, N), "Minv": (B, N, N),
              "Jacobian": (B, 6, N), "Lambda_inv(2 frames)": (B, 12, 12)}
    for k, s in shapes.items():
        assert out[k].shape == s, k
    pm, data = tw.model, tw.data
    fid0 = pm.getFrameId(links[0])
    for b in range(B):
        q, qd, qdd, t = Q[b], QD[b], QDD[b], T[b]
        qp = tw.q(q)
        cond = _pin_cond(tw, data, q)
        ref = {
            "crba": tw.from_vv(_sym_upper(pin.crba(pm, data, qp))),
            "rnea": tw.from_v(pin.rnea(pm, data, qp, tw.v(qd), tw.v(qdd))),
            "bias": tw.from_v(pin.nonLinearEffects(pm, data, qp, tw.v(qd))),
            "aba": tw.from_v(pin.aba(pm, data, qp, tw.v(qd), tw.v(t))),
            "Minv": _pin_minv(tw, data, q),
            "Jacobian": _pin_jac_local(tw, data, q, fid0),
            "Lambda_inv(2 frames)": _pin_lambda_inv(tw, data, q, fids),
        }
        for k, r in ref.items():
            rtol = _solve_tol(cond) if k in ("aba", "Minv", "Lambda_inv(2 frames)") else RTOL_ID
            _check("batch", k, out[k][b], r, rtol)


# ---------------------------------------------------------------------------
# external forces (docs/REFERENCE.md C9) against Pinocchio's fext overloads
# ---------------------------------------------------------------------------
def _pin_fext(model, tw, f_ext):
    """opalg f_ext (n, 6), angular first about body k's origin in body-k coordinates ->
    Pinocchio's per-joint forces in the LOCAL frame of the joint carrying each body (linear first
    inside pin.Force).  The last axis of a multi-axis joint carries the body (see to_urdf)."""
    forces = [pin.Force.Zero() for _ in range(tw.model.njoints)]
    for k, j in enumerate(model.joints):
        jn = j.name or f"joint{k}"
        jid = tw.model.getJointId(jn if j.ndof == 1 else f"{jn}_{j.ndof - 1}")
        forces[jid] = pin.Force(np.asarray(f_ext[k, 3:]), np.asarray(f_ext[k, :3]))
    return pin.StdVec_Force(forces) if hasattr(pin, "StdVec_Force") else forces


@pytest.mark.verifies("A7", "C9", route=PIN_ROUTE + ": rnea and aba with f_ext vs pin.rnea/pin.aba with fext")
@pytest.mark.parametrize("spec", [("chain", 6, "mixed", 1), ("tree", 12, "mixed", 1),
                                  ("tree", 9, "single", 2)],
                         ids=lambda s: f"{s[0]}-n{s[1]}-{s[2]}")
def test_fext_against_pinocchio(spec):
    """rnea(..., f_ext) and aba(..., f_ext) equal pin.rnea/pin.aba with fext (LOCAL joint frames).

    Tolerances: RTOL_ID relative to the summed terms for RNEA; for ABA (after RNEA, so τ carries the
    rounding of its terms) K_FEXT·cond(ℳ)·ε·(1 + S/(‖ℳ‖₂|q̈|)), S that size."""
    topo, n, joints, roots = spec
    kw = {"n_roots": roots} if topo == "tree" else {}
    model = opalg.random_model(n, topo, seed=3 * n, joints=joints, **kw)
    tw = to_pinocchio(model)
    rng = np.random.default_rng(n)
    for q, qd, qdd in _states(model, 5 * n, 3):
        f = rng.normal(size=(model.n, 6)) * 5.0
        fx = _pin_fext(model, tw, f)
        tau = opalg.rnea(model, q, qd, qdd, f_ext=f)
        tau_p = tw.from_v(pin.rnea(tw.model, tw.data, tw.q(q), tw.v(qd), tw.v(qdd), fx))
        Mq = opalg.crba(model, q)
        scale = max(np.linalg.norm(tau), np.linalg.norm(Mq, 2) * np.linalg.norm(qdd),
                    np.linalg.norm(f))
        _check("fext", "rnea", tau, tau_p, RTOL_ID, scale)
        # with f_ext = 0 the two differ: the comparison sees the forces
        assert _rel(opalg.rnea(model, q, qd, qdd), tau_p) > 1e-6      # not round-off: f_ext is seen
        qdd_p = tw.from_v(pin.aba(tw.model, tw.data, tw.q(q), tw.v(qd), tw.v(tau), fx))
        cond, amp = np.linalg.cond(Mq), 1 + scale / (np.linalg.norm(Mq, 2) * np.linalg.norm(qdd_p))
        tol = Tol(K_FEXT * cond * amp * EPS, f"{K_FEXT}·cond(ℳ)·ε·(1 + S/‖ℳ‖|q̈|), cond = {cond:.1e}, "
                  f"size factor {amp:.1f}")
        _check("fext", "aba", opalg.aba(model, q, qd, tau, f_ext=f), qdd_p, tol)
