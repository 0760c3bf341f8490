"""The dispatch branches inside the numeric core give the right values, for one state and for a
batch, float, complex (the complex-step tests use it) and sympy entries.

Each function is compared with an independent route: numpy's own ``A @ B``, ``np.cross``,
``np.stack`` and slicing, scipy's ``Rotation``, sympy's matrices.  Products are compared to the
round-off bound of two evaluations of the same sums (:func:`pair_tol`); copies, selections,
transposes and sign changes exactly.  Nothing here looks at which branch ran.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from scipy.spatial.transform import Rotation

import opalg
from opalg import _backend as bk
from opalg.algebra import operators as algebra
from opalg.model import joints
from opalg.spatial import vectors as spatial
from opalg.quasi import velocities

from helpers import EPS, Tol, assert_close, measured


def pair_tol(k: int, entries: int, complex_: bool = False) -> Tol:
    """Two evaluations of a result whose ``entries`` entries are each a sum of at most ``k``
    products of one entry of a by one entry of b, relative to ‖a‖‖b‖ (Frobenius).

    Each evaluation is within γ_k·Σ|terms| of the exact entry (γ_n ≈ n·u, u = ε/2; complex
    products: √2·γ_(k+2), Higham 2002 §3.1 and §3.6), Σ|terms| ≤ k‖a‖‖b‖, the two errors add,
    and the Frobenius norm over the entries adds a factor √entries.
    """
    u = EPS / 2
    g = np.sqrt(2) * (k + 2) * u if complex_ else k * u
    return Tol(1.01 * 2 * g * k * np.sqrt(entries),
               f"2·{'√2·γ_' + str(k + 2) if complex_ else 'γ_' + str(k)}·{k}·√{entries}: two "
               f"evaluations of sums of {k} products, relative to ‖a‖‖b‖")


def pair_scale(A, B) -> float:
    """‖a‖‖b‖ of a batched product: √Σ_s ‖A_s‖²‖B_s‖² over the (broadcast) states s."""
    na = np.linalg.norm(A.reshape(A.shape[:-2] + (-1,)), axis=-1)
    nb = np.linalg.norm(B.reshape(B.shape[:-2] + (-1,)), axis=-1)
    return float(np.sqrt(np.sum(np.broadcast_arrays(na ** 2 * nb ** 2)[0])))


def sympy_equal(a, b) -> bool:
    """exact: every entry of a − b expands to 0 (sympy)."""
    return all(sp.expand(x) == 0 for x in (np.asarray(a, dtype=object) - np.asarray(b, dtype=object)).ravel())


#: scipy's Rotation.from_rotvec (through a quaternion) vs Rodrigues' formula; measured over 16,000
#: random unit axes and angles in [−π, π] (the sweep of this file's seed) under the default,
#: Sandybridge and Prescott kernels (numpy's AVX2 dispatch off for the latter two).
ROT_TOL = measured(2e-14, 1.2e-15, "16,000 random axes and angles under 3 BLAS/SIMD kernels")
#: Im R(θ + ih)/h vs s~R(θ), h = 1e-20: the complex-step derivative, exact to round-off; the same sweep.
ROT_CS_TOL = measured(1e-14, 9.8e-16, "16,000 random axes and angles under 3 BLAS/SIMD kernels")


# --------------------------------------------------------------------------- _backend
def test_common_dtype_zeros_eye():
    f = np.random.default_rng(0).normal(size=(2, 3))
    x = sp.Symbol("x")
    cases = [((f,), np.float64), ((f, f[0]), np.float64), ((f, f.astype(np.float32)), np.float64),
             ((f.astype(np.float32),), np.float64), ((f, f * 1j), np.complex128),
             ((f, [1.0, 2.0]), np.float64), ((f, 2.0), np.float64), (([1, 2],), np.float64),
             ((f.astype(np.complex64),), np.complex128), ((f, np.array([x], dtype=object)), object),
             ((f, x), object)]
    for likes, want in cases:
        # exact: dtypes
        assert np.dtype(bk.common_dtype(*likes)) == np.dtype(want), likes
        z, e = bk.zeros((2, 4), *likes), bk.eye(3, *likes)
        assert z.dtype == want and e.dtype == want, likes
        if want is object:   # sympy's 0 and 1
            assert all(v is sp.S.Zero for v in z.ravel()), likes
            assert all(e[i, j] is (sp.S.One if i == j else sp.S.Zero) for i in range(3) for j in range(3))
        else:                # exact: zeros and ones
            assert np.array_equal(z, np.zeros((2, 4))) and np.array_equal(e, np.eye(3)), likes
    assert bk.zeros((3,)).dtype == np.float64 and np.array_equal(bk.eye(2), np.eye(2))
    e = bk.eye(3, f)
    e[0, 0] = 7.0   # a new array on every call: writing into one changes no other
    assert np.array_equal(bk.eye(3, f), np.eye(3))


@pytest.mark.parametrize("sa, sb", [
    ((6, 6), (6, 1)), ((1, 6), (6, 1)), ((6, 1), (1, 1)), ((6, 1), (1, 6)), ((6, 6), (6, 3)),
    ((2, 6), (6, 6)),                                           # one state
    ((3, 6, 6), (6, 1)), ((3, 6, 6), (6, 6)), ((6, 6), (4, 6, 1)), ((1, 6), (4, 6, 6)),   # one side constant
    ((3, 6, 1), (3, 1, 6)), ((3, 6, 6), (3, 6, 1)), ((3, 1, 6), (3, 6, 1)), ((2, 3, 6, 6), (3, 6, 3)),
])
def test_mm_is_the_matrix_product(sa, sb):
    rng = np.random.default_rng(1)
    for trial in range(5):
        A = rng.normal(size=sa) * 10.0 ** rng.uniform(-6, 6)
        B = rng.normal(size=sb) * 10.0 ** rng.uniform(-6, 6)
        k, entries = sa[-1], sa[-2] * sb[-1]
        assert_close(bk.mm(A, B), A @ B, pair_tol(k, entries), f"mm {sa} {sb}", scale=pair_scale(A, B))
        Ac, Bc = A + 1j * rng.normal(size=sa), B - 1j * rng.normal(size=sb)
        assert_close(bk.mm(Ac, Bc), Ac @ Bc, pair_tol(k, entries, True), f"complex mm {sa} {sb}",
                     scale=pair_scale(Ac, Bc))
        assert_close(bk.mm(A, Bc), A @ Bc, pair_tol(k, entries, True), f"mixed mm {sa} {sb}",
                     scale=pair_scale(A, Bc))
    # sympy entries: the product of sympy's own matrices, exactly
    a = np.array(sp.symbols(f"a0:{sa[-2] * sa[-1]}"), dtype=object).reshape(sa[-2:])
    b = np.array(sp.symbols(f"b0:{sb[-2] * sb[-1]}"), dtype=object).reshape(sb[-2:])
    assert sympy_equal(bk.mm(a, b), np.array((sp.Matrix(a) * sp.Matrix(b)).tolist(), dtype=object))


@pytest.mark.parametrize("sa, sx", [((6, 6), (6,)), ((6, 6), (4, 6)), ((4, 6, 6), (6,)), ((4, 6, 6), (4, 6)),
                                    ((2, 6), (3, 1, 6)), ((3, 1, 2, 6), (2, 6))])
def test_mv_is_the_matrix_vector_product(sa, sx):
    rng = np.random.default_rng(2)
    A, x = rng.normal(size=sa), rng.normal(size=sx)
    ref = (A @ x[..., None])[..., 0]
    scale = pair_scale(A, x[..., None])
    assert_close(bk.mv(A, x), ref, pair_tol(sa[-1], sa[-2]), f"mv {sa} {sx}", scale=scale)
    xc = x + 1j * rng.normal(size=sx)
    assert_close(bk.mv(A, xc), (A @ xc[..., None])[..., 0], pair_tol(sa[-1], sa[-2], True),
                 f"complex mv {sa} {sx}", scale=pair_scale(A, xc[..., None]))
    a = np.array(sp.symbols(f"a0:{sa[-2] * sa[-1]}"), dtype=object).reshape(sa[-2:])
    v = np.array(sp.symbols(f"v0:{sx[-1]}"), dtype=object)
    assert sympy_equal(bk.mv(a, v), list(sp.Matrix(a) * sp.Matrix(v)))


def test_mT_sin_cos_and_broadcast_view():
    rng = np.random.default_rng(3)
    x = sp.Symbol("x")
    for A in (rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 4)) * 1j, np.array([[x, 1], [2, x]], dtype=object)):
        assert np.array_equal(bk.mT(A), np.swapaxes(A, -1, -2))      # exact: a transpose
    assert np.array_equal(bk.mT([[1.0, 2.0]]), [[1.0], [2.0]])
    for A in (rng.normal(size=(2, 5)), rng.normal(size=4) + 1e-20j):
        # exact: the same numpy ufuncs on the same entries
        assert np.array_equal(bk.sin(A), np.sin(A)) and np.array_equal(bk.cos(A), np.cos(A))
    assert list(bk.sin(np.array([x, 0], dtype=object))) == [sp.sin(x), 0]
    assert list(bk.cos([x])) == [sp.cos(x)]
    M = rng.normal(size=(6, 6))
    for batch in [(), (3,), (2, 2)]:
        v = bk.broadcast_view(M, batch + (6, 6))
        # exact: a view of M; read-only (the recursions start P(k) from the model's M(k) this way)
        assert np.array_equal(v, np.broadcast_to(M, batch + (6, 6))) and not v.flags.writeable


# --------------------------------------------------------------------------- spatial
def _columns_of_cross(x):
    """x~ from np.cross(x, e_j), column by column (exact: each entry is one entry of x or 0)."""
    e = np.eye(3, dtype=x.dtype)
    return np.stack([np.cross(x, e[j]) for j in range(3)], -1)


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 5, 3)])
def test_skew_is_the_cross_product_matrix(shape):
    rng = np.random.default_rng(4)
    for x in (rng.normal(size=shape), rng.normal(size=shape) + 1j * rng.normal(size=shape)):
        assert np.array_equal(spatial.skew(x), _columns_of_cross(x))    # exact: copies and negations
        y = rng.normal(size=shape)
        assert_close(spatial.skew(x) @ y[..., None], np.cross(x, y)[..., None], pair_tol(3, 3, np.iscomplexobj(x)),
                     "skew(x) y vs x × y", scale=pair_scale(x[..., None], y[..., None]))
    assert np.array_equal(spatial.skew([1, 2, 3]), _columns_of_cross(np.array([1.0, 2.0, 3.0])))
    xs = np.array(sp.symbols("x0:3"), dtype=object)
    assert sympy_equal(spatial.skew(xs), _columns_of_cross(xs))


def _cross_ref(V, u, motion):
    """V × u (motion) or V ×* u (force) from np.cross on the 3-vector halves."""
    w, v, a, b = V[..., :3], V[..., 3:], u[..., :3], u[..., 3:]
    if motion:   # [ω × a; ω × b + v × a]
        return np.concatenate([np.cross(w, a), np.cross(w, b) + np.cross(v, a)], -1)
    return np.concatenate([np.cross(w, a) + np.cross(v, b), np.cross(w, b)], -1)   # [ω × n + v × f; ω × f]


@pytest.mark.parametrize("batch", [(), (7,), (2, 3)])
def test_cross_products_are_the_spatial_cross_products(batch):
    """cross_motion / cross_force, one state (Python floats) and batched, over 12 decades."""
    rng = np.random.default_rng(5)
    for trial in range(100):
        V, u = rng.normal(size=(2,) + batch + (6,)) * 10.0 ** rng.uniform(-6, 6, size=(2,) + batch + (6,))
        for f, motion in ((spatial.cross_motion, True), (spatial.cross_force, False)):
            # each entry: at most 4 products of an entry of V by one of u, 6 entries per state
            assert_close(f(V, u), _cross_ref(V, u, motion), pair_tol(4, 6), f"{f.__name__} {batch}",
                         scale=pair_scale(V[..., None], u[..., None]))
            Vc = V + 1j * rng.normal(size=V.shape)
            assert_close(f(Vc, u), _cross_ref(Vc, u, motion), pair_tol(4, 6, True), f"complex {f.__name__}",
                         scale=pair_scale(Vc[..., None], u[..., None]))
    Vs, us = (np.array(sp.symbols(f"{c}0:6"), dtype=object) for c in "Vu")
    assert sympy_equal(spatial.cross_motion(Vs, us), _cross_ref(Vs, us, True))
    assert sympy_equal(spatial.cross_force(Vs, us), _cross_ref(Vs, us, False))


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_motion_transform_is_featherstones_X(batch):
    """[[E, 0], [−E r~, E]] with r~ from np.cross: E and 0 exactly, −E r~ to round-off."""
    rng = np.random.default_rng(6)
    for trial in range(20):
        E = Rotation.random(int(np.prod(batch)), random_state=rng.integers(1 << 30)).as_matrix().reshape(batch + (3, 3))
        for r in (rng.normal(size=batch + (3,)), np.zeros(batch + (3,)), rng.normal(size=batch + (3,)) * 1j + 0.5):
            X = spatial.motion_transform(E, r)
            assert X.shape == batch + (6, 6)
            # exact: copies of E and zeros
            assert np.array_equal(X[..., :3, :3], E) and np.array_equal(X[..., 3:, 3:], E)
            assert not X[..., :3, 3:].any()
            assert_close(X[..., 3:, :3], -(E @ _columns_of_cross(r)), pair_tol(3, 9, np.iscomplexobj(r)),
                         "−E r~", scale=pair_scale(E, r[..., None]))
    E = np.array(sp.rot_axis3(sp.Symbol("t")).tolist(), dtype=object)
    r = np.array(sp.symbols("r0:3"), dtype=object)
    ref = sp.Matrix(sp.BlockMatrix([[sp.Matrix(E), sp.zeros(3)],
                                    [-sp.Matrix(E) * sp.Matrix(_columns_of_cross(r)), sp.Matrix(E)]]))
    assert sympy_equal(spatial.motion_transform(E, r), np.array(ref.tolist(), dtype=object))


@pytest.mark.parametrize("batch", [(), (8,), (2, 4)])
def test_rotation_about_is_the_rotation(batch):
    """Rodrigues' R(s, θ) vs scipy's rotation vector sθ; its complex step is s~R (dR/dθ)."""
    rng = np.random.default_rng(7)
    h = 1e-20
    for trial in range(2000 // max(1, int(np.prod(batch)))):
        s = rng.normal(size=3)
        s /= np.linalg.norm(s)
        th = rng.uniform(-np.pi, np.pi, size=batch)
        R = spatial.rotation_about(s, th)
        ref = Rotation.from_rotvec(s * th[..., None]).as_matrix()
        assert_close(R, ref, ROT_TOL, f"rotation_about {batch}")
        Rc = spatial.rotation_about(s, th + 1j * h)
        assert_close(Rc.real, R, ROT_TOL, "real part of R(θ + ih)")
        assert_close(Rc.imag / h, _columns_of_cross(s) @ R, ROT_CS_TOL, "Im R(θ + ih)/h vs s~R")
    t = sp.Symbol("t")
    for axis, ref in (([1, 0, 0], sp.rot_axis1), ([0, 1, 0], sp.rot_axis2), ([0, 0, 1], sp.rot_axis3)):
        R = spatial.rotation_about(np.array([sp.Integer(a) for a in axis], dtype=object), t)
        assert sympy_equal(R, np.array(ref(t).T.tolist(), dtype=object)), axis   # sympy's are passive


# --------------------------------------------------------------------------- stacking helpers
def test_stack_join_split_and_columns():
    """exact throughout: these copy, concatenate and slice entries."""
    rng = np.random.default_rng(8)
    x = sp.Symbol("x")
    for shape in [(6,), (3, 6), (2, 4, 6)]:
        for n in (1, 2, 3):
            cols = [rng.normal(size=shape) for _ in range(n)]
            for c in (cols, [v * 1j for v in cols], [v.astype(object) * x for v in cols]):
                got, ref = joints._stack_last(c), np.stack(c, -1)
                assert got.dtype == ref.dtype and np.array_equal(got, ref)
    for batches in [[(), (), ()], [(3,), (3,), (3,)], [(3,), (), (1,)], [(2, 1), (3,)]]:
        parts = [rng.normal(size=b + (k + 1, 2)) for k, b in enumerate(batches)]
        shape = np.broadcast_shapes(*batches)
        ref = np.concatenate([np.broadcast_to(p, shape + p.shape[-2:]) for p in parts], -2)
        assert np.array_equal(algebra._join(parts), ref)
    X = rng.normal(size=(2, 9, 3))
    assert [p.tolist() for p in algebra._split(X, [6, 1, 2])] == [X[:, :6].tolist(), X[:, 6:7].tolist(),
                                                                     X[:, 7:].tolist()]
    for parts in ([rng.normal(size=3), np.array([-0.5, 2.0]), np.empty(0), np.array([np.inf])],
                  [rng.normal(size=(2, 3)), rng.normal(size=2)]):
        batch = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
        ref = np.concatenate([np.broadcast_to(p, batch + p.shape[-1:]) for p in parts], -1)
        assert np.array_equal(velocities.stack(parts), ref)
    # Articulated.columns: the eliminated axes' columns of H*(k), one state and a batch
    m = opalg.random_model(6, "tree", seed=6, joints="all")
    q = rng.normal(size=m.ndof)
    for qq in (q, np.stack([q, -q])):
        for passive in (None, np.arange(m.ndof) % 2 == 0):
            art = opalg.articulated(m, qq, passive=passive)
            for k in range(m.n):
                cols = art.columns(k)
                assert len(cols) == len(art.axes[k])
                for c, i in zip(cols, art.axes[k]):
                    assert np.array_equal(c, art.kin.S[k][..., :, [i]])
