r"""Kinematics of the closure frames: poses, X12, the constraint Jacobian G_c and the drift U.

docs/REFERENCE.md H2 (G_c) and H3 (U).  Everything here works on a :class:`opalg.model.kinematics.Kinematics`
the caller already computed (one set of transforms shared with the Riccati factorization), batched
over states, for float, complex (complex-step tests) and no sympy data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.model.kinematics import Kinematics, _split_transform
from opalg.model.multibody import Model
from opalg.algorithms.operational import frame_columns
from opalg.spatial.vectors import cross_motion


def inverse_transform(X) -> np.ndarray:
    r"""Inverse of a motion transform [[E, 0], [B, E]]: [[Eᵀ, 0], [−Eᵀ B Eᵀ, Eᵀ]] (no solve)."""
    E, B = X[..., :3, :3], X[..., 3:, :3]
    Et = bk.mT(E)
    out = bk.zeros(X.shape, X)
    out[..., :3, :3] = out[..., 3:, 3:] = Et
    out[..., 3:, :3] = -(Et @ B @ Et)
    return out


def world_transforms(model: Model, kin: Kinematics, bodies) -> dict:
    """``{k: ^kX_0}`` for the given bodies (and their ancestors), composed outward."""
    need = set()
    for k in bodies:
        while k != -1 and k not in need:
            need.add(k)
            k = model.parents[k]
    X0 = {}
    for k in model.order:
        if k in need:
            p = model.parents[k]
            X0[k] = kin.Xup[k] if p == -1 else kin.Xup[k] @ X0[p]
    return X0


@dataclass
class ClosureFrames:
    """Per closure i: ``Xe1[i]`` = ^{e1}X_0, ``Xe2[i]`` = ^{e2}X_0 and ``X12[i]`` = ^{e1}X_{e2} (..., 6, 6)."""

    Xe1: list
    Xe2: list
    X12: list


def closure_frames(model: Model, kin: Kinematics, closures) -> ClosureFrames:
    """The poses of every closure's two frames and their relative transform X12 = ^{e1}X_0 (^{e2}X_0)⁻¹."""
    X0 = world_transforms(model, kin, [c.body1 for c in closures] + [c.body2 for c in closures if not c.ground])
    like = kin.Xup[0]
    Xe1, Xe2, X12 = [], [], []
    for c in closures:
        A = bk.mm(c.X1, X0[c.body1])       # constant left factor: one gemm over the batch
        B = (c.X2 + bk.zeros(kin.batch + (6, 6), like)) if c.ground else bk.mm(c.X2, X0[c.body2])
        Xe1.append(A)
        Xe2.append(B)
        X12.append(A @ inverse_transform(B))
    return ClosureFrames(Xe1, Xe2, X12)


def constraint_jacobian(model: Model, kin: Kinematics, closures, fr: ClosureFrames) -> np.ndarray:
    r"""G_c = Π_c [J_e1 − X12 J_e2] stacked over closures (..., m, N) (H2; J_e2 = 0 on the ground)."""
    blocks = []
    for c, X12 in zip(closures, fr.X12):
        J = frame_columns(model, kin, c.body1, c.X1)
        if not c.ground:
            J = J - frame_columns(model, kin, c.body2, X12 @ c.X2)
        blocks.append(c.Pi @ J)
    return np.concatenate(blocks, -2)


def body_bias_accelerations(model: Model, kin: Kinematics) -> list:
    r"""α(k) at θ̈ = 0: α(k) = ^kX_℘ α(℘k) + a(k) outward (E9c with θ̈ = 0; includes a's gravity if any)."""
    alpha = [None] * model.n
    for k in model.order:
        p = model.parents[k]
        alpha[k] = kin.a[k] if p == -1 else bk.mv(kin.Xup[k], alpha[p]) + kin.a[k]
    return alpha


def drift(model: Model, kin: Kinematics, closures, fr: ClosureFrames) -> np.ndarray:
    r"""U = −Ġ_c θ̇ = −Π_c [α⁰_e1 − X12 α⁰_e2 + crm(V_rel) X12 V_e2] (H3), (..., m).

    ``kin`` must hold V and a, computed with gravity off (the closure is kinematic: gravity
    does not enter U; the fast route :func:`opalg.closed.passes.frame_rows` removes it instead).
    """
    alpha = body_bias_accelerations(model, kin)
    out = []
    for c, X12 in zip(closures, fr.X12):
        V1 = bk.mv(c.X1, kin.V[c.body1])
        a1 = bk.mv(c.X1, alpha[c.body1])
        if c.ground:
            # V_e2 = α_e2 = 0: U = −Π α_e1.
            out.append(-bk.mv(c.Pi, a1))
            continue
        V2 = bk.mv(X12, bk.mv(c.X2, kin.V[c.body2]))          # X12 V_e2, in e1 coordinates
        a2 = bk.mv(c.X2, alpha[c.body2])
        rel = a1 - bk.mv(X12, a2) + cross_motion(V1 - V2, V2)
        out.append(-bk.mv(c.Pi, rel))
    return np.concatenate(out, -1)


def constraint_error(closures, fr: ClosureFrames) -> np.ndarray:
    """Position errors of every closure in its rows, stacked (..., m); see LoopClosure.error."""
    return np.concatenate([c.error(*_split_transform(A), *_split_transform(B))
                           for c, A, B in zip(closures, fr.Xe1, fr.Xe2)], -1)
