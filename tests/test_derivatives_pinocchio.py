"""rnea_derivatives and aba_derivatives against Pinocchio's computeRNEADerivatives / computeABADerivatives.

docs/REFERENCE.md E14, E15.  The suite's URDF robots of example-robot-data (Panda, UR5, Solo12,
Talos), parsed by both libraries (tests/test_oracle_pinocchio.py's ``_robot``), plus Solo12 on a
free-flyer root.  Conventions are converted at the edge by opalg.pinocchio_bridge: Pinocchio's
velocity (and tangent) vectors are ordered by its own joint order and, for the free flyer,
linear first, [v; ω] — ``from_vv`` permutes rows and columns alike (K9).  Both libraries take the
free flyer's configuration derivative in the local tangent space, q ⊕ δq = q·exp(δq) (K8).

Tolerances: the RNEA derivatives sum terms of the size ‖ℳ‖(|q̈| + |q̇|²) and gravity; their
agreement is measured (RTOL_ID, relative to that size).  The ABA derivatives solve with ℳ:
k·cond(ℳ)·ε, cond from Pinocchio's ℳ.
"""

from __future__ import annotations

import functools

import numpy as np
import pinocchio as pin
import pytest

import opalg
from opalg.pinocchio_bridge import twin_from_urdf

from helpers import assert_close, cond_tol, measured
from test_oracle_pinocchio import ROBOTS, _robot, _sym_upper, robot_urdf_path

ROUTE = "opalg vs Pinocchio's analytical derivatives (URDF robots, conventions converted at the edge)"
RTOL_ID = measured(1e-12, 1.2e-15, "3 states of each of 5 robots (4 fixed-base, Solo12 floating)")
K_SOLVE = 100


@functools.lru_cache(maxsize=None)
def _floating_solo():
    path = robot_urdf_path(ROBOTS["solo12"][0])
    model = opalg.from_urdf(path, floating=True)
    with open(path, encoding="utf-8") as fh:
        tw = twin_from_urdf(model, fh.read(), floating=True)
    return model, tw


def _twin(name):
    return _floating_solo() if name == "solo12-floating" else _robot(name)


def _states(model, seed, count=3):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = opalg.integrate(model, opalg.neutral(model), rng.uniform(-np.pi, np.pi, model.nv))
        yield q, rng.normal(size=model.nv), rng.normal(size=model.nv)


@pytest.mark.verifies("E14", "E15", route=ROUTE)
@pytest.mark.parametrize("name", list(ROBOTS) + ["solo12-floating"])
def test_derivatives_against_pinocchio(name):
    model, tw = _twin(name)
    pm, data = tw.model, tw.data
    for i, (q, qd, qdd) in enumerate(_states(model, 31)):
        qp, vp, ap = tw.q(q), tw.v(qd), tw.v(qdd)
        Mp = tw.from_vv(_sym_upper(pin.crba(pm, data, qp)))
        size = np.linalg.norm(Mp, 2) * (np.linalg.norm(qdd) + np.linalg.norm(qd) ** 2 + 9.81)
        dq, dqd = opalg.rnea_derivatives(model, q, qd, qdd)
        rq, rv, _ = pin.computeRNEADerivatives(pm, data, qp, vp, ap)
        assert_close(dq, tw.from_vv(rq), RTOL_ID, f"{name} dtau_dq vs computeRNEADerivatives", scale=size)
        assert_close(dqd, tw.from_vv(rv), RTOL_ID, f"{name} dtau_dqd vs computeRNEADerivatives", scale=size)

        tau = np.linalg.norm(Mp, 2) * np.random.default_rng(i).normal(size=model.nv)
        tol = cond_tol(np.linalg.cond(Mp), K_SOLVE)
        aq, av, atau = opalg.aba_derivatives(model, q, qd, tau)
        pq, pv, ptau = pin.computeABADerivatives(pm, data, qp, vp, tw.v(tau))
        assert_close(aq, tw.from_vv(pq), tol, f"{name} dqdd_dq vs computeABADerivatives")
        assert_close(av, tw.from_vv(pv), tol, f"{name} dqdd_dqd vs computeABADerivatives")
        assert_close(atau, tw.from_vv(_sym_upper(ptau)), tol, f"{name} dqdd_dtau vs computeABADerivatives")
