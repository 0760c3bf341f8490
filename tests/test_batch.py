"""Large batches: the chunked passes (more states than opalg.kinematics.CHUNK) equal single-state calls."""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.kinematics import CHUNK

from helpers import assert_close

# More states than one chunk, in a 2-d batch that does not divide evenly into chunks.
BATCH = (3, CHUNK // 2 + 37)


@pytest.fixture(scope="module", params=["chain", "tree"])
def case(request):
    model = opalg.random_model(6, request.param, seed=11, joints="mixed")
    rng = np.random.default_rng(11)
    q, qd, x = rng.normal(size=(3,) + BATCH + (model.ndof,))
    picks = [(0, 0), (1, CHUNK // 2 - 1), (2, BATCH[1] - 1), (1, 7)]
    return model, q, qd, x, picks


def test_chunked_recursions_equal_single_calls(case):
    """rnea, bias, crba, aba, minv, minv_diag, frame_jacobian, lambda_inv over > CHUNK states."""
    model, q, qd, x, picks = case
    frame = (model.n - 1, np.eye(3), np.array([0.1, 0.2, 0.0]))
    calls = {
        "rnea": lambda a, b, c: opalg.rnea(model, a, b, c),
        "bias": lambda a, b, c: opalg.bias(model, a, b),
        "crba": lambda a, b, c: opalg.crba(model, a),
        "aba": lambda a, b, c: opalg.aba(model, a, b, c),
        "minv": lambda a, b, c: opalg.minv(model, a),
        "minv_diag": lambda a, b, c: np.concatenate(
            [d.reshape(d.shape[:-2] + (-1,)) for d in opalg.minv_diag(model, a)], -1),
        "frame_jacobian": lambda a, b, c: opalg.frame_jacobian(model, a, frame),
        "lambda_inv": lambda a, b, c: opalg.lambda_inv(model, a, [frame]),
    }
    for name, f in calls.items():
        big = f(q, qd, x)
        assert big.shape[:2] == BATCH, name
        for i, j in picks:
            # Same arithmetic per state, only grouped differently: round-off level (1e-12).
            assert_close(big[i, j], f(q[i, j], qd[i, j], x[i, j]), 1e-12, f"{name}[{i},{j}]")


def test_chunked_broadcasting(case):
    """A (B1, B2, N) q with a single (N,) qd and tau broadcasts through the chunked path."""
    model, q, qd, x, picks = case
    out = opalg.aba(model, q, qd[0, 0], x[0, 0])
    assert out.shape == BATCH + (model.ndof,)
    for i, j in picks:
        assert_close(out[i, j], opalg.aba(model, q[i, j], qd[0, 0], x[0, 0]), 1e-12, "aba broadcast")


def test_chunked_error_indices_refer_to_the_callers_array(case):
    """A NaN deep inside a large batch is reported at its index in the caller's array."""
    model, q, qd, x, picks = case
    bad = q.copy()
    bad[2, BATCH[1] - 2, 1] = np.nan
    with pytest.raises(opalg.StateError, match=rf"q has a non-finite entry at index \(2, {BATCH[1] - 2}, 1\)"):
        opalg.rnea(model, bad, qd, x)
