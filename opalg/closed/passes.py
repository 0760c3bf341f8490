r"""Closed-chain forward dynamics in one pair of tree passes on 1 + m columns (docs/REFERENCE.md H5).

:meth:`opalg.closed.ClosedSystem.forward`'s kernel.  One Riccati factorization, then one inward
and one outward pass (E9) carrying 1 + m right-hand sides at once:

* column 0 is the free ABA, T with the model's a and b − f_ext: θ̈_f and the body accelerations;
* column 1 + j is ℳ⁻¹G_c*e_j — the unit closure force e_j applied to the two frames, entering
  the passes as body forces b(body1) = −X1*Π*e_j and b(body2) = +X2*X12*Π*e_j (C9, G_c* = the
  frames' J* with Π*), with T = a = 0.

The closure's rows of the outward pass's body accelerations give everything else without G_c
or a dense ℳ: column 0 yields G_cθ̈_f − U = Π[α_e1 − X12 α_e2 + crm(V1 − X12V_e2) X12V_e2]
(H3; with gravity as a base acceleration its contribution cancels between the two frames, and
is removed for a ground frame), columns 1.. yield Λ_c⁻¹ = G_c(ℳ⁻¹G_c*) (H4), and the
correction θ̈ = θ̈_f − (ℳ⁻¹G_c*)λ is a product with the columns already at hand.

This is the fast route; :meth:`ClosedSystem.compliance` keeps the Ω route (F3/F5 through the
nearest common ancestor), and tests/test_closed.py checks the two against each other and against
the dense G_cℳ⁻¹G_c*.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.model.kinematics import body_kinematics, chunked
from opalg.model.multibody import Model
from opalg.algorithms.riccati import articulated
from opalg.spatial.vectors import cross_motion
from opalg.closed import geometry as geo
from opalg.closed.solve import _solve_compliance as solve_compliance


def closure_loads(closures, row_slice, fr) -> dict:
    r"""Per body, the body forces of the m unit closure forces: ``{k: [(columns, F)]}``.

    F (..., 6, m_c) holds b(k) for the closure's columns: −X1*Π* on body1, +X2*X12*Π* on body2
    (b = −f_ext: the force +G_c*e_j on the joints is −b through the Jacobians' transposes).
    """
    loads: dict = {}
    for c, X12, rs in zip(closures, fr.X12, row_slice):
        cols = slice(1 + rs.start, 1 + rs.stop)
        loads.setdefault(c.body1, []).append((cols, -(c.X1.T @ c.Pi.T)))
        if not c.ground:
            loads.setdefault(c.body2, []).append((cols, bk.mT(bk.mm(bk.mm(c.Pi, X12), c.X2))))
    return loads


def frame_rows(closures, fr, kin, alpha, gravity_acc) -> tuple[np.ndarray, np.ndarray]:
    r"""(R, W): R (..., m, 1 + m) = Π[α_e1 − X12α_e2] of every column, the velocity term
    Π crm(V1 − V2)V2 (H3) added to column 0, and W = G_cθ̇ = Π(V1 − V2) (..., m)."""
    rows, vel = [], []
    for c, A, X12 in zip(closures, fr.Xe1, fr.X12):
        rel = bk.mm(c.X1, alpha[c.body1])
        V1 = bk.mv(c.X1, kin.V[c.body1])
        if c.ground:
            # α_e2 = V_e2 = 0; column 0's α_e1 includes the base acceleration ^{e1}X_0 a_0: remove it.
            rel[..., 0] = rel[..., 0] - bk.mv(A, gravity_acc)
            dv = V1
        else:
            XX = bk.mm(X12, c.X2)                          # ^{e1}X_{body2}
            rel = rel - bk.mm(XX, alpha[c.body2])
            V2 = bk.mv(XX, kin.V[c.body2])
            rel[..., 0] = rel[..., 0] + cross_motion(V1 - V2, V2)
            dv = V1 - V2
        rows.append(bk.mm(c.Pi, rel))
        vel.append(bk.mv(c.Pi, dv))
    return np.concatenate(rows, -2), np.concatenate(vel, -1)


def column_passes(model: Model, kin, art, fr, system, tau, f_ext=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The inward and outward passes (E9) on 1 + m columns: (Q, R, W).

    Q (..., N, 1 + m) = [θ̈_f, ℳ⁻¹G_c*]; R (..., m, 1 + m) = [G_cθ̈_f − U, Λ_c⁻¹] (H3, H4) and
    W = G_cθ̇ (..., m), from :func:`frame_rows`.  ``kin`` holds V, a, b with gravity on.
    """
    n, order, parents = model.n, model.order, model.parents
    r = 1 + system.m
    batch = np.broadcast_shapes(kin.batch, tau.shape[:-1], () if f_ext is None else f_ext.shape[:-2])
    likes = (tau, art.P[order[0]], kin.a[order[0]], kin.b[order[0]]) + (() if f_ext is None else (f_ext,))
    loads = closure_loads(system.closures, system.row_slice, fr)
    T = bk.zeros(batch + (model.ndof, r), *likes)
    T[..., 0] = tau
    # Bodies with one eliminated axis and a constant S (1-dof joints, float data): the pivot
    # steps inline, without the general multi-axis loop's temporaries.
    fast = [T.dtype.kind == "f" and art.passive is None and len(art.U[k]) == 1 and kin.S[k].ndim == 2
            for k in range(n)]
    # ... and when S is a unit vector e_i (URDF joints about a frame axis), Sᵀz is row i of z
    # and Sθ̈ touches row i of α only.
    unit = [_unit_row(kin.S[k]) if fast[k] else None for k in range(n)]
    zp, eps = [None] * n, [None] * n
    for k in reversed(order):
        z = None
        for c in model.children[k]:
            zc = bk.mm(bk.mT(kin.Xup[c]), zp[c])
            if z is None:
                z = zc                                     # a fresh product: accumulate in place
            else:
                z += zc
            zp[c] = None                                   # consumed: release it
        if z is None or z.shape != batch + (6, r) or z.dtype != T.dtype:
            z = (bk.zeros(batch + (6, r), *likes) if z is None else
                 np.broadcast_to(z, batch + (6, r)) + bk.zeros(batch + (6, r), *likes))
        z[..., 0] += bk.mv(art.P[k], kin.a[k]) + (kin.b[k] if f_ext is None else kin.b[k] - f_ext[..., k, :])
        for cols, F in loads.get(k, ()):
            z[..., cols] += F
        if fast[k]:
            # One axis with a constant S (E11 with n_k = 1), in place: ε = T − Sᵀz, z⁺ = z + Uε/d.
            Sz = z[..., unit[k]:unit[k] + 1, :] if unit[k] is not None else \
                np.einsum("i,...ir->...r", kin.S[k][:, 0], z)[..., None, :]
            e = T[..., model.dof_slice[k], :] - Sz
            z += art.U[k][0] * (e / art.d[k][0])
            zp[k], eps[k] = z, e
        else:
            zp[k], eps[k] = art.pivot_inward(k, T[..., model.dof_slice[k], :], z)
    qdd, alpha = [None] * n, [None] * n
    for k in order:
        p = parents[k]
        ap = bk.zeros(batch + (6, r), *likes) if p == -1 else bk.mm(kin.Xup[k], alpha[p])
        if fast[k]:
            # θ̈ = (ε − Uᵀα⁺)/d, α = α⁺ + Sθ̈ (in place on α⁺, a fresh product).
            qk = (eps[k] - np.einsum("...i,...ir->...r", art.U[k][0][..., 0], ap)[..., None, :]) / art.d[k][0]
            if unit[k] is not None:
                ap[..., unit[k]:unit[k] + 1, :] += qk
            else:
                ap += kin.S[k] * qk
            qdd[k], al = qk, ap
        else:
            qdd[k], al = art.pivot_outward(k, eps[k], ap)
        al[..., 0] += kin.a[k]                 # only the free column carries a (E9c)
        alpha[k] = al
        eps[k] = None
    Q = qdd[0] if n == 1 else np.concatenate(qdd, -2)
    g0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity, dtype=float)])
    R, W = frame_rows(system.closures, fr, kin, alpha, g0)
    return Q, R, W


