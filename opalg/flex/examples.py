r"""Example flexible models: a planar arm with clamped-free beam modes (docs/REFERENCE.md K3).

Each link is an Euler–Bernoulli beam of length L along its body x axis, clamped at its joint
and free at the tip, bending in the x–y plane.  Its assumed modes are the clamped-free
eigenfunctions

.. math:: w_i(s) = \cosh β_i s − \cos β_i s − σ_i(\sinh β_i s − \sin β_i s),\qquad
          \cos β_iL \cosh β_iL = −1,

(translation w_i along y, rotation w_i' about z).  The link mass is lumped at the midpoints
of ``nodes`` equal segments (each a lamina segment with its own I_zz), plus a massless node
at the tip, where the next link hangs.  K_ij = EI ∫ w_i'' w_j'' ds (Gauss–Legendre).
"""

from __future__ import annotations

import numpy as np

from opalg.errors import ModelError
from opalg.model.joints import Joint
from opalg.flex.body import FlexBody
from opalg.flex.model import FlexModel

__all__ = ["two_link_arm", "cantilever_roots", "cantilever_mode"]


def cantilever_roots(m: int) -> np.ndarray:
    """The first m roots β_iL of cos x cosh x = −1 (Newton on cos x + sech x).

    Examples
    --------
    >>> from opalg.flex.examples import cantilever_roots
    >>> cantilever_roots(2).round(4)
    array([1.8751, 4.6941])
    """
    out = []
    for i in range(1, m + 1):
        x = (2 * i - 1) * np.pi / 2
        for _ in range(50):
            f = np.cos(x) + 1 / np.cosh(x)
            df = -np.sin(x) - np.tanh(x) / np.cosh(x)
            x, dx = x - f / df, f / df
            if abs(dx) < 1e-15 * x:
                break
        out.append(x)
    return np.array(out)


def cantilever_mode(B: float, L: float, s, deriv: int = 0) -> np.ndarray:
    """The deriv-th s-derivative of w(s) for root B = βL, in a form free of cancellation.

    cosh βs − σ sinh βs = ½[(1 − σ)e^{βs} + (1 + σ)e^{−βs}], with 1 − σ formed without
    the difference of two large numbers, so high modes stay accurate.

    Examples
    --------
    >>> from opalg.flex.examples import cantilever_mode
    >>> float(cantilever_mode(1.8751040687, 1.0, 1.0)).__round__(6)     # tip deflection of mode 1
    2.0
    """
    s = np.asarray(s, float)
    b = B / L
    eB = np.exp(-B)
    den = 1 - eB * eB + 2 * np.sin(B) * eB                 # 2 e^{-B}(sinh B + sin B)
    one_m = 2 * (-eB + np.sin(B) - np.cos(B)) / den        # (1 − σ) e^{B}
    sig = 1 - one_m * eB
    ep, em = np.exp(b * s - B), np.exp(-b * s)
    d = deriv % 4
    trig = [np.cos, lambda t: -np.sin(t), lambda t: -np.cos(t), np.sin][d](b * s)      # d^n cos
    trig_s = [np.sin, np.cos, lambda t: -np.sin(t), lambda t: -np.cos(t)][d](b * s)    # d^n sin
    hyp = 0.5 * (one_m * ep + (-1) ** deriv * (1 + sig) * em)                          # d^n(cosh − σ sinh)
    return b ** deriv * (hyp - trig + sig * trig_s)


def two_link_arm(modes: int = 2, nodes: int = 8, lengths=(1.0, 1.0), masses=(1.0, 1.0),
                 EI=(20.0, 20.0), hub_masses=(0.0, 0.0), damping: float = 0.0,
                 gravity=(0.0, -9.81, 0.0)) -> FlexModel:
    r"""A planar two-link arm (revolute joints about z) with ``modes`` beam modes per link.

    Parameters
    ----------
    modes : int
        Assumed modes per link (≥ 0; 0 gives a rigid arm of lumped links).
    nodes : int
        Mass-lumping segments per link.
    lengths, masses, EI : pairs
        Link length, mass and bending stiffness.
    hub_masses : pair
        Point masses at the joints (motors), in the hub of each link.
    damping : float
        Modal damping ratio ζ: D = 2ζ diag(√(K_ii M_ii)).
    gravity : array_like (3,)

    Examples
    --------
    >>> from opalg.flex import examples
    >>> fm = examples.two_link_arm(modes=2)
    >>> fm.ndof, fm.attach
    (6, (-1, 8))
    """
    if not isinstance(modes, (int, np.integer)) or modes < 0:
        raise ModelError(f"two_link_arm: modes must be an int >= 0, got {modes!r}")
    if not isinstance(nodes, (int, np.integer)) or nodes < 1:
        raise ModelError(f"two_link_arm: nodes must be an int >= 1, got {nodes!r}")
    roots = cantilever_roots(modes)
    gs, gw = np.polynomial.legendre.leggauss(max(64, 8 * modes))
    bodies = []
    for L, mass, ei, mh in zip(lengths, masses, EI, hub_masses):
        s = (np.arange(nodes) + 0.5) * L / nodes
        pos = np.zeros((nodes + 1, 3))
        pos[:nodes, 0], pos[nodes, 0] = s, L
        dm, ds = mass / nodes, L / nodes
        Jz = dm * ds ** 2 / 12
        inert = [(dm, np.zeros(3), np.diag([Jz / 2, Jz / 2, Jz]))] * nodes + [(0.0, np.zeros(3), np.zeros((3, 3)))]
        Phi, Psi = np.zeros((nodes + 1, 3, modes)), np.zeros((nodes + 1, 3, modes))
        for i, B in enumerate(roots):
            Phi[:, 1, i] = cantilever_mode(B, L, pos[:, 0])
            Psi[:, 2, i] = cantilever_mode(B, L, pos[:, 0], 1)
        sq = (gs + 1) * L / 2
        W2 = np.array([cantilever_mode(B, L, sq, 2) for B in roots]).reshape(modes, len(sq))
        K = ei * (W2 * gw * L / 2) @ W2.T
        hub = (mh, np.zeros(3), np.zeros((3, 3))) if mh == 0 else (mh, np.zeros(3), 1e-6 * mh * np.eye(3))
        body = FlexBody(hub, pos, inert, Phi, Psi, K)
        if damping:
            from opalg.flex.kinematics import node_inertia
            Mee = node_inertia(body, np.zeros(modes))[:modes, :modes]
            body.D = 2 * damping * np.diag(np.sqrt(np.diag(K) * np.diag(Mee)))
        bodies.append(body)
    joints = [Joint("R", [0.0, 0.0, 1.0], name=f"joint{k + 1}") for k in range(2)]
    places = [(np.eye(3), np.zeros(3))] * 2
    return FlexModel([-1, 0], joints, places, bodies, attach=[-1, nodes], gravity=gravity,
                     names=["link1", "link2"])
