r"""CRBA, RNEA, ABA and hybrid dynamics on enlarged nodes (docs/REFERENCE.md K3–K5).

Equations of motion, with β = ẋ = [η̇_k; θ̇_k]_k (:mod:`opalg.flex.model`):

.. math::
    ℳ(x)\,\ddot x + C(x, \dot x) + 𝒦 x + 𝒟 \dot x = T,\qquad ℳ = ℋΦ𝓜Φ^*ℋ^* ,

𝒦 = blockdiag(K_k, 0), 𝒟 = blockdiag(D_k, 0) acting on the modal rows.  The recursions
are the rigid ones (C2, E5, E9, G1) with rectangular Φ blocks, (m_k + n_k)-row ℋ(k),
(m_k + 6)-square 𝓜(k), P(k), and the a(k), b(k) of :mod:`opalg.flex.kinematics`.

Entries may be sympy expressions (state and body data): the arithmetic then runs on object
arrays through :mod:`opalg._backend`, unsimplified, and the pivots D(k) are inverted by adjugate.

One state per call (x, v, … of shape (ndof,)): the enlarged-node kinematics are written for a
single state, so the batching of :func:`opalg.model.kinematics.chunked`, which feeds chunks of states
to a recursion vectorized over a leading batch axis, does not apply; loop over states instead.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from opalg.errors import SingularConfigurationError, StateError
from opalg import _backend as bk
from opalg.flex.kinematics import _zeros, flex_kinematics
from opalg.flex.model import FlexModel
from opalg.model import _validate
from opalg.model.kinematics import overflow_guard

__all__ = ["crba", "rnea", "aba", "hybrid"]


def _public(fn):
    """A public entry point: ``fm`` must be a FlexModel, and a numeric result that is not finite
    for finite inputs (an overflow) is a StateError naming the function, as in the core."""
    where = f"flex.{fn.__name__}"
    names = list(inspect.signature(fn).parameters)[1:]

    @functools.wraps(fn)
    def wrapper(fm, *args, **kw):
        _validate.model(fm, where, "fm", FlexModel)
        inputs = {}
        for nm, a in [*zip(names, args), *kw.items()]:
            try:
                arr = np.asarray(a)
            except (TypeError, ValueError):
                continue
            if arr.dtype.kind in "fc":
                inputs[nm] = arr
        return overflow_guard(where, lambda: fn(fm, *args, **kw), inputs,
                              lambda out: list(out) if isinstance(out, tuple) else out)

    return wrapper


def _split(fm, x) -> list:
    return [x[fm.eta_slice[k].start:fm.theta_slice[k].stop] for k in range(fm.n)]


def _stiffness(fm, x, v) -> np.ndarray:
    """𝒦x + 𝒟ẋ (zero on the joint rows)."""
    dt = object if fm.symbolic or x.dtype == object or v.dtype == object else np.result_type(x, v)
    out = _zeros(fm.ndof, dt)
    for k, b in enumerate(fm.bodies):
        s = fm.eta_slice[k]
        out[s] = b.K @ x[s] + b.D @ v[s]
    return out


def _given(x, size: int, name: str, what: str) -> np.ndarray:
    """``x`` as ``size`` finite numbers or sympy expressions (strings refused unevaluated)."""
    a = bk.asarray(x, name, StateError).reshape(-1)
    if a.dtype.kind not in "fcO":
        a = a.astype(float)
    if a.shape != (size,) or bk.first_nonfinite(a) is not None:
        raise StateError(f"{name} must be {size} finite {what}, got shape {a.shape}")
    return a


@_public
def crba(fm, x) -> np.ndarray:
    r"""Mass matrix ℳ = ℋΦ𝓜Φ*ℋ* by composite enlarged-node inertias (docs/REFERENCE.md K3).

    R(k) = 𝓜(k) + Σ_c Φ(k,c) R(c) Φ*(k,c); ℳ(k,k) = ℋ(k)R(k)ℋ*(k) and
    ℳ(℘ⁱk, k) = ℋ(℘ⁱk) Φ(℘ⁱk, ℘ⁱ⁻¹k)⋯Φ(℘k, k) R(k)ℋ*(k) up the path (E5).

    Parameters
    ----------
    fm : FlexModel
    x : array_like (ndof,)
        Coordinates: real, complex (complex-step differentiation) or sympy expressions (then
        an unsimplified object array; strings are refused, never evaluated).

    Returns
    -------
    ndarray (ndof, ndof)

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import examples, crba
    >>> fm = examples.two_link_arm(modes=1)
    >>> M = crba(fm, np.zeros(fm.ndof))
    >>> bool(np.allclose(M, M.T)), bool(np.all(np.linalg.eigvalsh(M) > 0))
    (True, True)
    >>> import sympy as sp
    >>> x = sp.symbols("x0:4")
    >>> Ms = crba(fm, x)                                  # sympy entries: an object array
    >>> bool(np.allclose(np.array(sp.Matrix(Ms).xreplace({s: 0 for s in x}), float), M))
    True
    """
    x = fm.check_state(x, "x")
    kin = flex_kinematics(fm, x)
    R = _composite(fm, kin)
    out = _zeros((fm.ndof, fm.ndof), kin.dtype)
    rows = [slice(fm.eta_slice[k].start, fm.theta_slice[k].stop) for k in range(fm.n)]
    for k in range(fm.n):
        F = bk.matmul(R[k], kin.Hs[k])
        out[rows[k], rows[k]] = bk.matmul(kin.Hs[k].T, F)
        j = k
        while fm.parents[j] >= 0:
            F = bk.matmul(kin.Phi_star[j].T, F)
            j = fm.parents[j]
            blk = bk.matmul(kin.Hs[j].T, F)
            out[rows[j], rows[k]] = blk
            out[rows[k], rows[j]] = blk.T
    return out


def _composite(fm, kin) -> list:
    """R(k) = 𝓜(k) + Σ_c Φ(k,c) R(c) Φ*(k,c), inward (E5): the composite enlarged-node inertias."""
    R = [Mk.copy() for Mk in kin.Mcal]
    for k in reversed(fm.order):
        p = fm.parents[k]
        if p >= 0:
            R[p] = R[p] + bk.matmul(bk.matmul(kin.Phi_star[k].T, R[k]), kin.Phi_star[k])
    return R


@_public
def rnea(fm, x, v, xdd, gravity: bool = True) -> np.ndarray:
    r"""Inverse dynamics T = ℳẍ + C + 𝒦x + 𝒟ẋ by Newton–Euler on enlarged nodes (docs/REFERENCE.md K4).

    .. math:: T = ℋΦ\bigl(𝓜Φ^*(ℋ^*\ddot x + a) + b\bigr) + 𝒦x + 𝒟\dot x ,

    outward 𝒜(k) = Φ*(℘,k)𝒜(℘) + ℋ*(k)ẍ(k) + a(k), inward F(k) = 𝓜(k)𝒜(k) + b(k) +
    Σ_c Φ(k,c)F(c), T(k) = ℋ(k)F(k) (+ the modal stiffness and damping).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import examples, rnea, crba
    >>> fm = examples.two_link_arm(modes=1, gravity=(0, 0, 0))
    >>> x = np.zeros(fm.ndof); a = np.arange(1.0, fm.ndof + 1)
    >>> bool(np.allclose(rnea(fm, x, 0 * x, a), crba(fm, x) @ a))
    True
    """
    x, v, xdd = fm.check_state(x, "x"), fm.check_state(v, "v"), fm.check_state(xdd, "xdd")
    return _newton_euler(fm, flex_kinematics(fm, x, v, gravity), xdd) + _stiffness(fm, x, v)


def _newton_euler(fm, kin, xdd) -> np.ndarray:
    """ℋΦ(𝓜Φ*(ℋ*ẍ + a) + b) on the kinematics ``kin`` of one state (rnea without 𝒦x + 𝒟ẋ)."""
    xdds = _split(fm, xdd)
    A, F = [None] * fm.n, [None] * fm.n
    for k in fm.order:
        p = fm.parents[k]
        A[k] = kin.Hs[k] @ xdds[k] + kin.a[k]
        if p >= 0:
            A[k] = A[k] + kin.Phi_star[k] @ A[p]
        F[k] = kin.Mcal[k] @ A[k] + kin.b[k]
    for k in reversed(fm.order):
        p = fm.parents[k]
        if p >= 0:
            F[p] = F[p] + kin.Phi_star[k].T @ F[k]
    return np.concatenate([kin.Hs[k].T @ F[k] for k in range(fm.n)])


def _inverse(D: np.ndarray) -> np.ndarray:
    """D⁻¹ = adj(D)/det(D) of a sympy block, division-free (Berkowitz) and unsimplified.

    sympy's default ``inv`` tests pivots for zero, which simplifies the (large) entries and
    is slow; the adjugate needs no pivot.  D(k) is the (m_k + n_k)-square pivot, small.
    """
    import sympy as sp

    Dm = sp.Matrix(D.tolist())
    det = Dm.det(method="berkowitz")
    return np.array((Dm.adjugate(method="berkowitz") / det).tolist(), dtype=object)


def _gain(fm, k: int, D: np.ndarray, U: np.ndarray, sym: bool):
    """G(k) = U D(k)⁻¹ and, for sympy entries, D(k)⁻¹ by adjugate (None for numbers).

    Numeric pivots must be positive definite: otherwise a SingularConfigurationError naming
    body k (sympy pivots cannot be tested and are not).
    """
    if sym:
        Dinv = _inverse(D) if D.size else D
        return U @ Dinv, Dinv
    try:
        np.linalg.cholesky(D)                                            # D(k) SPD: the pivot check
    except np.linalg.LinAlgError:
        raise SingularConfigurationError(
            f"body {k} ({fm.names[k]}): the articulated pivot D(k) is not positive definite") from None
    return np.linalg.solve(D, U.T).T, None                              # a 0 × 0 D gives G = U (d_k × 0)


def _articulated(fm, kin, T_p, acc_a, masks):
    r"""Hybrid articulated recursion (E9/G1) on enlarged nodes; ``masks[k]`` marks the
    eliminated (passive) rows of ℋ(k), the others get the given accelerations ``acc_a``."""
    n = fm.n
    P, z, D, G, eps, ap, Hp = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    Pp, zp, Dinv = [None] * n, [None] * n, [None] * n
    sym = kin.dtype is object      # sympy entries: D(k)⁻¹ by sympy, no pivot test, no symmetrization
    for k in range(n):
        Hk, msk = kin.Hs[k], masks[k]
        Hp[k] = Hk[:, msk]
        ap[k] = kin.a[k] + Hk[:, ~msk] @ acc_a[k]                       # a′ = a + ℋ_a* ẍ_a (G1)
        P[k], z[k] = kin.Mcal[k].copy(), kin.b[k].copy()
    for k in reversed(fm.order):
        for c in fm.children[k]:
            Ps = kin.Phi_star[c]
            P[k] = P[k] + Ps.T @ Pp[c] @ Ps
            z[k] = z[k] + Ps.T @ zp[c]
        z[k] = z[k] + P[k] @ ap[k]                                       # z = Pa′ + b + Σ Φz⁺ (E9)
        D[k] = Hp[k].T @ P[k] @ Hp[k]
        U = P[k] @ Hp[k]
        G[k], Dinv[k] = _gain(fm, k, D[k], U, sym)
        eps[k] = T_p[k] - Hp[k].T @ z[k]
        Pp[k] = P[k] - G[k] @ U.T
        if not sym:
            Pp[k] = (Pp[k] + Pp[k].T) / 2                                # keep P⁺ symmetric (E11)
        zp[k] = z[k] + G[k] @ eps[k]
    alpha, out = [None] * n, [None] * n
    for k in fm.order:
        p = fm.parents[k]
        a_plus = _zeros(ap[k].shape, kin.dtype) if p < 0 else kin.Phi_star[k] @ alpha[p]
        if not D[k].size:
            out[k] = eps[k]
        else:
            out[k] = (Dinv[k] @ eps[k] if sym else np.linalg.solve(D[k], eps[k])) - G[k].T @ a_plus
        alpha[k] = a_plus + Hp[k] @ out[k] + ap[k]
    return out, alpha


@_public
def aba(fm, x, v, tau, gravity: bool = True) -> np.ndarray:
    r"""Forward dynamics ẍ = ℳ⁻¹(T − C − 𝒦x − 𝒟ẋ), articulated recursion (docs/REFERENCE.md K5).

    Inward on enlarged nodes: P(k) = 𝓜(k) + Σ_c Φ(k,c)P⁺(c)Φ*(k,c), D = ℋPℋ*,
    G = Pℋ*D⁻¹, P⁺ = P − GℋP, z(k) = Pa + b + Σ_c Φ(k,c)z⁺(c), ε = T − 𝒦x − 𝒟ẋ − ℋz,
    z⁺ = z + Gε; outward α⁺ = Φ*(℘,k)α(℘), ẍ(k) = D⁻¹ε − G*α⁺, α = α⁺ + ℋ*ẍ + a (E9).
    The modal rows are eliminated together with the joint's: D(k) is (m_k + n_k)-square.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import examples, aba, rnea
    >>> fm = examples.two_link_arm(modes=2)
    >>> x, v, a = np.random.default_rng(0).normal(size=(3, fm.ndof)) * 0.1
    >>> bool(np.allclose(aba(fm, x, v, rnea(fm, x, v, a)), a))
    True
    """
    x, v, tau = fm.check_state(x, "x"), fm.check_state(v, "v"), fm.check_state(tau, "tau")
    kin = flex_kinematics(fm, x, v, gravity)
    T = _split(fm, tau - _stiffness(fm, x, v))
    masks = [np.ones(fm.sizes[k] - 6 + fm.joint_sizes[k], bool) for k in range(fm.n)]
    acc = [np.zeros(0) for _ in range(fm.n)]
    out, _ = _articulated(fm, kin, T, acc, masks)
    return np.concatenate(out)


@_public
def hybrid(fm, x, v, theta_dd, tau_eta=None, gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""Prescribed joint accelerations, free modal response (docs/REFERENCE.md K5, G1).

    The modal rows are passive (given generalized force τ_η − Kη − Dη̇, default τ_η = 0)
    and the joint rows active (given θ̈): the articulated recursion eliminates only the
    modal rows of each ℋ(k) and uses a′ = a + ℋ_a*θ̈ (G1).  The joint torques follow from
    one Newton–Euler pass with the resulting accelerations.

    Parameters
    ----------
    theta_dd : array_like (Σ n_k,)
        Joint accelerations, body by body.
    tau_eta : array_like (Σ m_k,), optional
        Applied modal forces.

    Returns
    -------
    eta_dd : ndarray (Σ m_k,)
    tau_theta : ndarray (Σ n_k,)

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import examples, hybrid, aba
    >>> fm = examples.two_link_arm(modes=2)
    >>> x, v = np.full(fm.ndof, 0.1), np.zeros(fm.ndof)
    >>> eta_dd, tau = hybrid(fm, x, v, [1.0, -2.0])
    >>> T = np.zeros(fm.ndof); T[[2, 5]] = tau
    >>> bool(np.allclose(aba(fm, x, v, T)[[2, 5]], [1.0, -2.0]))
    True
    """
    x, v = fm.check_state(x, "x"), fm.check_state(v, "v")
    nth, neta = sum(fm.joint_sizes), sum(fm.modes)
    th = _given(theta_dd, nth, "theta_dd", "joint accelerations")
    te = np.zeros(neta) if tau_eta is None else _given(tau_eta, neta, "tau_eta", "modal forces")
    kin = flex_kinematics(fm, x, v, gravity)
    stiff = _stiffness(fm, x, v)
    T, acc, masks, oe, ot = [], [], [], 0, 0
    for k in range(fm.n):
        m, nk = fm.modes[k], fm.joint_sizes[k]
        T.append(te[oe:oe + m] - stiff[fm.eta_slice[k]])
        acc.append(th[ot:ot + nk])
        masks.append(np.arange(m + nk) < m)
        oe, ot = oe + m, ot + nk
    eta_dd, _ = _articulated(fm, kin, T, acc, masks)
    xdd = np.concatenate([np.concatenate([e, a]) for e, a in zip(eta_dd, acc)])
    full = _newton_euler(fm, kin, xdd)           # reuses kin; 𝒦x + 𝒟ẋ is 0 on the joint rows
    return np.concatenate(eta_dd), np.concatenate([full[fm.theta_slice[k]] for k in range(fm.n)])
