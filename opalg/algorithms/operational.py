r"""Operational space: frame Jacobians and the inverse operational-space inertia Λ⁻¹.

docs/REFERENCE.md C8, F1–F5.  A body-fixed frame e on body k is picked off by
ℬ (block φ(k, e)); its Jacobian is J = ℬ*φ*H* and Λ⁻¹ = Jℳ⁻¹J* = ℬ*Ωℬ, with
Ω(i, j) = ψ*(c, i) Υ(c) ψ(c, j) through the nearest common ancestor c = i ∧ j
(F3 — the serial-chain operator form F4 is false on branched trees).
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError
from opalg.algorithms.aba import upsilon_psi
from opalg.model.kinematics import body_kinematics, chunked
from opalg.model.multibody import Model, is_rotation
from opalg.algorithms.riccati import articulated
from opalg.spatial.vectors import motion_transform


def _frame_pose(frame, where: str | None = None) -> tuple[int, np.ndarray, np.ndarray]:
    """(body, R, p) of a frame spec ``(body, p)`` or ``(body, R, p)``, checked (not the body range).

    Messages start with ``where`` (default ``"frame"``, then ``"frame on body k"``); shared by
    :func:`frame_jacobian` and :class:`opalg.closed.LoopClosure`.
    """
    head = where or "frame"
    try:
        body, *rest = frame
        R, p = (np.eye(3), rest[0]) if len(rest) == 1 else rest
    except (TypeError, ValueError):
        raise StateError(f"{head}: expected (body, p) or (body, R, p), got {frame!r}") from None
    if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
        raise StateError(f"{head}: body index {body!r} is not an integer; expected (body, p) or (body, R, p)")
    body = int(body)
    head = where or f"frame on body {body}"
    R = bk.asarray(R, f"{head}: R", StateError)
    p = bk.asarray(p, f"{head}: origin p", StateError)
    if R.shape != (3, 3) or p.shape != (3,):
        raise StateError(f"{head}: R must be 3x3 and p a 3-vector (got shapes {R.shape}, {p.shape})")
    if R.dtype != object and not is_rotation(R):
        raise StateError(f"{head}: R is not a proper rotation matrix")
    if p.dtype != object and not np.all(np.isfinite(p)):
        raise StateError(f"{head}: origin p has non-finite entries {p}")
    return body, R, p


def _frame_X(model: Model, frame) -> tuple[int, np.ndarray]:
    """(body, ^eX_k) from a frame spec ``(body, p)`` or ``(body, R, p)``."""
    body, R, p = _frame_pose(frame)
    if not 0 <= body < model.n:
        raise StateError(f"frame on body {body}: no such body (model has {model.n})")
    return body, motion_transform(bk.mT(R), p)


@chunked(1)
def frame_jacobian(model: Model, q, frame) -> np.ndarray:
    r"""Spatial Jacobian of a body-fixed frame e, in e coordinates: ``J = B* φ* H*`` ([C8]).

    ``frame`` is ``(body, p)`` or ``(body, R, p)``: origin p and orientation R of e
    in the body frame.  The column block of joint j is ``^eX_j H*(j)`` for every j
    on the path from the body to its root (j ⪰ body), zero elsewhere.  Returns (..., 6, N).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> opalg.frame_jacobian(arm, [0.0, 0.0], (1, [1.0, 0, 0]))[[2, 4]]   # w_z and v_y of the tip
    array([[1., 1.],
           [2., 1.]])
    """
    body, Xe = _frame_X(model, frame)
    return frame_columns(model, body_kinematics(model, q, validate=False), body, Xe)


def frame_columns(model: Model, kin, body: int, X) -> np.ndarray:
    r"""The C8 Jacobian ``X ^{body}X_k H*(k)`` for every k ⪰ body, zero elsewhere, from ``kin``.

    The loop of :func:`frame_jacobian` on kinematics the caller already has (closed-chain
    constraint Jacobians, H2); ``X`` = ^eX_body may carry its own batch axes.  Returns (..., 6, N).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "tree", seed=2); q = np.ones(m.ndof)
    >>> kin = opalg.model.kinematics.body_kinematics(m, q)
    >>> bool(np.allclose(frame_columns(m, kin, 3, np.eye(6)), opalg.frame_jacobian(m, q, (3, [0.0, 0, 0]))))
    True
    """
    J = bk.zeros(np.broadcast_shapes(kin.batch, X.shape[:-2]) + (6, model.ndof), X, *kin.Xup)
    k = body
    while k != -1:
        J[..., :, model.dof_slice[k]] = X @ kin.S[k]
        X = X @ kin.Xup[k]
        k = model.parents[k]
    return J


@chunked(1)
def lambda_inv(model: Model, q, frames) -> np.ndarray:
    r"""Inverse operational-space inertia Λ⁻¹ = J ℳ⁻¹ J* of body-fixed frames, in O(n).

    Uses F5 with the tree formula F3 (the serial-chain operator form F4 is false
    on branched trees, docs/REFERENCE.md pitfall 4):

    .. math:: Λ^{-1}(e_r, e_s) = φ^*(k_r,e_r)\, ψ^*(c,k_r)\, Υ(c)\, ψ(c,k_s)\, φ(k_s,e_s),
              \quad c = k_r ∧ k_s,

    and 0 when k_r and k_s hang from different roots.

    Parameters
    ----------
    frames : sequence of (body, p) or (body, R, p)

    Returns
    -------
    ndarray, shape (..., 6m, 6m) for m frames, each in its own coordinates.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(7, "tree", seed=5, joints="revolute")
    >>> q = np.zeros(m.ndof); fr = [(6, [0.1, 0, 0])]
    >>> J = opalg.frame_jacobian(m, q, fr[0])
    >>> bool(np.allclose(opalg.lambda_inv(m, q, fr), J @ np.linalg.solve(opalg.crba(m, q), J.T)))
    True
    """
    specs = [_frame_X(model, f) for f in frames]
    art = articulated(model, q, body_kinematics(model, q, validate=False))
    return omega_frames(model, art, specs)


def omega_frames(model: Model, art, specs) -> np.ndarray:
    r"""ℬ*Ωℬ of frames given as ``(body, ^eX_body)`` pairs, from a Riccati factorization ``art``.

    The F3/F5 block formula of :func:`lambda_inv` on an existing :class:`opalg.Articulated`,
    so that a caller that already factored the tree (closed-chain forward dynamics, H5)
    does not factor it again.  Returns (..., 6m, 6m), each frame in its own coordinates.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=1); q = np.zeros(m.ndof)
    >>> Xe = np.eye(6)
    >>> L = opalg.algorithms.operational.omega_frames(m, opalg.articulated(m, q), [(4, Xe)])
    >>> bool(np.allclose(L, opalg.lambda_inv(m, q, [(4, [0.0, 0, 0])])))
    True
    """
    kin = art.kin
    # Only the frames' bodies and their ancestors enter: Υ (F2) and ψ(℘k, k) are formed for
    # those alone (closed-chain dynamics calls this for a few frames of a large tree).
    need = set()
    for k, _ in specs:
        while k != -1 and k not in need:
            need.add(k)
            k = model.parents[k]
    Y, psi_up = upsilon_psi(model, art, need)

    def ancestors(k):
        out = []
        while k != -1:
            out.append(k)
            k = model.parents[k]
        return out

    # Per frame r, the rows Xr ψ*(c, k_r) for every ancestor c of k_r (E4d path products),
    # built once walking up: O(m·depth) products instead of one walk per pair of frames.
    rows = []
    for kr, Xr in specs:
        acc, W = {}, Xr + bk.zeros(kin.batch + (6, 6), *art.P)
        for a in ancestors(kr):
            acc[a] = W
            W = W @ bk.mT(psi_up[a])
        rows.append(acc)
    m = len(specs)
    out = bk.zeros(kin.batch + (6 * m, 6 * m), *art.P)
    for r, (kr, _) in enumerate(specs):
        anc_r = ancestors(kr)
        for s in range(r, m):
            common = [a for a in ancestors(specs[s][0]) if a in anc_r]
            if not common:
                continue
            c = common[0]           # the nearest common ancestor k_r ∧ k_s (F3)
            blk = rows[r][c] @ Y[c] @ bk.mT(rows[s][c])
            out[..., 6 * r:6 * r + 6, 6 * s:6 * s + 6] = blk
            if s != r:
                out[..., 6 * s:6 * s + 6, 6 * r:6 * r + 6] = bk.mT(blk)
    return out
