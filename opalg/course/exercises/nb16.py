"""Exercises of notebook 16 (a real robot: the Franka Panda).  Model answers: docs/solutions/16_real_robot_panda.md.

The Panda's URDF comes from the ``example-robot-data`` distribution (the ``oracle`` extra), found
through its installed file list, as the notebook and ``tests/test_oracle_pinocchio.py`` do.
"""

from __future__ import annotations

import functools

import numpy as np

from opalg.course.exercises import Exercise, _StudentError, choice, close_arrays, function, integer, number

FINGERS = ("panda_finger_joint1", "panda_finger_joint2")
#: The Panda's "ready" configuration of its 7 arm joints (rad), as in the notebook.
Q_READY = np.array([0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4])


def panda_urdf_path() -> str:
    """Path of ``panda.urdf`` in the installed example-robot-data distribution."""
    import importlib.metadata

    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        raise _StudentError("this exercise needs example-robot-data (pip install 'opalg[oracle]')") from None
    hits = [f for f in files if f.name == "panda.urdf"]
    if not hits:
        raise _StudentError("example-robot-data ships no panda.urdf")
    return str(hits[0].locate())


@functools.lru_cache(maxsize=2)
def _panda(locked: bool):
    import opalg

    return opalg.from_urdf(panda_urdf_path(), locked=FINGERS if locked else ())


def _m_eff(model, q, frame, u) -> float:
    """1 / (uᵀ Λ⁻¹_vv u), Λ⁻¹ from opalg.lambda_inv (F3/F5), u in the frame's coordinates."""
    import opalg

    L = opalg.lambda_inv(model, q, [frame])
    return float(1.0 / (u @ L[3:, 3:] @ u))


def _flange_world_rotation(model, q):
    import opalg

    body, R_e, _ = model.link_frames["panda_link8"]
    R, _ = opalg.body_poses(model, q)
    return R[body] @ R_e


def _structural_zeros() -> int:
    """Entries of the 9-dof Panda's ℳ that vanish at every q (checked at three seeded states)."""
    import opalg

    m = _panda(False)
    rng = np.random.default_rng(1601)
    zero = np.ones((m.ndof, m.ndof), bool)
    for _ in range(3):
        zero &= opalg.crba(m, rng.uniform(-2, 2, m.ndof)) == 0.0
    return int(zero.sum())


def _largest_m_eff() -> float:
    """max over unit u of 1/(uᵀΛ⁻¹_vv u) = 1/λ_min(Λ⁻¹_vv) at the ready pose, fingers locked."""
    import opalg

    m = _panda(True)
    L = opalg.lambda_inv(m, Q_READY, [m.link_frames["panda_link8"]])
    return float(1.0 / np.linalg.eigvalsh(L[3:, 3:]).min())


def _fingers_choice(answer) -> tuple[bool, str]:
    """16.4: the flange's effective mass along the fingers' sliding axis, fingers free vs welded."""
    locked, free = _panda(True), _panda(False)
    q_free = np.concatenate([Q_READY, [0.02, 0.02]])
    R, _ = __import__("opalg").body_poses(free, q_free)
    axis_world = R[free.joint_names.index("panda_finger_joint1")] @ free.joints[7].axes[0]
    u = _flange_world_rotation(locked, Q_READY).T @ axis_world       # flange coordinates
    m_free = _m_eff(free, q_free, free.link_frames["panda_link8"], u)
    m_locked = _m_eff(locked, Q_READY, locked.link_frames["panda_link8"], u)
    expected = "a" if m_free > m_locked else ("b" if m_free < m_locked else "c")
    return choice(expected, "abc", "freeing a joint lets the mechanism give way (notebook 10, G3)")(answer)


def _m_eff_cases():
    """(J, ℳ, u) on a chain, two trees (mixed joints) and the 7-dof Panda; expected by Λ⁻¹ (F5)."""
    import opalg

    rng = np.random.default_rng(1603)
    out = []
    models = [("a 6-body chain with a PR joint", opalg.random_model(6, "chain", seed=161, joints="mixed"), 5),
              ("a 9-body tree with an RRR joint", opalg.random_model(9, "tree", seed=162, joints="mixed"), 7),
              ("a 9-body tree, frame on a middle body", opalg.random_model(9, "tree", seed=162, joints="mixed"), 4)]
    for what, m, body in models:
        q = rng.normal(size=m.ndof)
        frame = (body, _random_rotation(rng), rng.normal(scale=0.3, size=3))
        out.append((what, m, q, frame))
    panda = _panda(True)
    out.append(("the 7-dof Panda at its ready pose", panda, Q_READY, panda.link_frames["panda_link8"]))
    cases = []
    for what, m, q, frame in out:
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        J, Mq = opalg.frame_jacobian(m, q, frame), opalg.crba(m, q)
        cases.append((what, (J.copy(), Mq.copy(), u.copy()), np.array(_m_eff(m, q, frame, u))))
    return cases


def _random_rotation(rng) -> np.ndarray:
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


EXERCISES = {
    "16.1": Exercise("16.1", "value", "an integer",
                     integer(_structural_zeros, "ℳ(i, j) = H(i) φ(i, c) R(c) … needs one of i, j to be an "
                                                "ancestor-or-self of the other (D1–D4)")),
    # rtol 1e-9: the grader and the student both solve with ℳ (cond ≈ 3e2 at the ready pose),
    # round-off ~1e-14; a wrong block or a missing inverse is off by far more than 1e-9.
    "16.2": Exercise("16.2", "value", "a number (kg)",
                     number(_largest_m_eff, "the largest 1/(uᵀΛ⁻¹_vv u) over unit u is an eigenvalue problem",
                            rtol=1e-9)),
    # rtol 1e-8: a dense solve with ℳ against the O(n) Υ route; cond(ℳ) ≤ 2e3 on these cases, so
    # the two differ by ≤ 1e-12·cond ≈ 2e-9 at worst (observed ~1e-15).  Using the angular block,
    # or inverting the 3x3 block of Λ instead of Λ⁻¹, is off by more than 1 %.
    "16.3": Exercise("16.3", "function",
                     "a function effective_mass(J, Mq, u) returning 1/(uᵀ Λ⁻¹_vv u) as a number",
                     function(_m_eff_cases, close_arrays(1e-8)), name="effective_mass"),
    "16.4": Exercise("16.4", "value", "a letter: a, b or c", _fingers_choice),
    "16.5": Exercise("16.5", "value", "a letter: a, b or c",
                     choice("b", "abc", "what happens to the kinetic energy if the whole arm is turned "
                                        "about the first joint's axis?")),
}
