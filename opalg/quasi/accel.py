r"""ν̇: the rate of the quasi-velocities, kinematic and dynamic forms (docs/REFERENCE.md J5).

Differentiate ν(k) = θ̇(k) + G*(k)V⁺(k) (J2) in body coordinates.  With
α⁺(k) = φ*(℘k,k)α(℘k) the true (gravity-free) acceleration of the parent seen in
frame k and d/dt ᵏX_℘ = −crm(H*(k)θ̇(k)) ᵏX_℘ (K2),
d/dt V⁺(k) = α⁺(k) + crm(V(k)) H*(k)θ̇(k), so

.. math::
    \dot ν(k) = \ddot θ(k) + G^*(k)\left[α^+(k) + \mathrm{crm}(V(k))H^*(k)\dot θ(k)\right]
               + \dot G^*(k) V^+(k)             \quad \text{(kinematic form)}

with Ġ from :mod:`opalg.quasi.rates` (J6).  For a 1-dof joint crm(V)H*θ̇ is the Coriolis
term a(k); for a multi-axis joint it is a(k) − c_J(k), and Ġ carries the Ṡ terms.
The ABA's outward step θ̈ = D⁻¹ε − G*α⁺ (E9) turns the first bracket into the
innovations, so ν̇ needs only the *inward* pass:

.. math::
    \dot ν(k) = D^{-1}(k)ε(k) + G^*(k)\,\mathrm{crm}(V(k))H^*(k)\dot θ(k) + \dot G^*(k) V^+(k)
                \quad \text{(dynamic form)}.

**Gravity.**  The dynamic form holds when ε is computed with the *true* accelerations,
gravity entering as body forces b(k) −= M(k)·ᵏX₀[0; g] (``gravity_as="body"``).  opalg's
ABA instead folds the base acceleration −g into a at the roots; then
D⁻¹ε = θ̈ + G*(α⁺ − ᵏX₀[0; g]) and the formula needs + G*(k)·ᵏX₀[0; g] at every non-root
body (``gravity_as="base"``).  Both are implemented and agree.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError
from opalg.model.kinematics import Kinematics, body_kinematics, chunked
from opalg.model.multibody import Model
from opalg.algorithms.riccati import Articulated, articulated
from opalg.spatial.vectors import cross_motion
from opalg.quasi.rates import ArticulatedRates, rates_pass
from opalg.quasi.velocities import minus_G_star, stack

FORMS = ("dynamic", "kinematic")
GRAVITY_AS = ("body", "base")


def gravity_in_bodies(model: Model, kin: Kinematics) -> list:
    """ᵏX₀[0; g] (..., 6) for every body: the gravity acceleration seen in body coordinates."""
    g0 = np.concatenate([bk.zeros((3,), model.gravity), model.gravity])
    out = [None] * model.n
    for k in model.order:
        p = model.parents[k]
        out[k] = bk.mv(kin.Xup[k], g0 if p == -1 else out[p])
    return out


def _transport(kin: Kinematics, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(V⁺(k), crm(V(k)) H*(k)θ̇(k)) from the gravity-free kinematics: d/dt V⁺ = α⁺ + the second."""
    Vp = kin.V[k] - kin.vJ[k]
    return Vp, cross_motion(kin.V[k], kin.vJ[k])


def kinematic_pass(model: Model, kin: Kinematics, rates: ArticulatedRates, qdd) -> list:
    """Per-body ν̇(k) from θ̈ (J5, kinematic form); ``kin`` gravity-free with V, a and vJ."""
    art, alpha, out = rates.art, [None] * model.n, [None] * model.n
    for k in model.order:
        p, qddk = model.parents[k], qdd[..., model.dof_slice[k]]
        ap = 0 if p == -1 else bk.mv(kin.Xup[k], alpha[p])
        alpha[k] = ap + bk.mv(kin.S[k], qddk) + kin.a[k]
        Vp, w = _transport(kin, k)
        out[k] = qddk - minus_G_star(art, k, ap + w) + bk.mv(bk.mT(rates.G_dot[k]), Vp)
    return out


def dynamic_pass(model: Model, kin: Kinematics, rates: ArticulatedRates, tau, f_ext=None,
                 gravity: bool = True, gravity_as: str = "body") -> list:
    """Per-body ν̇(k) from the inward pass's innovations (J5, dynamic form)."""
    art, n = rates.art, model.n
    g = gravity_in_bodies(model, kin) if gravity else None
    zp, eps = [None] * n, [None] * n
    for k in reversed(model.order):
        a, b = kin.a[k], kin.b[k]
        if f_ext is not None:
            b = b - f_ext[..., k, :]
        if gravity and gravity_as == "body":       # the weight as a body force
            b = b - bk.mv(model.I_spatial[k], g[k])
        elif gravity and model.parents[k] == -1:    # base acceleration −g folded into the root
            a = a - g[k]
        z = bk.mv(art.P[k], a) + b
        for c in model.children[k]:
            z = z + bk.mv(bk.mT(kin.Xup[c]), zp[c])
        zk, eps[k] = art.pivot_inward(k, tau[..., model.dof_slice[k], None], z[..., None])
        zp[k] = zk[..., 0]
    out = [None] * n
    for k in model.order:
        Vp, w = _transport(kin, k)
        if gravity and gravity_as == "base" and model.parents[k] != -1:
            w = w + g[k]                          # the correction + G*(k)·ᵏX₀[0; g]
        d_eps, _ = art.pivot_outward(k, eps[k], -w[..., None])   # D⁻¹ε + G*w
        out[k] = d_eps[..., 0] + bk.mv(bk.mT(rates.G_dot[k]), Vp)
    return out


