r"""Faults of the derivatives and linearizations (docs/REFERENCE.md E13–E20, G6, H11, K14).

Part of the catalogue (:mod:`faults.catalogue` holds the fields' meaning and joins the tuples).
"""

from __future__ import annotations

from faults.fault import Fault

T = "tests/"

DERIVATIVE_FAULTS: tuple[Fault, ...] = (
    Fault("derivatives_coriolis_tangent_dropped", "derivatives",
          "the tangent Newton–Euler recursion without δV × v_J, the derivative of the Coriolis "
          "term a(k) along the directions",
          "E14 (∂T/∂θ, ∂T/∂θ̇ against the complex step of rnea)", "opalg.algorithms.derivatives:tangent_rnea",
          "dak = dak + dVk @ _contiguous(crf(vJ))", "dak = dak + 0 * (dVk @ _contiguous(crf(vJ)))",
          (T + "test_derivatives.py",)),
    Fault("hybrid_derivatives_active_rnea_dropped", "derivatives",
          "the active forces' derivative without ∂R_a/∂x: only the inertial reaction ℳ_ap ∂θ̈_p/∂x of the "
          "passive accelerations, as if the actuated joints' own Coriolis and gravity forces did not move",
          "G6 (∂T_a/∂x against the complex step of hybrid)",
          "opalg.algorithms.derivatives_hybrid:_hybrid_derivatives",
          "tau_d[j][..., ai, :] = out_a[..., :, cols] + dR[..., a, cols]",
          "tau_d[j][..., ai, :] = out_a[..., :, cols]",
          (T + "test_derivatives_hybrid.py",)),
    Fault("hybrid_derivatives_residual_sign", "derivatives",
          "the differentiated hybrid problem driven by +∂R_p δx instead of −∂R_p δx: the passive "
          "accelerations pushed along the force change instead of against it",
          "G6 (∂θ̈_p/∂x = −ℳ_pp⁻¹∂R_p/∂x against the complex step of hybrid and an LU solve)",
          "opalg.algorithms.derivatives_hybrid:_hybrid_derivatives",
          "T_rhs = np.concatenate([-dR[..., p, :],", "T_rhs = np.concatenate([dR[..., p, :],",
          (T + "test_derivatives_hybrid.py",)),
    Fault("closed_linearize_velocity_tangent", "closed",
          "the tangent basis without −G_c⁺∂(G_cθ̇)Z in its velocity rows: a moving mechanism's "
          "perturbed velocities leave the velocity constraint G_cθ̇ = 0",
          "H11 (T tangent to G_cθ̇ = 0, A against differences of forward in the chart)",
          "opalg.closed.linearize:linearize",
          "Tv = np.concatenate([-Gp @ np.einsum(", "Tv = np.concatenate([0 * Gp @ np.einsum(",
          (T + "test_closed_linearize.py",)),
    Fault("compliance_complex_conjugated", "closed",
          "the complex step's compliance solve conjugates A (a Hermitian solve of a complex-symmetric "
          "matrix): Im λ / h changes sign where Ȧ enters",
          "H5 (complex step of solve_compliance against −A⁺ȦA⁺r; H11 against the complex step of forward)",
          "opalg.closed.solve:_solve_complex",
          "W = np.where(both, bk.mT(V) @ Ab @ V, np.eye(m))",
          "W = np.where(both, bk.mT(V) @ Ab.conj() @ V, np.eye(m))",
          (T + "test_closed_fast.py", T + "test_closed_linearize.py")),
    Fault("flex_linearize_rnea_at_rest", "flex",
          "∂T taken at ẍ = 0 instead of the forward dynamics' ẍ: the derivative of the inertial "
          "forces ℳ(x)ẍ along x is lost",
          "K14 (A against central differences of flex.aba)", "opalg.flex.linearize:linearize",
          "dT[:, j] = _rnea(fm, x + E[j], v, xdd, gravity).imag / H_CS",
          "dT[:, j] = _rnea(fm, x + E[j], v, 0 * xdd, gravity).imag / H_CS",
          (T + "test_flex_linearize.py",)),
)
