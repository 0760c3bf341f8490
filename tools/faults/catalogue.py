r"""The fault catalogue: named, SOA-specific mistakes that the test suite must catch (issue 37).

Each :class:`Fault` is one small change to one function of the package, applied only to a scratch
copy of the repository by ``make faults`` (:mod:`tools.faults.run`).  It is keyed to the
function's qualified name (``"module:qualname"``) and to an exact snippet of that function's
source, never to a line number: :mod:`tools.faults.anchor` finds the function with :mod:`ast` and
the snippet inside it, exactly once, or reports the fault *stale*.  ``tests/test_faults_catalogue.py``
checks every anchor on each run of the suite, so a refactor that moves a recursion's mathematics
breaks a test, not only ``make faults``.

Fields: ``name`` (unique), ``area`` (the part of the package, see :data:`AREAS`), ``meaning``
(what the fault means physically), ``identity`` (the docs/REFERENCE.md id, or the oracle, that
should expose it), ``target``, ``old`` → ``new`` (the change) and ``tests`` (the test files that
should catch it, cheapest-first; ``make faults`` runs exactly these).

Anchors sit on mathematical lines of the recursions, which refactors keep; input checks and
bookkeeping are left alone.

Faults that survived their first selection of tests (issue 37's closing note), and what catches
them now:

* ``crba_body_column_not_transported``, ``crba_subtree_off_by_one`` (test_identities and
  test_crba_layout use the common-frame CRBA only): test_crba_sparse.py (frame="body" vs "world").
* ``symbolic_recursive_transport_term`` (test_symbolic.py compares Kane and Lagrange only):
  test_symbolic_free_root.py, the recursive bias against rnea with a prescribed root.
* ``crba_world_prismatic_dropped`` (test_identities' models all have a multi-axis joint, which
  sends the common-frame CRBA down its non-constant-subspace branch): test_crba_sparse.py,
  test_independent.py.
* ``aba_f_ext_sign`` (no identity-route test of the ABA with external forces; the Pinocchio
  oracle and test_exactness caught it): tests/test_faults_findings.py, the ABA with f_ext on
  trees against ℳ⁻¹(T + ΣJ*f − C).
"""

from __future__ import annotations

from faults.fault import AREAS, Fault
from faults.catalogue_derivatives import DERIVATIVE_FAULTS

__all__ = ["AREAS", "FAULTS", "Fault"]

T = "tests/"
IDENT, INDEP, PROP, CORE, BATCH = (T + "test_identities.py", T + "test_independent.py", T + "test_property.py",
                                   T + "test_core_values.py", T + "test_batch.py")
PIN, KANE = T + "test_oracle_pinocchio.py", T + "test_oracle_kane.py"

