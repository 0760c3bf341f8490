"""The float64 fast paths of the numeric core give the generic code's bytes.

Each fast path (opalg._backend, opalg.spatial, opalg.joints, opalg.algebra, opalg.riccati)
is compared byte for byte (``tobytes``, dtype and shape) with the generic code it
short-cuts — written out here as it stood before the fast path — on random inputs with
±0.0, ±inf and nan, single and batched, float and complex; and each test shows the fast
path is the one taken.
"""

from __future__ import annotations

import numpy as np
import pytest

from opalg import _backend as bk
from opalg import algebra, joints, riccati, spatial

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 1e300, -1e-300])


def same(a, b) -> bool:
    """Identical arrays: type, dtype, shape and bytes (signed zeros and nan bits included).

    Exact, no tolerance (issue 31): a fast path must do its generic code's floating-point
    operations in the same order; the inputs' 1e300, 1e-300 (1e-160) are test data, not tolerances.
    """
    return (type(a) is type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
            and a.tobytes() == b.tobytes())


def samples(rng, shape, complex_too=True):
    """Random arrays of ``shape``: normal, drawn from SPECIALS, and (optionally) complex."""
    out = [rng.normal(size=shape), rng.choice(SPECIALS, size=shape)]
    if complex_too:
        with np.errstate(invalid="ignore"):     # 1j * inf has a nan real part: meant
            out.append(rng.choice(SPECIALS, size=shape) + 1j * rng.choice(SPECIALS, size=shape))
    return out


# -- the generic code, as it was --------------------------------------------------------
def common_dtype_ref(*arrays):
    if all(type(a) is np.ndarray and a.dtype.kind == "f" for a in arrays):
        return np.float64 if all(a.dtype == np.float64 for a in arrays) else np.result_type(float, *arrays)
    arrs = [bk.asarray(a) for a in arrays]
    if any(a.dtype == object for a in arrs):
        return object
    return np.result_type(float, *[a.dtype for a in arrs])


def zeros_ref(shape, *likes):
    dtype = common_dtype_ref(*likes) if likes else float
    if dtype == object:
        z = np.empty(shape, dtype=object)
        z.fill(0)
        return z
    return np.zeros(shape, dtype=dtype)


def eye_ref(n, *likes):
    e = zeros_ref((n, n), *likes)
    for i in range(n):
        e[i, i] = 1
    return e


def skew_ref(x):
    x = bk.asarray(x)
    out = zeros_ref(x.shape[:-1] + (3, 3), x)
    x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -x2, x1
    out[..., 1, 0], out[..., 1, 2] = x2, -x0
    out[..., 2, 0], out[..., 2, 1] = -x1, x0
    return out


def rotation_ref(axis, angle):
    angle = bk.asarray(angle)
    s = skew_ref(bk.asarray(axis))
    c, sn = np.cos(angle)[..., None, None], np.sin(angle)[..., None, None]
    return eye_ref(3, s) + sn * s + (1 - c) * (s @ s)


# -- tests --------------------------------------------------------------------------------
def test_common_dtype_zeros_eye_match_generic(monkeypatch):
    rng = np.random.default_rng(0)
    f = rng.normal(size=(2, 3))
    likes = [(), (f,), (f, f[0]), (f, f.astype(np.float32)), (f, f * 1j), (f.astype(np.float32),),
             (f, [1.0, 2.0]), (f, 2.0), ([1, 2],), (f.astype(np.complex64),)]
    for lk in likes:
        if lk:
            assert np.dtype(bk.common_dtype(*lk)) == np.dtype(common_dtype_ref(*lk)), lk
        assert same(bk.zeros((2, 4), *lk), zeros_ref((2, 4), *lk)), lk
        for n in (1, 3, 6):
            assert same(bk.eye(n, *lk), eye_ref(n, *lk)), (n, lk)
    # the float64 path resolves no dtype: it works with np.result_type gone
    monkeypatch.setattr(bk.np, "result_type", None)
    assert bk.common_dtype(f, f[0]) is np.float64
    assert same(bk.zeros((3,), f), np.zeros(3)) and same(bk.eye(6, f), np.eye(6))


def test_eye_is_a_fresh_copy():
    e = bk.eye(3, np.zeros(2))
    e[0, 0] = 7.0
    assert same(bk.eye(3, np.zeros(2)), np.eye(3))
    assert bk.eye(3, np.zeros(2)) is not bk.eye(3, np.zeros(2))


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 5, 3)])
def test_skew_matches_generic(shape, monkeypatch):
    rng = np.random.default_rng(1)
    xs = [x for _ in range(20) for x in samples(rng, shape)]
    refs = [skew_ref(x) for x in xs]
    # the fast paths never ask bk.zeros for their zeros
    monkeypatch.setattr(spatial.bk, "zeros", None)
    for x, ref in zip(xs, refs):
        assert same(spatial.skew(x), ref), x