def _unit_row(S) -> int | None:
    """i if the constant (6, 1) axis S is exactly the unit vector e_i, else None."""
    nz = np.flatnonzero(S[:, 0])
    return int(nz[0]) if len(nz) == 1 and S[nz[0], 0] == 1.0 else None


@chunked(3, forces=("f_ext",))
def forward_columns(model: Model, q, qd, tau, f_ext=None, system=None, stab=None):
    """One chunk of :meth:`ClosedSystem.forward` by the 1 + m column passes: [qdd, lam, rank]."""
    kin = body_kinematics(model, q, qd, True, validate=False)
    art = articulated(model, q, kin)
    fr = geo.closure_frames(model, kin, system.closures)
    Q, R, W = column_passes(model, kin, art, fr, system, tau, f_ext)
    rhs = R[..., 0]                                          # G_cθ̈_f − U
    if stab is not None:
        a_, b_ = stab                                        # U − 2αG_cθ̇ − β²e (H6)
        rhs = rhs + 2 * a_ * W + b_ ** 2 * geo.constraint_error(system.closures, fr)
    lam, rank = solve_compliance(R[..., 1:], rhs, system.rcond)
    return [Q[..., 0] - bk.mv(Q[..., 1:], lam), lam, rank]


@chunked(1)
def column_compliance(model: Model, q, system=None) -> np.ndarray:
    r"""Λ_c⁻¹ = G_c(ℳ⁻¹G_c*) by the column passes (H4, H5's fast route), (..., m, m).

    The cross-check of :meth:`ClosedSystem.compliance` (the Ω route); θ̇ = τ = 0.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar
    >>> from opalg.closed.passes import column_compliance
    >>> sys, q = four_bar()
    >>> bool(np.allclose(column_compliance(sys.model, q, system=sys), sys.compliance(q)))
    True
    """
    z = np.zeros_like(q)
    kin = body_kinematics(model, q, z, True, validate=False)
    art = articulated(model, q, kin)
    fr = geo.closure_frames(model, kin, system.closures)
    return column_passes(model, kin, art, fr, system, z)[1][..., 1:]
