r"""Several arms holding one rigid object: the operational-space solution (H1) and its relatives.

docs/REFERENCE.md §10, H1, H7–H9.  Arm r has grasp frame e_r on its tip body t_r and
f_r is the spatial force arm r exerts on the object at e_r (in e_r coordinates):

.. code-block:: text

    arm r:    ℳ_r θ̈_r + C_r = T_r − J_r* f_r
    object:   M_o α_o + b_o = Σ_r φ(o, e_r) f_r,      b_o = crf(V_o) M_o V_o − M_o a_g − f_o
    grasp:    α_{e_r} = φ*(o, e_r) α_o                 (φ*(o, e_r) = ᵉX_o constant)

All accelerations are body-frame derivatives of the spatial velocities (opalg's convention)
and are *true* accelerations: the arms' ABA folds gravity into the base (pitfall 6), so
its frame accelerations are shifted back by the gravity acceleration a_g before they meet
the object's equation, where gravity appears explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.model._checks import refuse_free
from opalg.errors import ModelError, SingularConfigurationError, StateError
from opalg.model import _validate
from opalg.algorithms.aba import innovations_passes
from opalg.model.kinematics import body_kinematics, broadcast_batch, check_state
from opalg.model.multibody import Model
from opalg.algorithms.operational import _frame_X, omega_frames
from opalg.algorithms.riccati import articulated
from opalg.spatial.vectors import cross_force, motion_transform
from opalg.closed._blocks import COND_MAX, blkdiag as _blkdiag, check_h1 as _check_h1
from opalg.closed._blocks import selection as _selection, vector6 as _vector6
from opalg.closed.multiarm_kkt import kkt_solve
from opalg.closed.grasp import Grasp, object_inertia as _object_inertia, pose_error, world_transform


@dataclass
class MultiArmResult:
    """Solution of the multi-arm system for one (batch of) state(s).

    ``qdd[r]`` (..., N_r): arm r's accelerations; ``f[r]`` (..., 6): the force arm r exerts
    on the object at e_r, in e_r coordinates (Πᵀλ_r with rows); ``lam[r]`` (..., len(rows)):
    its selected rows Π f_r; ``alpha_o`` (..., 6): the object's acceleration (body-frame
    derivative of V_o, in object coordinates, gravity not folded in).  docs/REFERENCE.md H1.

    Examples
    --------
    See :class:`MultiArm`.
    """

    qdd: list
    f: list
    lam: list
    alpha_o: np.ndarray


class MultiArm:
    r"""m arms (opalg models in one world frame) holding a common rigid object by rigid grasps.

    Parameters
    ----------
    arms : sequence of Model
        Each placed in the world frame by its root placements; they must share one gravity.
    grasps : sequence of Grasp
        ``grasps[r]``: arm r's grasp frame e_r (on its tip body) and e_r's pose in the object.
    object_inertia : Inertia or (6, 6) array
        The object's spatial inertia M_o about its frame origin, in object coordinates.
    rows : sequence of int, optional
        The selection Π of grasp-force components (e.g. ``[2, 3, 4]`` = ω_z, v_x, v_y for
        planar arms in the x–y plane): f_r = Πᵀλ_r and Λ_r⁻¹ → ΠΛ_r⁻¹Πᵀ (H9).

    The object's pose and velocity follow from arm 0's grasp frame; the other arms must agree
    (:meth:`grasp_error`, checked by :meth:`forward`).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.closed import Grasp, MultiArm
    >>> arm = opalg.planar_arm([1.0, 1.0, 0.5], [1.0, 1.0, 0.5], [0.1, 0.1, 0.05])
    >>> g = Grasp(2, p=[0.5, 0, 0], p_oe=[-0.2, 0, 0])
    >>> sys1 = MultiArm([arm], [g], opalg.Inertia(1.0, np.zeros(3), 0.01 * np.eye(3)), rows=[2, 3, 4])
    >>> q, qd, tau = [0.3, 0.5, -0.4], [0.1, -0.2, 0.3], [1.0, 0.5, 0.2]
    >>> res, ref = sys1.forward([q], [qd], [tau]), sys1.kkt([q], [qd], [tau])
    >>> bool(np.allclose(res.qdd[0], ref.qdd[0]) and np.allclose(res.f[0], ref.f[0]))
    True
    """

    def __init__(self, arms: Sequence[Model], grasps: Sequence[Grasp], object_inertia,
                 rows: Sequence[int] | None = None):
        arms, grasps = list(arms), list(grasps)
        if not arms or len(arms) != len(grasps):
            raise ModelError(f"MultiArm needs one grasp per arm and at least one arm "
                             f"(got {len(arms)} arms, {len(grasps)} grasps)")
        for r, (arm, g) in enumerate(zip(arms, grasps)):
            if not isinstance(arm, Model):
                raise ModelError(f"arm {r}: expected an opalg.Model, got {type(arm).__name__}")
            refuse_free(arm, f"MultiArm (arm {r})", "each arm's base is fixed")
            if not isinstance(g, Grasp):
                raise ModelError(f"grasp {r}: expected an opalg.closed.Grasp, got {type(g).__name__}")
            if arm.symbolic:
                raise ModelError(f"arm {r}: MultiArm is numeric; the model has symbolic entries")
            if not np.allclose(np.asarray(arm.gravity, float), np.asarray(arms[0].gravity, float)):
                raise ModelError(f"arm {r}: gravity {arm.gravity} differs from arm 0's {arms[0].gravity}; "
                                 "all arms live in one world frame")
        self.arms, self.grasps = arms, grasps
        try:
            self.X_ek = [_frame_X(arm, g.frame)[1] for arm, g in zip(arms, grasps)]
        except StateError as e:
            raise ModelError(f"grasp frame: {e}") from None
        self.tips = [g.body for g in grasps]
        self.M_o = _object_inertia(object_inertia)
        self.M_o_inv = np.linalg.inv(self.M_o)
        self.X_eo = [g.X_eo for g in grasps]                        # φ*(o, e_r)
        g0 = grasps[0]
        self.X_oe0 = motion_transform(g0.R_oe, -g0.R_oe.T @ g0.p_oe)  # ᵒX_{e_0} = (ᵉX_o)⁻¹
        self.gravity = np.asarray(arms[0].gravity, float)
        self.Pi = _selection(rows)
        self.rows = None if rows is None else [int(i) for i in rows]

    # ------------------------------------------------------------------ state and setup
    @property
    def m(self) -> int:
        """The number of arms."""
        return len(self.arms)

    def _states(self, name: str, xs, need: bool = True) -> list:
        if xs is None and not need:
            return [None] * self.m
        if isinstance(xs, np.ndarray) or len(xs) != self.m:
            raise StateError(f"{name} must be a list of {self.m} per-arm arrays (one per arm)")
        return [check_state(arm, x, f"{name}[{r}]") for r, (arm, x) in enumerate(zip(self.arms, xs))]

    def _setup(self, qs, qds=None, taus=None, f_o=None, gravity=True, check=True, tol=1e-8):
        """Per-arm kinematics, articulated inertias, Λ_r⁻¹ and (with qds) the free motion and b_o."""
        _validate.flag(gravity, "gravity", "MultiArm")
        _validate.flag(check, "check", "MultiArm")
        _validate.real(tol, "tol", "MultiArm", positive=True)
        qs = self._states("qs", qs)
        qds = self._states("qds", qds, need=taus is not None)
        taus = self._states("taus", taus, need=False)
        batch = broadcast_batch(self.arms[0], **{f"qs[{r}]": q for r, q in enumerate(qs)},
                                **{f"qds[{r}]": x for r, x in enumerate(qds) if x is not None},
                                **{f"taus[{r}]": x for r, x in enumerate(taus) if x is not None})
        s = SimpleNamespace(batch=batch, kin=[], art=[], Linv=[], X_e0=[], V_e=[], alpha_f=[])
        g = np.concatenate([np.zeros(3), self.gravity if gravity else np.zeros(3)])
        for r, arm in enumerate(self.arms):
            kin = body_kinematics(arm, qs[r], qds[r], gravity)
            art = articulated(arm, qs[r], kin)
            t, X = self.tips[r], self.X_ek[r]
            s.Linv.append(omega_frames(arm, art, [(t, X)]))       # F5 with c = t_r ∧ t_r = t_r
            s.X_e0.append(world_transform(arm, kin, t, X))
            s.kin.append(kin)
            s.art.append(art)
            if qds[r] is not None:
                s.V_e.append(bk.mv(X, kin.V[t]))
            if taus[r] is not None:
                free = innovations_passes(arm, art, taus[r][..., None], kin.a, kin.b, keep=True)
                # ABA accelerations are shifted by the base acceleration -g; add a_g = ᵉX_0 [0; g] back.
                s.alpha_f.append(bk.mv(X, free.alpha[t][..., 0]) + bk.mv(s.X_e0[r], g))
        s.X_o0 = self.X_oe0 @ s.X_e0[0]
        if qds[0] is not None:
            s.V_o = bk.mv(self.X_oe0, s.V_e[0])
            s.b_o = cross_force(s.V_o, bk.mv(self.M_o, s.V_o)) - bk.mv(self.M_o, bk.mv(s.X_o0, g))
            if f_o is not None:
                s.b_o = s.b_o - _vector6(f_o, "f_o")
        if check:
            self._check(s, tol)
        s.taus = taus
        return s

    def _check(self, s, tol: float) -> None:
        for r in range(1, self.m):
            err = np.linalg.norm(pose_error(s.X_e0[r], self.X_eo[r] @ s.X_o0), axis=-1)
            scale = 1.0 + np.linalg.norm(s.X_e0[r][..., 3:, :3], axis=(-2, -1))
            if np.any(err > tol * scale):
                raise StateError(f"MultiArm: arm {r}'s grasp frame is {np.max(err):.3g} (rotation vector and "
                                 f"offset) away from where the object (placed by arm 0) holds it; the state "
                                 f"is not a closed configuration (tolerance {tol:g}); see grasp_error()")
            if s.V_e:
                dv = np.linalg.norm(s.V_e[r] - bk.mv(self.X_eo[r], s.V_o), axis=-1)
                if np.any(dv > tol * (1.0 + np.linalg.norm(s.V_o, axis=-1))):
                    raise StateError(f"MultiArm: arm {r}'s grasp velocity differs from the object's by "
                                     f"{np.max(dv):.3g}; qds violate the grasp (tolerance {tol:g})")

    def grasp_error(self, qs: Sequence, qds: Sequence | None = None) -> np.ndarray:
        r"""Grasp violation of every arm relative to the object placed by arm 0.

        Returns (..., m, 6): [rotation vector; origin offset] of arm r's grasp frame from
        where the object holds it, in e_r coordinates (row 0 is zero); with ``qds`` (..., m, 12),
        followed by the velocity error V_{e_r} − ᵉX_o V_o.

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.closed import Grasp, MultiArm
        >>> arm = opalg.planar_arm([1.0], [1.0], [0.1])
        >>> two = MultiArm([arm, arm], [Grasp(0, p=[1.0, 0, 0])] * 2, np.eye(6))
        >>> two.grasp_error([[0.0], [0.1]])[1].round(4) + 0.0      # arm 1 is 0.1 rad further round
        array([ 0.    ,  0.    ,  0.1   , -0.005 ,  0.0998,  0.    ])
        """
        s = self._setup(qs, qds, check=False)
        out = [pose_error(self.X_eo[r] @ s.X_o0, s.X_e0[r]) for r in range(self.m)]
        if qds is not None:
            out = [np.concatenate([out[r], s.V_e[r] - bk.mv(self.X_eo[r], s.V_o)], -1) for r in range(self.m)]
        return np.stack(out, -2)

    # ------------------------------------------------------------------ the pieces (H8)
    def grasp_map(self) -> np.ndarray:
        r"""𝒜 = [φ(o, e_1)Πᵀ … φ(o, e_m)Πᵀ] (6 × m·len(rows)), constant in object coordinates (H8).

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.closed import Grasp, MultiArm
        >>> arm = opalg.planar_arm([1.0], [1.0], [0.1])
        >>> MultiArm([arm, arm], [Grasp(0)] * 2, np.eye(6), rows=[2, 3, 4]).grasp_map().shape
        (6, 6)
        """
        return np.concatenate([X.T @ self.Pi.T for X in self.X_eo], -1)

    def lambda_inv_blocks(self, qs: Sequence) -> np.ndarray:
        r"""Λ_blk⁻¹ = diag(ΠΛ_r⁻¹Πᵀ), Λ_r⁻¹ = ᵉX_t Υ(t_r) ᵉX_tᵀ (F5, O(n) per arm) (H8).

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.closed import Grasp, MultiArm
        >>> arm = opalg.random_model(7, "chain", seed=0)
        >>> ma = MultiArm([arm], [Grasp(6)], np.eye(6)); q = np.zeros(arm.ndof)
        >>> bool(np.allclose(ma.lambda_inv_blocks([q]), opalg.lambda_inv(arm, q, [(6, [0, 0, 0])])))
        True
        """
        s = self._setup(qs, check=False)
        return _blkdiag([self.Pi @ L @ self.Pi.T for L in s.Linv], s.batch)

    def h1_matrix(self, qs: Sequence) -> np.ndarray:
        r"""The grasp-force matrix of H1: Λ_blk⁻¹ + 𝒜* M_o⁻¹ 𝒜 (6m × 6m, or projected by Π).

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.closed import Grasp, MultiArm
        >>> arm = opalg.random_model(7, "chain", seed=0)
        >>> ma = MultiArm([arm, arm], [Grasp(6)] * 2, np.eye(6))
        >>> ma.h1_matrix([np.zeros(arm.ndof)] * 2).shape
        (12, 12)
        """
        A = self.grasp_map()
        return self.lambda_inv_blocks(qs) + A.T @ self.M_o_inv @ A

    def closed_inertia(self, qs: Sequence) -> np.ndarray:
        r"""ℳ_cc = M_o + 𝒜 Λ_blk 𝒜*: the object's inertia with the arms attached (H7, H8).

        Needs every ΠΛ_r⁻¹Πᵀ invertible (SingularConfigurationError naming the arm otherwise).

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.closed import Grasp, MultiArm
        >>> arm = opalg.random_model(7, "chain", seed=0)
        >>> ma = MultiArm([arm], [Grasp(6)], np.eye(6)); q = [np.zeros(arm.ndof)]
        >>> Mcc_inv = np.eye(6) - ma.grasp_map() @ np.linalg.solve(ma.h1_matrix(q), ma.grasp_map().T)
        >>> bool(np.allclose(np.linalg.inv(ma.closed_inertia(q)), Mcc_inv))    # Woodbury, M_o = I
        True
        """
        s = self._setup(qs, check=False)
        Lbar = self._lambda_bar(s)
        A = [X.T @ self.Pi.T for X in self.X_eo]
        return self.M_o + sum(A[r] @ Lbar[r] @ A[r].T for r in range(self.m))

    def _lambda_bar(self, s) -> list:
        out = []
        for r, L in enumerate(s.Linv):
            Lp = self.Pi @ L @ self.Pi.T
            w = np.linalg.eigvalsh(Lp)
            if np.any(w[..., 0] <= w[..., -1] / COND_MAX):
                rank = int(np.min(np.sum(w > w[..., -1:] / COND_MAX, -1)))
                raise SingularConfigurationError(
                    f"arm {r}: its inverse operational-space inertia at the grasp has rank {rank} of "
                    f"{Lp.shape[-1]} (fewer independent dofs than grasp rows), so Λ_{r} does not exist and "
                    "the augmented-object form is undefined; use forward() (H1) or select rows")
            out.append(np.linalg.inv(Lp))
        return out

    # ------------------------------------------------------------------ dynamics
    def forward(self, qs: Sequence, qds: Sequence, taus: Sequence, f_o=None, gravity: bool = True,
                check: bool = True, tol: float = 1e-8) -> MultiArmResult:
        r"""Forward dynamics by the operational-space solution H1 (O(n) per arm, no dense ℳ).

        .. math::
            Σ_s [Λ_r^{-1} δ_{rs} + φ^*(o,e_r) M_o^{-1} φ(o,e_s)] f_s
                = α^f_{e_r} + φ^*(o,e_r) M_o^{-1} b_o,

        with α^f_{e_r} from each arm's free ABA and Λ_r⁻¹ from Υ (F5); then
        α_o = M_o⁻¹(Σ_s φ(o,e_s) f_s − b_o) and a second innovations pass per arm with the
        object's push −f_r at e_r (C9).  docs/REFERENCE.md H1 (H9 with ``rows``).

        Parameters
        ----------
        qs, qds, taus : list of array_like, one (..., N_r) array per arm
            A closed configuration (checked against ``tol``, see :meth:`grasp_error`).
        f_o : array_like (..., 6), optional
            Applied wrench on the object about its origin, object coordinates.
        gravity : bool
            Gravity on the arms and the object.

        Returns
        -------
        MultiArmResult

        Raises
        ------
        SingularConfigurationError
            If the H1 matrix is singular (cond > 1e12): statically indeterminate grasp
            forces, e.g. planar arms without ``rows`` (H9); the message gives its rank.

        Examples
        --------
        See :class:`MultiArm`.
        """
        s = self._setup(qs, qds, taus, f_o, gravity, check, tol)
        A = self.grasp_map()
        H = _blkdiag([self.Pi @ L @ self.Pi.T for L in s.Linv], s.batch) + A.T @ self.M_o_inv @ A
        Mb = bk.mv(self.M_o_inv, s.b_o)
        rhs = np.concatenate([bk.mv(self.Pi, s.alpha_f[r] + bk.mv(self.X_eo[r], Mb)) for r in range(self.m)], -1)
        _check_h1(H)
        lam = np.linalg.solve(H, rhs[..., None])[..., 0]
        alpha_o = bk.mv(self.M_o_inv, bk.mv(A, lam)) - Mb
        return self._finish(s, np.split(lam, self.m, -1), alpha_o)

    def augmented_object(self, qs: Sequence, qds: Sequence, taus: Sequence, f_o=None,
                         gravity: bool = True, check: bool = True,
                         tol: float = 1e-8) -> MultiArmResult:
        r"""Forward dynamics by the augmented-object form (H7): the arms' inertia joins the object's.

        .. math::
            \Big(M_o + Σ_r φ(o,e_r) Λ_r φ^*(o,e_r)\Big) α_o = Σ_r φ(o,e_r) Λ_r α^f_{e_r} − b_o,
            \qquad f_r = Λ_r (α^f_{e_r} − φ^*(o,e_r) α_o),

        with Λ_r → (ΠΛ_r⁻¹Πᵀ)⁻¹ and f_r = Πᵀλ_r when ``rows`` are given.  Arguments as
        :meth:`forward`.  Needs every Λ_r to exist: SingularConfigurationError naming the arm.

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.closed import Grasp, MultiArm
        >>> arm = opalg.planar_arm([1.0, 1.0, 0.5], [1.0, 1.0, 0.5], [0.1, 0.1, 0.05])
        >>> ma = MultiArm([arm], [Grasp(2)], np.diag([.1, .1, .1, 1, 1, 1]), rows=[2, 3, 4])
        >>> args = ([[0.3, 0.5, -0.4]], [[0.1, -0.2, 0.3]], [[1.0, 0.5, 0.2]])
        >>> bool(np.allclose(ma.augmented_object(*args).alpha_o, ma.forward(*args).alpha_o))
        True
        """
        s = self._setup(qs, qds, taus, f_o, gravity, check, tol)
        Lbar = self._lambda_bar(s)
        A = [X.T @ self.Pi.T for X in self.X_eo]
        Mcc = self.M_o + sum(A[r] @ Lbar[r] @ A[r].T for r in range(self.m))
        rhs = sum(bk.mv(A[r] @ Lbar[r], bk.mv(self.Pi, s.alpha_f[r])) for r in range(self.m)) - s.b_o
        alpha_o = np.linalg.solve(Mcc, rhs[..., None])[..., 0]
        lam = [bk.mv(Lbar[r], bk.mv(self.Pi, s.alpha_f[r]) - bk.mv(A[r].T, alpha_o)) for r in range(self.m)]
        return self._finish(s, lam, alpha_o)

    def _finish(self, s, lam: list, alpha_o) -> MultiArmResult:
        """Second innovations pass per arm: the object pushes arm r with −f_r at e_r (C9)."""
        f = [bk.mv(self.Pi.T, x) for x in lam]
        qdd = []
        for r, arm in enumerate(self.arms):
            t, kin = self.tips[r], s.kin[r]
            b = list(kin.b)
            b[t] = b[t] + bk.mv(self.X_ek[r].T, f[r])      # b − f_ext with f_ext = −φ(t, e) f_r
            qdd.append(innovations_passes(arm, s.art[r], s.taus[r][..., None], kin.a, b).qdd[..., 0])
        return MultiArmResult(qdd, f, lam, alpha_o)

    def kkt(self, qs: Sequence, qds: Sequence, taus: Sequence, f_o=None,
            gravity: bool = True) -> MultiArmResult:
        """The dense oracle of H1, H7, H9: one KKT solve from crba, bias, frame_jacobian and the drift.

        See :func:`opalg.closed.multiarm_kkt.kkt_solve` (single states only).

        Examples
        --------
        See :class:`MultiArm`.
        """
        return MultiArmResult(*kkt_solve(self, qs, qds, taus, f_o, gravity))