def quasi_state(model: Model, q, qd) -> tuple[Kinematics, Articulated, ArticulatedRates]:
    """Gravity-free kinematics (with per-body joint velocities ``vJ``), P, D, G and their rates."""
    kin = body_kinematics(model, q, qd, gravity=False, validate=False)
    kin.vJ = [bk.mv(kin.S[k], qd[..., model.dof_slice[k]]) for k in range(model.n)]
    art = articulated(model, q, kin)
    return kin, art, rates_pass(model, kin, art, qd)


def _check_options(form: str, gravity, gravity_as: str) -> None:
    if form not in FORMS:
        raise StateError(f"nu_dot: form must be one of {FORMS}, got {form!r}")
    if gravity_as not in GRAVITY_AS:
        raise StateError(f"nu_dot: gravity_as must be one of {GRAVITY_AS}, got {gravity_as!r}")
    if not isinstance(gravity, (bool, np.bool_)):
        raise StateError(f"nu_dot: gravity must be True or False, got {gravity!r}")


@chunked(3, forces=("f_ext",))
def nu_dot(model: Model, q, qd, tau, f_ext=None, gravity: bool = True, form: str = "dynamic",
           gravity_as: str = "body") -> np.ndarray:
    r"""ν̇ = d/dt[(I + HφK)*θ̇] under the forces ``tau`` (J5).

    .. math::
        \dot ν(k) = D^{-1}(k)ε(k) + G^*(k)\,\mathrm{crm}(V(k))H^*(k)\dot θ(k) + \dot G^*(k)V^+(k)

    (dynamic form: ε from one inward pass, no outward acceleration pass), or the
    kinematic form ν̇(k) = θ̈(k) + G*(k)[α⁺(k) + crm(V(k))H*(k)θ̇(k)] + Ġ*(k)V⁺(k) with
    θ̈ from :func:`opalg.aba`.  Ġ by the J6 recursion; V⁺(k) = φ*(℘k,k)V(℘k).

    Parameters
    ----------
    model : Model
    q, qd, tau : array_like, shape (..., N)
    f_ext : array_like, shape (..., n, 6), optional
        External spatial forces on the bodies, as in :func:`opalg.aba` (C9).
    gravity : bool
        Include the model's gravity.
    form : {"dynamic", "kinematic"}
    gravity_as : {"body", "base"}
        Dynamic form only: gravity as body forces M(k)·ᵏX₀[0; g] (the form's own
        convention), or as opalg's base acceleration with the correction
        +G*(k)·ᵏX₀[0; g] at non-root bodies (module docstring).  Same result.

    Returns
    -------
    ndarray, shape (..., N)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> m = opalg.random_model(5, "tree", seed=3)
    >>> q, qd, tau = np.random.default_rng(0).normal(size=(3, m.ndof))
    >>> a = quasi.nu_dot(m, q, qd, tau)
    >>> bool(np.allclose(a, quasi.nu_dot(m, q, qd, tau, gravity_as="base")))
    True
    >>> bool(np.allclose(a, quasi.nu_dot(m, q, qd, tau, form="kinematic")))
    True
    """
    _check_options(form, gravity, gravity_as)
    kin, art, rates = quasi_state(model, q, qd)
    if form == "kinematic":
        qdd = _aba(model, q, qd, tau, f_ext, gravity)
        return stack(kinematic_pass(model, kin, rates, qdd))
    return stack(dynamic_pass(model, kin, rates, tau, f_ext, gravity, gravity_as))


def _aba(model, q, qd, tau, f_ext, gravity):
    """θ̈ by the ABA on arrays already checked (the undecorated :func:`opalg.aba`)."""
    from opalg.algorithms.aba import aba
    return aba.__wrapped__(model, q, qd, tau, f_ext, gravity)


@chunked(3)
def nu_dot_from_qdd(model: Model, q, qd, qdd) -> np.ndarray:
    r"""ν̇ from given joint accelerations, the kinematic form of J5.

    .. math:: \dot ν(k) = \ddot θ(k) + G^*(k)[α^+(k) + \mathrm{crm}(V(k))H^*(k)\dot θ(k)] + \dot G^*(k)V^+(k)

    with α the true body accelerations of θ̈ (no gravity: ν̇ is a kinematic quantity).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> m = opalg.random_model(4, "chain", seed=1, joints="all")
    >>> q, qd, qdd = np.random.default_rng(2).normal(size=(3, m.ndof))
    >>> tau = opalg.rnea(m, q, qd, qdd)
    >>> bool(np.allclose(quasi.nu_dot_from_qdd(m, q, qd, qdd), quasi.nu_dot(m, q, qd, tau)))
    True
    """
    kin, _, rates = quasi_state(model, q, qd)
    return stack(kinematic_pass(model, kin, rates, qdd))
