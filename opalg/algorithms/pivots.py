r"""The scale-free singularity tests of the Riccati recursion's pivots (docs/REFERENCE.md E12).

Axis i of a joint "moves no mass" when D_ii ≤ c·ε·s_i with
s_i = (|ω_i|² tr P_ωω + |v_i|² tr P_vv)/3 ([ω_i; v_i] = S_i, P = P(k)), and the
axes are dependent at q (a singular configuration, e.g. gimbal lock) when a
pivot d_i ≤ c·ε·D_ii (the pivot of the correlation matrix of D; the d_i are the
E11 pivots of :mod:`opalg.algorithms.riccati`).  Both sides scale alike under any change of
length or mass units, so a 1 mm / 1 mg arm is judged exactly like a 1 m / 1 kg one.

:func:`opalg.algorithms.riccati.articulated` runs them (:func:`_check_axis`) on every axis before its
pivot is used, for one state and for a batch alike.
"""

from __future__ import annotations

import numpy as np

from opalg.errors import ModelError, SingularConfigurationError
from opalg.model.multibody import Model

#: c of the E12 tests: a pivot within c·ε of its scale is rounding noise.  At that
#: point cond(ℳ) ≳ 1/(c ε) ≈ 1.4e14 and a dense LU solve has lost all accuracy too.
PIVOT_TOL = 32 * np.finfo(float).eps


def _mass_scale(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tr P_ωω / 3, tr P_vv / 3): the unit-consistent sizes of P's two diagonal blocks."""
    return P[..., :3, :3].trace(axis1=-2, axis2=-1) / 3, P[..., 3:, 3:].trace(axis1=-2, axis2=-1) / 3


def _check_axis(model: Model, k: int, i: int, s, d_i, P, scale, kin, q, first: bool) -> None:
    """The E12 tests for axis i of body k, before its pivot is used (numeric only).

    ``first``: axis i is the first one eliminated, so its pivot d_i is D_ii itself and
    only the mass test applies (1-dof joints never need the dependency test).
    """
    s = s[..., 0]
    d_i = d_i[..., 0, 0]
    # D_ii = S_i* P(k) S_i, before any axis of body k was eliminated.
    D_ii = d_i if first else np.einsum("...i,...ij,...j->...", s, P, s)
    ref = (s[..., :3] ** 2).sum(-1) * scale[0] + (s[..., 3:] ** 2).sum(-1) * scale[1]
    mass_ok = D_ii > PIVOT_TOL * ref
    pivot_ok = np.True_ if first else d_i > PIVOT_TOL * D_ii
    if mass_ok.all() and pivot_ok.all():   # (almost every axis: nothing more to compute)
        return
    # Non-finite values come from an overflow, which the overflow guard reports as one.
    finite = np.isfinite(D_ii) & np.isfinite(ref)
    bad = ~mass_ok & finite
    if np.any(bad):
        raise ModelError(
            f"body {k} ({model.names[k]}), joint {model.joint_names[k]}, axis {i}: moves no mass at "
            f"this configuration (H P H* = {_first(D_ii, bad):.3e} against its scale "
            f"{_first(ref, bad):.3e}); the joint's subtree is massless along this axis"
        )
    if first:
        return
    bad = ~pivot_ok & finite & np.isfinite(d_i)
    if np.any(bad):
        idx = tuple(int(j) for j in np.argwhere(bad)[0]) if np.ndim(bad) else ()
        qk = np.asarray(np.broadcast_to(q, kin.batch + q.shape[-1:])[idx])[model.q_slice[k]]
        where = f" at batch index {idx}" if idx else ""
        sl = model.q_slice[k]
        raise SingularConfigurationError(
            f"body {k} ({model.names[k]}), joint {model.joint_names[k]}: singular configuration{where}, "
            f"q[{sl.start}:{sl.stop}] = {np.round(qk, 12).tolist()}: its axes are dependent here "
            f"(pivot of axis {i} is {_first(d_i / D_ii, bad):.1e} of its diagonal; e.g. an "
            "Euler-angle joint in gimbal lock)",
            body=k, joint=model.joint_names[k], q=qk,
        )


def _first(x, mask) -> float:
    x = np.broadcast_to(x, np.shape(mask)) if np.ndim(mask) else x
    return float(x[mask][0]) if np.ndim(mask) else float(x)