_RECURSION_FAULTS: tuple[Fault, ...] = (
    # ---------------------------------------------------------------- spatial algebra (§3)
    Fault("crf_equals_crm", "spatial",
          "the force cross product taken as the motion one: crf(V) = crm(V) instead of −crm(V)*, "
          "so V ×* f is not the dual of V × u (power is not conserved by the cross product)",
          "A3", "opalg.spatial.vectors:crf",
          "return -bk.mT(crm(V))", "return crm(V)",
          (IDENT, INDEP)),
    Fault("crm_lower_block_misplaced", "spatial",
          "angular and linear halves swapped in crm: v~ placed in the upper-right block, the "
          "linear-first layout, so V × u mixes the lever-arm term into the angular row",
          "A3, A4, A7", "opalg.spatial.vectors:crm",
          "out[..., 3:, :3] = v", "out[..., :3, 3:] = v",
          (IDENT, INDEP)),
    Fault("phi_free_is_phi_star", "spatial",
          "φ(x, y) built as its adjoint φ*(x, y): the lever-arm block l~ below the diagonal, so "
          "forces are moved like velocities",
          "A1, A2, A5", "opalg.spatial.vectors:phi_free",
          "[np.concatenate([eye, skew(l)], -1), np.concatenate([z, eye], -1)]",
          "[np.concatenate([eye, z], -1), np.concatenate([skew(l), eye], -1)]",
          (IDENT,)),
    Fault("motion_transform_lever_sign", "spatial",
          "the lever-arm block of ^BX_A with the wrong sign (+E r~): the origin offset r is "
          "taken from B to A instead of from A to B",
          "A2, A4 (and every recursion on float models)", "opalg.spatial.vectors:motion_transform",
          "out[3:, :3] = -(E @ skew(r))", "out[3:, :3] = E @ skew(r)",
          (IDENT, INDEP)),
    Fault("inertia_no_parallel_axis", "spatial",
          "the spatial inertia about O without the parallel-axis term −m p~p~: the rotational "
          "inertia is the one about the mass centre",
          "A6 (Steiner); the Pinocchio oracle", "opalg.spatial.vectors:spatial_inertia",
          "J = I_com - m * (px @ px)", "J = I_com + 0 * (px @ px)",
          (IDENT, CORE, PIN)),
    Fault("inertia_com_sign", "spatial",
          "the first moment m p~ with the wrong sign in the spatial inertia: the mass centre "
          "sits at −p (pitfall 7)",
          "A6; the Pinocchio oracle", "opalg.spatial.vectors:spatial_inertia",
          "np.concatenate([J, m * px], -1), np.concatenate([-m * px, m * eye], -1)",
          "np.concatenate([J, -m * px], -1), np.concatenate([m * px, m * eye], -1)",
          (CORE, PIN, IDENT)),
    # ---------------------------------------------------------------- kinematics (§5)
    Fault("coriolis_a_dropped", "kinematics",
          "the Coriolis (velocity-product) acceleration a(k) = V(k) × H*(k)θ̇(k) dropped for "
          "non-root bodies: the recursions stay mutually consistent (ℳ, ABA∘RNEA), only the "
          "velocity terms are wrong",
          "C4 (bias = Lagrangian terms), energy balance, Pinocchio/Kane oracles",
          "opalg.model.kinematics:_body_kinematics",
          "a[k] = cross_motion(V[k], vJ) + cJ\n", "a[k] = 0 * cross_motion(V[k], vJ) + cJ\n",
          (CORE, INDEP, PIN)),
    Fault("gyroscopic_b_dropped", "kinematics",
          "the gyroscopic force b(k) = V(k) ×* M(k)V(k) dropped: a spinning body feels no "
          "gyroscopic moment",
          "C4, energy balance, Pinocchio/Kane oracles", "opalg.model.kinematics:_body_kinematics",
          "b[k] = cross_force(V[k], bk.mv(model.I_spatial[k], V[k]))",
          "b[k] = 0 * cross_force(V[k], bk.mv(model.I_spatial[k], V[k]))",
          (CORE, INDEP, PIN)),
    Fault("gyroscopic_b_crm", "kinematics",
          "crm where crf belongs: the gyroscopic term computed as V × (MV) (motion cross "
          "product) instead of V ×* (MV)",
          "C4, energy balance, Pinocchio/Kane oracles", "opalg.model.kinematics:_body_kinematics",
          "b[k] = cross_force(V[k], bk.mv(model.I_spatial[k], V[k]))",
          "b[k] = cross_motion(V[k], bk.mv(model.I_spatial[k], V[k]))",
          (CORE, INDEP, PIN)),
    Fault("gravity_sign", "kinematics",
          "gravity with the wrong sign: the base acceleration +g instead of −g folded into the roots",
          "C5 (gravity torques = ∂U/∂q); Pinocchio oracle", "opalg.model.kinematics:_body_kinematics",
          "-model.gravity])", "model.gravity])",
          (CORE, INDEP, PIN)),
    Fault("multi_axis_H_transposed", "kinematics",
          "the joint map H of a multi-axis joint built with the transposed transform of the "
          "later axes, S_i = (X_m⋯X_{i+1})* s_i instead of X_m⋯X_{i+1} s_i",
          "K2 (axis-sequence kinematics vs a chain of 1-dof joints); Pinocchio oracle",
          "opalg.model.joints:joint_transform",
          "cols[i] = si if T is None else bk.mv(T, si)",
          "cols[i] = si if T is None else bk.mv(bk.mT(T), si)",
          (T + "test_joints.py", INDEP)),
    # ---------------------------------------------------------------- RNEA (§5, C2)
    Fault("rnea_inward_phi_star", "rnea",
          "φ* where φ belongs: the inward RNEA pass carries a child's force to the parent with "
          "the motion transform ^kX_℘ instead of its adjoint",
          "C2/C3 (T = ℳq̈ + C against CRBA)", "opalg.algorithms.rnea:rnea",
          "f[p] = f[p] + bk.mv(bk.mT(kin.Xup[k]), f[k])", "f[p] = f[p] + bk.mv(kin.Xup[k], f[k])",
          (CORE, IDENT)),
    Fault("rnea_chain_parent", "rnea",
          "the wrong parent in a tree: the inward pass adds a body's force to body k − 1, the "
          "parent on a chain numbered base to tip",
          "C2 on trees and relabelled trees", "opalg.algorithms.rnea:rnea",
          "for k in reversed(model.order):\n        p = model.parents[k]",
          "for k in reversed(model.order):\n        p = k - 1",
          (IDENT, CORE)),
    Fault("rnea_label_order_sweep", "rnea",
          "the outward sweep in label order instead of the tree's topological order: a body may "
          "be visited before its parent (relabelled trees, arbitrary label order)",
          "C2 on relabelled trees (labels not parents-first)", "opalg.algorithms.rnea:rnea",
          "for k in model.order:\n        p = model.parents[k]\n        acc",
          "for k in sorted(model.order, key=lambda j: -j):\n        p = model.parents[k]\n        acc",
          (IDENT, CORE, PROP)),
    # ---------------------------------------------------------------- CRBA (§6)
    Fault("composite_inertia_phi_star", "crba",
          "φ vs φ*: the composite inertia moved inward as ^kX_℘ R ^kX_℘* instead of "
          "φ R φ* = ^kX_℘* R ^kX_℘",
          "D1/D3 (ℳ(k,k) = H R H*), C3", "opalg.algorithms.crba:composite_inertias",
          "bk.mm(bk.mm(bk.mT(kin.Xup[k]), R[k]), kin.Xup[k])",
          "bk.mm(bk.mm(kin.Xup[k], R[k]), bk.mT(kin.Xup[k]))",
          (IDENT, T + "test_floating.py")),
    Fault("crba_body_column_not_transported", "crba",
          "the body-frame CRBA forgets to move the subtree's composite-force columns to the "
          "parent frame (F ← φ(℘k,k) F skipped)",
          "D4 (off-diagonal blocks), frame='body' vs frame='world'", "opalg.algorithms.crba:_crba_body",
          "W[..., sc:ec, :] = bk.mm(W[..., sc:ec, :], kin.Xup[c])",
          "W[..., sc:ec, :] = W[..., sc:ec, :] + 0 * kin.Xup[c][..., :1, :]",
          (T + "test_crba_sparse.py",)),
    Fault("crba_subtree_off_by_one", "crba",
          "an off-by-one in the dof layout: body k's subtree rows end one dof early, so the "
          "last dof of every subtree loses its coupling to the ancestors",
          "D4/D5 (ℳ against HφMφ*H*)", "opalg.algorithms.crba:_crba_body",
          "a, b, e = start[k], start[k] + model.joints[k].ndof, stop[k]",
          "a, b, e = start[k], start[k] + model.joints[k].ndof, stop[k] - 1",
          (T + "test_crba_sparse.py",)),
    Fault("crba_world_no_composite", "crba",
          "the common-frame CRBA skips the inward sum R⁰(℘k) += R⁰(k): each body's own inertia "
          "is used as its composite one",
          "D1/D8 (common frame vs body frame), C3", "opalg.algorithms.crba_world:world_columns",
          "            Rw[ps] += Rw[ks]\n", "            Rw[ps] += 0 * Rw[ks]\n",
          (CORE, IDENT)),
    # ---------------------------------------------------------------- Riccati (§7, E1–E3, E11)
    Fault("riccati_P_not_P_plus", "riccati",
          "P where P⁺ belongs (τ̄ = I − GH skipped): the parent receives the child's articulated "
          "inertia P unprojected, as if the joint were locked",
          "E1/E2, E6 (ℳ = LDL*), E8 (ℳℳ⁻¹ = I)", "opalg.algorithms.riccati:_riccati",
          "P[p] = P[p] + bk.mT(kin.Xup[k]) @ Pk @ kin.Xup[k]",
          "P[p] = P[p] + bk.mT(kin.Xup[k]) @ P[k] @ kin.Xup[k]",
          (CORE, IDENT)),
    Fault("riccati_label_order", "riccati",
          "the Riccati sweep in reversed label order instead of reversed topological order: "
          "correct only when labels are parents-first",
          "E1 on relabelled trees (arbitrary label order)", "opalg.algorithms.riccati:_riccati",
          "for k in reversed(model.order):\n        S, Pk = kin.S[k], P[k]",
          "for k in reversed(range(n)):\n        S, Pk = kin.S[k], P[k]",
          (IDENT, CORE, PROP)),
    Fault("riccati_pivot_order", "riccati",
          "the axes of a multi-axis joint eliminated base-most first while the passes undo them "
          "tip-most first: the E11 factors U_i, d_i are paired with the wrong axes",
          "E11 (multi-axis pivots), E9 (ABA vs RNEA) on multi-axis joints",
          "opalg.algorithms.riccati:_riccati",
          "for i in reversed(axes[k]):", "for i in axes[k]:",
          (CORE, IDENT, T + "test_joints.py")),
    Fault("tau_bar_skipped", "operators",
          "τ̄ = I − GH skipped in the operator objects: τ̄(k) = I, so ℰψ = ℰφ",
          "E3 (τ̄ projector), E4 (ψ), E7 (L⁻¹ = I − HψK)", "opalg.algorithms.riccati:Articulated.tau_bar",
          "return [bk.eye(6, G) - bk.mm(G, bk.mT(S)) for G, S in zip(self.G, self.S)]",
          "return [bk.eye(6, G) - 0 * bk.mm(G, bk.mT(S)) for G, S in zip(self.G, self.S)]",
          (IDENT, T + "test_algebra.py")),
    # ---------------------------------------------------------------- ABA / innovations (E6–E9, F2)
    Fault("aba_inward_phi_star", "aba",
          "φ* where φ belongs in the innovations' inward pass: z⁺(c) carried to the parent as a "
          "motion vector",
          "E9 (ABA ∘ RNEA = id), E8", "opalg.algorithms.aba:innovations_passes",
          "zk = zk + bk.mm(bk.mT(kin.Xup[c]), zp[c])", "zk = zk + bk.mm(kin.Xup[c], zp[c])",
          (CORE, IDENT)),
    Fault("aba_outward_phi", "aba",
          "φ where φ* belongs in the outward pass: the parent's acceleration carried with the "
          "force transform, α⁺(k) = φ(℘k,k) α(℘k)",
          "E9, E8", "opalg.algorithms.aba:innovations_passes",
          "bk.mm(kin.Xup[k], alpha[p])", "bk.mm(bk.mT(kin.Xup[k]), alpha[p])",
          (CORE, IDENT)),
    Fault("aba_coriolis_a_dropped_in_z", "aba",
          "the Coriolis acceleration dropped from the inward pass z = ψ(KT + Pa + b) (kept in "
          "the outward pass): ABA no longer inverts RNEA at nonzero velocity",
          "E9 (ABA ∘ RNEA = id at q̇ ≠ 0)", "opalg.algorithms.aba:innovations_passes",
          "own = (bk.mm(art.P[k], ak) if ak is not None else 0)",
          "own = (0 * bk.mm(art.P[k], ak) if ak is not None else 0)",
          (CORE, IDENT)),
    Fault("aba_G_star_dropped", "aba",
          "θ̈(k) = D⁻¹ε(k) without −G*(k)α⁺(k): a child does not feel its parent's acceleration",
          "E9, E7b", "opalg.algorithms.riccati:Articulated.pivot_outward",
          "qi = bk.div(eps[i] - bk.mm(bk.mT(self.U[k][i]), alpha), self.d[k][i])",
          "qi = bk.div(eps[i] - 0 * bk.mm(bk.mT(self.U[k][i]), alpha), self.d[k][i])",
          (CORE, IDENT)),
    Fault("upsilon_psi_without_tau_bar", "aba",
          "Υ recursion with φ where ψ = φτ̄ belongs: τ̄ skipped in ψ(℘k,k)",
          "F2 (Υ = Ω(k,k)), F6 (diag ℳ⁻¹)", "opalg.algorithms.aba:upsilon_psi",
          "(bk.eye(6, G) - bk.mm(G, bk.mT(S)))", "(bk.eye(6, G) - 0 * bk.mm(G, bk.mT(S)))",
          (IDENT, CORE)),
    Fault("minv_diag_K_without_phi", "aba",
          "K(℘k,k) = G(k) instead of φ(℘k,k)G(k) in the diagonal of ℳ⁻¹",
          "F6 (diag ℳ⁻¹ vs inv(ℳ))", "opalg.algorithms.aba:minv_diag",
          "Kk = bk.mT(art.kin.Xup[k]) @ art.G[k]", "Kk = art.G[k]",
          (IDENT, CORE)),
    # ---------------------------------------------------------------- operator objects (§4)
    Fault("spo_outward_untransposed", "operators",
          "the adjoint φ* of the propagation operator applied with E(℘k,k) instead of "
          "E(℘k,k)*: φ* is not the transpose of φ",
          "B1/B2, C1a (V = φ*H*θ̇), C3 (ℳ = HφMφ*H*)", "opalg.algebra.operators:SPO.apply_matrix",
          "ys[k] = ys[k] + bk.mT(e.blocks[k]) @ ys[p]", "ys[k] = ys[k] + e.blocks[k] @ ys[p]",
          (IDENT, T + "test_algebra.py")),
    Fault("soa_K_without_phi", "operators",
          "the Kalman gain operator K with block G(k) instead of φ(℘k,k)G(k)",
          "E6 (ℳ = (I + HφK)D(I + HφK)*), E7", "opalg.algebra.soa:SpatialOperators.K",
          "[bk.mT(X) @ G for X, G in zip(self.kin.Xup, self.art.G)]",
          "[G + 0 * bk.mT(X)[..., :, :1] for X, G in zip(self.kin.Xup, self.art.G)]",
          (IDENT, T + "test_algebra.py")),
    # ---------------------------------------------------------------- hybrid (§9)
    Fault("hybrid_active_accel_dropped", "hybrid",
          "the prescribed active accelerations left out of a′(k) = a(k) + H_a*(k)θ̈_a(k): the "
          "passive dofs do not feel the actuated motion",
          "G1/G2 (hybrid vs the partitioned dense solve)", "opalg.algorithms.aba:innovations_passes",
          "ak = (0 if ak is None else ak) + bk.mm(art.S_active[k], qdd_a[..., rows_a[k], :])",
          "ak = (0 if ak is None else ak) + 0 * bk.mm(art.S_active[k], qdd_a[..., rows_a[k], :])",
          (T + "test_hybrid.py", T + "test_hybrid_operators.py")),
    Fault("hybrid_active_force_without_z", "hybrid",
          "the active forces T_a(k) = H_a(k)[P_h(α⁺ + H_p*θ̈_p) + z(k)] without z: the "
          "bias and the subtree's forces are not felt by the actuators",
          "G2, G3 (ℳ_aa − ℳ_apℳ_pp⁻¹ℳ_pa)", "opalg.algorithms.aba:innovations_passes",
          "bk.mm(art.P[k], al) + zk)", "bk.mm(art.P[k], al) + 0 * zk)",
          (T + "test_hybrid.py", T + "test_underactuated.py")),
    # ---------------------------------------------------------------- closed chains (§10)
    Fault("closure_jacobian_wrong_body", "closed",
          "the loop-closure Jacobian of frame 1 taken at its body's parent (its own joint's "
          "column missing)",
          "H2 (G_c against finite differences of the closure error), H5 vs the KKT solve",
          "opalg.closed.geometry:constraint_jacobian",
          "J = frame_columns(model, kin, c.body1, c.X1)",
          "J = frame_columns(model, kin, max(model.parents[c.body1], 0), c.X1)",
          (T + "test_closed.py", T + "test_closed_fast.py")),
    Fault("closure_drift_velocity_term", "closed",
          "the closure drift U = −Ġ_cθ̇ without its velocity product crm(V_rel) X12 V_e2",
          "H3 (drift against d/dt of G_cθ̇)", "opalg.closed.geometry:drift",
          "rel = a1 - bk.mv(X12, a2) + cross_motion(V1 - V2, V2)", "rel = a1 - bk.mv(X12, a2)",
          (T + "test_closed.py", T + "test_closed_fast.py")),
    # ---------------------------------------------------------------- quasi-velocities (J1–J6)
    Fault("quasi_nu_is_qd", "quasi",
          "ν and θ̇ confused: ν(k) = θ̇(k), the G*(k)φ*(℘k,k)V(℘k) term dropped",
          "J1 (½θ̇*ℳθ̇ = ½ν*Dν), J2 vs (I + HφK)*θ̇", "opalg.quasi.velocities:nu_pass",
          "out[k], V[k] = qdk - minus_G_star(art, k, Vp), Vp + vJ",
          "out[k], V[k] = qdk, Vp + vJ",
          (T + "test_quasi_velocities.py",)),
    Fault("quasi_velocity_from_nu", "quasi",
          "ν where θ̇ belongs in the J3 recursion: the body velocity built as V⁺ + H*ν",
          "J3 (θ̇ = (I − HψK)*ν), J1", "opalg.quasi.velocities:qd_pass",
          "V[k] = Vp + bk.mv(kin.S[k], out[k])", "V[k] = Vp + bk.mv(kin.S[k], nuk)",
          (T + "test_quasi_velocities.py",)),
    # ---------------------------------------------------------------- Fijany (I0–I4)
    Fault("fijany_schur_term_missing", "fijany",
          "the Schur complement ℳ⁻¹ = C − B*A⁻¹B without its B*F_c term in the forward solve",
          "I1/I4 (q̈ against the ABA)", "opalg.fijany.factors:_forward",
          "qdd = F.C @ tau + F.B.T @ Fc - F.H_hat @ y", "qdd = F.C @ tau - F.H_hat @ y",
          (T + "test_fijany.py", T + "test_fijany_forward.py")),
    Fault("fijany_sibling_block_dropped", "fijany",
          "the sibling blocks Q(k,j) = ^kX_℘ M⁻¹(℘) ^jX_℘* of Q dropped: siblings are decoupled "
          "(right on chains, wrong on trees)",
          "I0/I2 on trees", "opalg.fijany.factors:_q_blocks",
          "Q[k, j] = Xup[k] @ Minv[p] @ bk.mT(Xup[j])", "Q[k, j] = 0 * (Xup[k] @ Minv[p] @ bk.mT(Xup[j]))",
          (T + "test_fijany.py", T + "test_fijany_forward.py")),
    # ---------------------------------------------------------------- flexible bodies (K3–K5)
    Fault("flex_stiffness_dropped", "flex",
          "the elastic stiffness 𝒦η dropped from the flexible nodes' generalized forces",
          "K4/K5 (static deflection, energy balance with the strain energy)",
          "opalg.flex.dynamics:_stiffness",
          "out[s] = b.K @ x[s] + b.D @ v[s]", "out[s] = 0 * (b.K @ x[s]) + b.D @ v[s]",
          (T + "test_flex.py", T + "test_flex_beam.py", T + "test_flex_exact.py")),
    Fault("flex_riccati_P_not_P_plus", "flex",
          "P where P⁺ belongs on enlarged nodes: Φ P Φ* passed to the parent",
          "K5 (flex ABA vs CRBA solve), E2 on flexible nodes", "opalg.flex.dynamics:_articulated",
          "P[k] = P[k] + Ps.T @ Pp[c] @ Ps", "P[k] = P[k] + Ps.T @ P[c] @ Ps",
          (T + "test_flex.py", T + "test_flex_exact.py")),
    # ---------------------------------------------------------------- floating base (K8–K11)
    Fault("momentum_phi_star", "floating",
          "φ* where φ belongs in the momentum sweep: h(℘) += ^kX_℘ h(k) (a momentum moved as a "
          "velocity)",
          "K10 (h = A_G v, conservation in free flight), K11", "opalg.algorithms.momentum:subtree_momenta",
          "h[p] = h[p] + bk.mv(bk.mT(Xup[k]), h[k])", "h[p] = h[p] + bk.mv(Xup[k], h[k])",
          (T + "test_momentum.py", T + "test_floating.py")),
    Fault("base_velocity_coupling_dropped", "floating",
          "the base twist at zero momentum without the arm's coupling momentum ℳ_bm θ̇: the base "
          "does not react to the arm",
          "K11 (v_b = −ℳ_bb⁻¹ℳ_bm θ̇)", "opalg.floating.base:base_velocity",
          "rhs = -hm", "rhs = 0 * hm",
          (T + "test_floating.py",)),
    # ---------------------------------------------------------------- symbolic route (K13)
    Fault("symbolic_recursive_transport_term", "symbolic",
          "the symbolic recursive bias without the transport term −Ω_j × (Gω_p) of ω̇_j "
          "(Ġ = −Ω~G forgotten)",
          "bias('recursive') = bias('kane') = bias('lagrange')",
          "opalg.symbolic.recursive_bias:recursive_bias",
          "wd = mm(G, wdp) - Om.cross(Gw) + mm(Om.jacobian(system.q), qd)",
          "wd = mm(G, wdp) + mm(Om.jacobian(system.q), qd)",
          (T + "test_symbolic_free_root.py::test_recursive_bias_with_a_prescribed_root_against_rnea",
           T + "test_symbolic_free_root.py::test_random_trees_against_the_operator_route")),
    Fault("symbolic_kane_gyroscopic", "symbolic",
          "Kane's bias without the gyroscopic moment ω × Iω",
          "bias('kane') = bias('lagrange'), the operator route (K13)", "opalg.symbolic.tree:TreeSystem.bias",
          "B += mm(k[\"Jw\"].T, mm(b.inertia, wdot) + w.cross(mm(b.inertia, w)))",
          "B += mm(k[\"Jw\"].T, mm(b.inertia, wdot))",
          (T + "test_symbolic.py",)),
    # ---------------------------------------------------------------- Ider's method (H10)
    Fault("ider_force_along_B", "ider",
          "Ider's control force applied along the constraint directions B instead of the force "
          "directions Z (the collocated assumption)",
          "H10 / Ider eq. 17 (passes vs the dense augmented solve)",
          "opalg.algorithms.constrained.passes:solve_passes",
          "WZ = W[:, -c:]", "WZ = W[:, :c]",
          (T + "test_constrained.py",)),
    # ---------------------------------------------------------------- external forces (C9), in every route
    Fault("aba_f_ext_sign", "aba",
          "an external force entered with the wrong sign in the ABA, b(k) + f_ext(k): the push "
          "pulls",
          "C9 (ABA ∘ RNEA = id with f_ext; ℳq̈ + C = T + ΣJ*f_ext)", "opalg.algorithms.aba:aba",
          "[kin.b[k] - f_ext[..., k, :] for k in range(model.n)]",
          "[kin.b[k] + f_ext[..., k, :] for k in range(model.n)]",
          (T + "test_faults_findings.py", PIN, T + "test_exactness.py")),
    Fault("hybrid_f_ext_sign", "hybrid",
          "an external force with the wrong sign in hybrid dynamics",
          "C9 + G2 (hybrid vs the dense partitioned solve with f_ext)", "opalg.algorithms.hybrid:hybrid_on",
          "[kin.b[k] - f_ext[..., k, :] for k in range(model.n)]",
          "[kin.b[k] + f_ext[..., k, :] for k in range(model.n)]",
          (T + "test_hybrid.py",)),
    Fault("closed_f_ext_sign", "closed",
          "an external force with the wrong sign in the closed-chain column passes",
          "C9 + H5 (column passes vs the KKT solve with f_ext)", "opalg.closed.passes:column_passes",
          "kin.b[k] - f_ext[..., k, :])", "kin.b[k] + f_ext[..., k, :])",
          (T + "test_closed.py", T + "test_closed_fast.py")),
    Fault("quasi_f_ext_sign", "quasi",
          "an external force with the wrong sign in the dynamic form of ν̇",
          "J5 (ν̇ from the innovations vs ν̇ from the ABA's θ̈, with f_ext)", "opalg.quasi.accel:dynamic_pass",
          "b = b - f_ext[..., k, :]", "b = b + f_ext[..., k, :]",
          (T + "test_quasi_accel.py",)),
    # ---------------------------------------------------------------- more of the subtle ones
    Fault("quasi_rates_transport_sign", "quasi",
          "Ṗ(℘k) with the transport terms −crm(s)*P⁺ − P⁺crm(s) of the moving child frame "
          "taken with the wrong sign",
          "J6 (Ṗ, Ḋ, Ġ against the complex-step derivative along the motion)", "opalg.quasi.rates:rates_pass",
          "(Ppd[k] - bk.mT(PpC) - PpC)", "(Ppd[k] + bk.mT(PpC) + PpC)",
          (T + "test_quasi_rates.py", T + "test_quasi_accel.py")),
    Fault("quasi_gravity_base_correction", "quasi",
          "gravity as a base acceleration without the G*·ᵏX₀[0; g] correction of the non-root "
          "bodies' ν̇ (the weight is not a body force then)",
          "J5 (gravity_as='base' equals gravity_as='body')", "opalg.quasi.accel:dynamic_pass",
          "w = w + g[k]", "w = w + 0 * g[k]",
          (T + "test_quasi_accel.py",)),
    Fault("multi_axis_cJ_order", "kinematics",
          "the velocity-product term of a multi-axis joint with its factors in the wrong order, "
          "c_J = Σ_{i<j} (S_jq̇_j) × (S_iq̇_i): the Coriolis term of a universal/spherical joint "
          "with the wrong sign",
          "K2 (multi-axis joint = chain of 1-dof joints), C4, Pinocchio", "opalg.model.joints:joint_velocity",
          "cJ = cJ + cross_motion(cols[i], cols[j])", "cJ = cJ + cross_motion(cols[j], cols[i])",
          (T + "test_joints.py", INDEP)),
    Fault("helical_pitch_sign", "kinematics",
          "the helical joint's axis [s; h s] with the pitch reversed while its transform "
          "advances +h q: the motion subspace is not the derivative of the joint transform",
          "K2 (S = d X_J/dq X_J⁻¹), C1b (velocities from pose rates)", "opalg.model.axes:Helical.local",
          "return np.concatenate([s, s * h])", "return np.concatenate([s, -s * h])",
          (T + "test_joints.py", INDEP)),
    Fault("crba_world_prismatic_dropped", "crba",
          "the common-frame CRBA forgets the linear part of prismatic and helical axes "
          "(S⁰ = [A s_a; p × A s_a] only)",
          "D8 vs the body-frame route, C3 on models with prismatic/helical joints",
          "opalg.algorithms.crba_world:world_columns",
          "            v += _times_const(A, S[:, 3:])", "            v += 0 * _times_const(A, S[:, 3:])",
          (T + "test_crba_sparse.py", INDEP)),
    Fault("closure_ground_gravity_leak", "closed",
          "for a closure to the ground, the base acceleration −g left in the frame's α_e1 of the "
          "free column: gravity enters the closure's acceleration constraint",
          "H3/H5 (column passes vs the KKT solve under gravity)", "opalg.closed.passes:frame_rows",
          "rel[..., 0] = rel[..., 0] - bk.mv(A, gravity_acc)", "rel[..., 0] = rel[..., 0] - 0 * bk.mv(A, gravity_acc)",
          (T + "test_closed.py", T + "test_closed_fast.py")),
    Fault("lambda_inv_root_not_nca", "operators",
          "the operational-space inertia of two frames through the root instead of their nearest "
          "common ancestor k_r ∧ k_s",
          "F3/F5 (Λ⁻¹ = Jℳ⁻¹J* on trees)", "opalg.algorithms.operational:omega_frames",
          "c = common[0]", "c = common[-1]",
          (IDENT, T + "test_closed.py")),
    Fault("momentum_root_transform", "floating",
          "the subtree momentum of a root moved to the inertial frame with ʳX₀ instead of ʳX₀* "
          "(a momentum moved as a velocity)",
          "K10 (h₀ against Σ of the bodies' momenta)", "opalg.algorithms.momentum:spatial_momentum",
          "sum(bk.mv(bk.mT(kin.Xup[r]), h[r]) for r in roots)", "sum(bk.mv(kin.Xup[r], h[r]) for r in roots)",
          (T + "test_momentum.py", T + "test_floating.py")),
    Fault("centroidal_moment_sign", "floating",
          "the centroidal momentum moved from the origin to the mass centre with the wrong sign, "
          "n_G = n₀ + c × F",
          "K10 (A_G v = h_G; h_G conserved in free flight)", "opalg.algorithms.momentum:centroidal_momentum_matrix",
          "n = A0[..., :3, :] - np.cross(", "n = A0[..., :3, :] + np.cross(",
          (T + "test_momentum.py", T + "test_floating.py")),
)

#: Every fault: the recursions and topics above, then the derivatives and linearizations.
FAULTS: tuple[Fault, ...] = _RECURSION_FAULTS + DERIVATIVE_FAULTS
