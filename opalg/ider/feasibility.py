r"""Why a run of :func:`opalg.ider.simulate` stops, as series a picture can show.

Two measures end a run (both in (0, 1], 0 singular), and the panel plots both against the
stop threshold :data:`opalg.ider.STOP_TOL`:

* κ(t), :func:`opalg.algorithms.constrained.conditioning` of (ℳ(θ), B(θ), Z): the cosine of the largest
  principal angle between the rows of B and of the force directions Z in the ℳ⁻¹ metric.  The
  Schur complement S = B ℳ⁻¹ Zᵀ of the augmented system is singular exactly when κ = 0, and
  the forces grow like 1/κ on the way there;
* ρ(t) = σ_min/σ_max of the tip Jacobian B (:func:`opalg.ider.reach_measure`): 0 where the
  links align, as when the path leaves the disc the arm can reach.

:func:`display_limits` is the rule by which the panel keeps an axis readable when the
moments blow up at a stop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg.errors import StateError
from opalg.ider.geometry import reach_measure
from opalg.ider.singular import STOP_TOL

__all__ = ["FeasibilitySeries", "kappa_series", "display_limits"]


@dataclass(frozen=True)
class FeasibilitySeries:
    """κ(t) and ρ(t) at the samples of a run, the threshold and the stop time.

    ``t`` (s), ``kappa`` and ``reach`` have one entry per sample; ``stop_tol`` is the threshold
    at which the run stops; ``t_stop`` (s) the stop time (the run's ``t_stop``), None for a run
    that completed.
    """

    t: np.ndarray
    kappa: np.ndarray
    reach: np.ndarray
    stop_tol: float
    t_stop: float | None


def kappa_series(result, stop_tol: float | None = None) -> FeasibilitySeries:
    r"""The feasibility measures along a run: κ(t), ρ(t), the threshold and the stop time.

    κ is the sampled :func:`opalg.algorithms.constrained.conditioning` the run carries
    (``result.conditioning``, evaluated at each sample by :func:`opalg.ider.simulate`: the
    measure its stop event watches, κ = σ_min(Q_Bᵀ Q_Z) with Q_B, Q_Z orthonormal bases of
    the rows of B L⁻ᵀ and Z L⁻ᵀ, ℳ = L Lᵀ); ρ = σ_min/σ_max of B(θ) is evaluated here at each
    sampled θ by :func:`opalg.ider.reach_measure`.

    Parameters
    ----------
    result : opalg.simulate.Trajectory
        A run of :func:`opalg.ider.simulate`.
    stop_tol : float, optional
        The threshold to draw; default the one the run was simulated with
        (``result.settings["stop_tol"]``, else :data:`opalg.ider.STOP_TOL`).

    Examples
    --------
    >>> from opalg import ider
    >>> r = ider.simulate("no motor at joint 3", t_eval=[0.0, 0.1, 0.2], refine=False)
    >>> s = ider.kappa_series(r)
    >>> r.status, r.event, s.stop_tol, bool(s.kappa.min() > s.stop_tol), round(s.t_stop, 3)
    ('event', 'singular', 0.001, True, 0.259)
    """

    if not hasattr(result, "conditioning") or not hasattr(result, "q"):
        raise StateError(f"kappa_series needs a run of opalg.ider.simulate, got {type(result).__name__}")
    if stop_tol is None:
        stop_tol = (getattr(result, "settings", None) or {}).get("stop_tol", STOP_TOL)
    tol = float(stop_tol)
    q = np.asarray(result.q, dtype=float)
    reach = np.array([reach_measure(qi) for qi in q]) if len(q) else np.zeros(0)
    t_stop = None if result.status == "completed" else result.t_stop
    return FeasibilitySeries(np.asarray(result.t, dtype=float), np.asarray(result.conditioning, dtype=float),
                             reach, tol, None if t_stop is None else float(t_stop))


def display_limits(t, y, t_stop: float | None = None, tail: float = 0.02,
                   pad: float = 0.08) -> tuple[float, float]:
    r"""y-limits of a plot of y(t) that keep it readable when y blows up at a stop.

    For a run that stopped at ``t_stop`` the forces grow like 1/κ as κ → 0, so an axis
    scaled to all samples shows the last one and flattens the rest.  The limits are the range
    of the samples before the last ``tail`` of the run, i.e. with t < t₀ + (1 − tail)(t_stop − t₀),
    and never including the last sample (at the 0.01-s sampling of the panel, 2 % of a
    0.26-s run holds no sample), widened by ``pad`` of the range on each side.  The curves
    beyond are cut at the frame; the caller says so.  A run that completed (``t_stop`` None)
    uses all samples.

    Parameters
    ----------
    t : (n,) array_like
        Sample times (s), increasing.
    y : (n,) or (n, k) array_like
        The plotted values (all columns share the limits).
    t_stop : float, optional
        Stop time (s) of a run that did not complete.
    tail, pad : float
        Fractions of the run and of the range, in [0, 1).

    Returns
    -------
    (lo, hi) : tuple of float, lo < hi.

    Raises
    ------
    ValueError
        (:class:`opalg.StateError`) t not 1-D, y without one row per sample, tail or pad
        outside [0, 1).

    Examples
    --------
    >>> from opalg.ider import display_limits
    >>> display_limits([0.0, 0.1, 0.2, 0.3], [1.0, 2.0, 3.0, 1000.0], t_stop=0.31, pad=0.0)
    (1.0, 3.0)
    >>> display_limits([0.0, 0.1, 0.2, 0.3], [1.0, 2.0, 3.0, 1000.0], pad=0.0)
    (1.0, 1000.0)
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if t.ndim != 1:
        raise StateError(f"display_limits: t must be 1-D (one time per sample), got shape {t.shape}")
    if y.ndim not in (1, 2) or y.shape[0] != len(t):
        raise StateError(f"display_limits: y must have one row per sample of t ({len(t)}), got shape {y.shape}")
    y = y.reshape(len(t), -1)
    if not (0 <= tail < 1 and 0 <= pad < 1):
        raise StateError(f"display_limits: tail and pad must be in [0, 1), got tail={tail!r}, pad={pad!r}")
    keep = np.ones(len(t), dtype=bool)
    if t_stop is not None and len(t) > 2:
        keep = t < t[0] + (1.0 - tail) * (float(t_stop) - t[0])
        keep[-1] = False
        if keep.sum() < 2:  # a run that stopped almost at once: show what there is
            keep[:] = True
    vals = y[keep][np.isfinite(y[keep])]
    if vals.size == 0:
        return -1.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    if hi == lo:  # a flat curve (T1 ≡ 0 for "no motor at joint 1") still gets a visible band
        half = max(abs(hi), 1.0)
        return lo - half, hi + half
    return lo - pad * (hi - lo), hi + pad * (hi - lo)
