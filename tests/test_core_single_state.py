"""The one-state fast paths of the Riccati/ABA/quasi passes give the generic code's bytes.

``bk.mm`` of two 2-d float64 arrays, the E12 mass test of a first axis in Python floats
(:func:`opalg.singularity._axis_ok`, :func:`opalg.singularity._mass_scale_single`), the kept
pivot columns, and quasi's ``stack`` of 1-d blocks are each compared with the generic code they
short-cut (written out here as it stood), on random inputs with ±0.0, ±inf and nan; and
each test shows the fast path is the one taken.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import _backend as bk
from opalg import riccati, singularity
from opalg.quasi import velocities

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 1e300, -1e-300, 1e-160])


def same(a, b) -> bool:
    """Identical arrays: type, dtype, shape and bytes (signed zeros and nan bits included).

    Exact, no tolerance (issue 31): a fast path must do its generic code's floating-point
    operations in the same order; the inputs' 1e300, 1e-300 (1e-160) are test data, not tolerances.
    """
    return (type(a) is type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
            and a.tobytes() == b.tobytes())


def mm_ref(A, B):
    """bk.mm as it was: the generic branches, np.einsum through its public function."""
    if A.dtype.kind == "f" and B.dtype.kind == "f":
        if B.ndim == 2 and A.ndim > 2:
            return bk._right_const(A, B)
        if A.ndim == 2 and B.ndim > 2:
            return np.swapaxes(bk._right_const(np.swapaxes(B, -1, -2), A.T), -1, -2)
        if A.shape[-1] == 1:
            return A * B
        if B.shape[-1] == 1:
            return np.einsum("...ij,...j->...i", A, B[..., 0])[..., None]
    return A @ B


def check_axis_ref(s, d_i, scale):
    """The verdict of singularity._check_axis for a first axis (True: it passes)."""
    s, d_i = s[..., 0], d_i[..., 0, 0]
    ref = np.sum(s[..., :3] ** 2, -1) * scale[0] + np.sum(s[..., 3:] ** 2, -1) * scale[1]
    finite = np.isfinite(d_i) & np.isfinite(ref)
    return not np.any(~(d_i > singularity.PIVOT_TOL * ref) & finite)


def draws(rng, shape, n=60):
    """Normal draws at spread scales, and draws from SPECIALS."""
    for _ in range(n):
        yield rng.normal(size=shape) * 10.0 ** rng.uniform(-8, 8, size=shape)
        yield rng.choice(SPECIALS, size=shape)


@pytest.mark.parametrize("shapes", [((6, 6), (6, 1)), ((1, 6), (6, 1)), ((6, 1), (1, 1)),
                                    ((6, 1), (1, 6)), ((6, 6), (6, 3)), ((2, 6), (6, 6))])
def test_mm_one_state_matches_generic(shapes, monkeypatch):
    rng = np.random.default_rng(0)
    calls = []
    monkeypatch.setattr(bk, "_c_einsum", lambda *a: calls.append(1) or np.einsum(*a))
    with np.errstate(all="ignore"):
        for A, B in zip(draws(rng, shapes[0]), draws(rng, shapes[1])):
            assert same(bk.mm(A, B), mm_ref(A, B))
            Ac, Bc = A + 1j * A[::-1], B.astype(complex)      # complex: the generic path
            assert same(bk.mm(Ac, Bc), mm_ref(Ac, Bc))
    # The einsum branch is the kernel called directly (a single right-hand column only).
    assert bool(calls) == (shapes[1][1] == 1 and shapes[0][1] != 1)


def test_mm_batched_unchanged(monkeypatch):
    rng = np.random.default_rng(1)
    monkeypatch.setattr(bk, "_c_einsum", None)      # the one-state path must not be taken
    for sa, sb in [((3, 6, 6), (3, 6, 1)), ((6, 6), (4, 6, 1)), ((3, 6, 6), (6, 1)), ((3, 1, 6), (3, 6, 1))]:
        A, B = rng.normal(size=sa), rng.normal(size=sb)
        assert same(bk.mm(A, B), mm_ref(A, B))


def test_mass_scale_single_matches_generic():
    rng = np.random.default_rng(2)
    with np.errstate(all="ignore"):
        for P in draws(rng, (6, 6), 200):
            got, ref = singularity._mass_scale_single(P), singularity._mass_scale(P)
            for g, r in zip(got, ref):
                assert type(g) is float
                assert np.float64(g).tobytes() == r.tobytes()
    # numpy adds the three diagonal terms left to right: a case where the order shows
    P = np.diag([1.0, 1e-16, 1e-16, 1e-16, 1e-16, 1.0])
    assert singularity._mass_scale_single(P) == tuple(float(x) for x in singularity._mass_scale(P))


def test_axis_ok_matches_generic_verdict():
    rng = np.random.default_rng(3)
    n = 0
    with np.errstate(all="ignore"):
        for s, d, P in zip(draws(rng, (6, 1), 300), draws(rng, (1, 1), 300), draws(rng, (6, 6), 300)):
            scale_f, scale = singularity._mass_scale_single(P), singularity._mass_scale(P)
            assert singularity._axis_ok(s, d, scale_f) == check_axis_ref(s, d, scale)
            # the borderline: D_ii exactly at, just above and just below tol·ref
            ref = float(np.sum(s[:3, 0] ** 2) * scale[0] + np.sum(s[3:, 0] ** 2) * scale[1])
            for dv in (singularity.PIVOT_TOL * ref, np.nextafter(singularity.PIVOT_TOL * ref, np.inf),
                       np.nextafter(singularity.PIVOT_TOL * ref, -np.inf)):
                d2 = np.full((1, 1), dv)
                ok = singularity._axis_ok(s, d2, scale_f)
                assert ok == check_axis_ref(s, d2, scale)
                n += not ok
    assert n > 0   # some draws fail the test (and would go to _check_axis for the error)


def test_riccati_one_state_takes_fast_test_and_keeps_errors(monkeypatch):
    m = opalg.random_model(5, "chain", seed=4, joints="mixed")
    q = np.random.default_rng(5).normal(size=m.ndof)
    full = []
    # wrapped where articulated's recursion looks them up (opalg.riccati imports them by name)
    real = riccati._check_axis
    monkeypatch.setattr(riccati, "_check_axis", lambda *a: full.append(a[2]) or real(*a))
    art = opalg.articulated(m, q)
    # only later axes of multi-axis joints reach the full test for one state
    assert len(full) == sum(len(ax) - 1 for ax in art.axes)
    scales, real_scale = [], riccati._mass_scale          # their arrays: once per such body
    monkeypatch.setattr(riccati, "_mass_scale", lambda P: scales.append(1) or real_scale(P))
    opalg.articulated(m, q)
    assert len(scales) == sum(len(ax) > 1 for ax in art.axes) > 0
    full.clear()
    opalg.articulated(m, np.stack([q, q]))          # a batch: every axis
    assert len(full) == m.ndof
    # a body that moves no mass: the same ModelError for one state and for a batch
    E3, Z3 = np.eye(3), np.zeros(3)
    arm = opalg.Model([-1, 0], [opalg.Joint("R", [0, 0, 1.0], name="spin"), opalg.Joint("P", [0, 0, 1.0])],
                      [(E3, Z3)] * 2, [(0.0, Z3, np.zeros((3, 3))), (2.0, Z3, np.zeros((3, 3)))],
                      allow_massless=True)
    msgs = []
    for qq in (np.array([0.4, 0.7]), np.array([[0.4, 0.7]])):
        with pytest.raises(opalg.errors.ModelError) as e:
            opalg.articulated(arm, qq)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "joint spin, axis 0: moves no mass" in msgs[0]


def test_pivot_columns_kept_and_equal():
    m = opalg.random_model(6, "tree", seed=6, joints="all")
    q = np.random.default_rng(7).normal(size=m.ndof)
    for passive in (None, np.arange(m.ndof) % 2 == 0):
        art = opalg.articulated(m, q, passive=passive)
        for k in range(m.n):
            cols, cols_t = art._columns(k)
            assert art.columns(k) is cols and art._columns(k)[1] is cols_t
            fresh = [art.kin.S[k][..., :, i:i + 1] for i in art.axes[k]]
            assert len(cols) == len(fresh) and all(same(c, f) for c, f in zip(cols, fresh))
            assert all(same(ct, np.swapaxes(f, -1, -2)) for ct, f in zip(cols_t, fresh))
            assert all(same(u, np.swapaxes(v, -1, -2)) for u, v in zip(art._U_star(k), art.U[k]))


def test_stack_one_state_matches_broadcast():
    rng = np.random.default_rng(8)
    for parts in ([rng.normal(size=3), np.array([-0.0, np.nan]), np.empty(0), np.array([np.inf])],
                  [rng.normal(size=(2, 3)), rng.normal(size=2)]):
        batch = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
        ref = np.concatenate([np.broadcast_to(p, batch + p.shape[-1:]) for p in parts], -1)
        assert same(velocities.stack(parts), ref)


def test_motion_transform_one_state_is_the_generic_code(monkeypatch):
    """motion_transform of one float (3, 3) E and (3,) r, the one-state path, gives the bytes
    of the generic code (reached by making no dtype look like float64 to the fast paths) over
    rotations, signed zeros, the zero offset of a revolute axis, inf and nan; and it is taken."""
    from opalg import spatial
    rng = np.random.default_rng(9)
    cases = []
    with np.errstate(all="ignore"):
        for _ in range(200):
            s = rng.normal(size=3)
            s /= np.linalg.norm(s)
            s = np.where(rng.random(3) < 0.3, rng.choice([0.0, -0.0], 3), s)   # signed zeros
            q = rng.normal() * 10 if rng.random() < 0.7 else rng.choice(SPECIALS)
            E = bk.mT(spatial.rotation_about(s, np.array(q)))
            r = [np.zeros(3), -np.zeros(3), rng.normal(size=3), rng.choice(SPECIALS, 3)][rng.integers(4)]
            cases.append((E, r))
        fast = [spatial.motion_transform(E, r) for E, r in cases]
        with monkeypatch.context() as m:
            m.setattr(bk, "_F64", np.dtype(np.float32))    # every float64 fast path off
            generic = [spatial.motion_transform(E, r) for E, r in cases]
        assert all(same(a, b) for a, b in zip(fast, generic))
        monkeypatch.setattr(bk, "zeros", None)             # the one-state path calls no bk.zeros
        assert same(spatial.motion_transform(*cases[0]), fast[0])