def test_skew_generic_dtypes_unchanged():
    x = np.array([[1.5, -0.0, 2.0]])
    for v in (x.astype(np.float32), x.tolist(), x[0].tolist(), x.astype(int)):
        assert same(spatial.skew(v), skew_ref(v))


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # sin/cos of inf and nan
def test_rotation_about_matches_generic(batch):
    rng = np.random.default_rng(2)
    spatial._AXES.clear()
    for _ in range(30):
        axis = rng.choice([0.0, -0.0, 1.0, -1.0, 0.6, 0.8], size=3) if rng.random() < 0.5 else rng.normal(size=3)
        for angle in samples(rng, batch) + [rng.normal(size=batch) + 1e-20j]:
            R = spatial.rotation_about(axis, angle)
            assert same(R, rotation_ref(axis, angle)), (axis, angle)
            assert axis.tobytes() in spatial._AXES          # the cached-axis path was taken
            R2 = spatial.rotation_about(axis, angle)        # from the cache: the same bytes
            assert same(R2, R) and R2.flags.writeable


def test_rotation_about_cache_bounded():
    spatial._AXES.clear()
    rng = np.random.default_rng(3)
    for _ in range(4100):
        spatial.rotation_about(rng.normal(size=3), 0.1)
    assert 0 < len(spatial._AXES) <= 4096


def test_stack_last_matches_np_stack():
    rng = np.random.default_rng(4)
    for shape in [(6,), (3, 6), (2, 4, 6)]:
        for n in (1, 2, 3):
            cols = [rng.choice(SPECIALS, size=shape) for _ in range(n)]
            out = joints._stack_last(cols)
            assert same(out, np.stack(cols, -1))
            assert out.base is None                    # a fresh array, not np.stack's
            with np.errstate(invalid="ignore"):     # inf * 1j has a nan real part: meant
                as_complex = [c * 1j for c in cols]
            for other in (as_complex, [c.astype(object) for c in cols]):   # np.stack's
                got, ref = joints._stack_last(other), np.stack(other, -1)
                assert got.dtype == ref.dtype and got.shape == ref.shape
                assert (got.tobytes() == ref.tobytes() if ref.dtype != object
                        else repr(got.tolist()) == repr(ref.tolist()))
    with pytest.raises(ValueError):                    # unequal shapes: np.stack's own error
        joints._stack_last([np.zeros(6), np.zeros((1, 6))])


def test_join_and_split_match_generic():
    rng = np.random.default_rng(5)

    def join_ref(parts):
        shape = np.broadcast_shapes(*[p.shape[:-2] for p in parts])
        return np.concatenate([np.broadcast_to(p, shape + p.shape[-2:]) for p in parts], -2)

    for batches in [[(), (), ()], [(3,), (3,), (3,)], [(3,), (), (1,)], [(2, 1), (3,)]]:
        parts = [rng.choice(SPECIALS, size=b + (k + 1, 2)) for k, b in enumerate(batches)]
        assert same(algebra._join(parts), join_ref(parts))
    X = rng.normal(size=(2, 9, 3))
    sizes = (6, 1, 2)
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    for got, k in zip(algebra._split(X, list(sizes)), range(3)):
        assert same(got, X[..., offs[k]:offs[k + 1], :]) and np.shares_memory(got, X)
    with pytest.raises(ValueError):
        algebra._join([])


def test_broadcast_view_matches_broadcast_to():
    M = np.random.default_rng(6).normal(size=(6, 6))
    for batch in [(), (3,), (2, 2)]:
        v, ref = bk.broadcast_view(M, batch + (6, 6)), np.broadcast_to(M, batch + (6, 6))
        assert same(v, np.ascontiguousarray(ref)) and not v.flags.writeable and np.shares_memory(v, M)
    assert bk.broadcast_view(M, (6, 6)).base is M        # the plain view for one state


def test_mT_and_elementwise_match_numpy():
    rng = np.random.default_rng(7)
    for A in samples(rng, (2, 3, 4)):
        assert same(bk.mT(A), np.swapaxes(A, -1, -2)) and np.shares_memory(bk.mT(A), A)
        with np.errstate(all="ignore"):   # sin/cos of inf and nan
            assert same(bk.sin(A), np.sin(A)) and same(bk.cos(A), np.cos(A))
    assert same(bk.mT([[1.0, 2.0]]), np.array([[1.0], [2.0]]))
