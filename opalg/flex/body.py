r"""One flexible body: a hub, lumped nodes and assumed modes (docs/REFERENCE.md K3).

A :class:`FlexBody` has a hub (a rigid inertia about the body frame origin, in body axes)
and p lumped nodes.  Node j sits at x_j in the body frame when the body is undeformed,
with its frame parallel to the body frame; it carries a rigid inertia (mass, mass centre
and inertia tensor, in node axes), possibly zero (an attachment point).  With m modal
coordinates η the node is displaced and turned by

.. math:: u_j = Φ_j η,\qquad ψ_j = Ψ_j η,

Φ_j, Ψ_j (3 × m) the translational and rotational mode shapes.  **Kinematics: exact in η.**
The node frame is translated by u_j and then turned by the XYZ angles ψ_j
(R_j = R_x(ψ_{j1}) R_y(ψ_{j2}) R_z(ψ_{j3}); to first order the small rotation vector ψ_j),
so node poses are functions of η and the node velocities are their true time
derivatives.  The dynamics derived from them is the Euler–Lagrange system of that
kinetic energy (K4); freezing the transforms at η = 0 instead would give velocity maps
that are not the derivative of any pose, and whose Newton–Euler equations are not a
Lagrangian system.  At η = 0 both choices give the same mass matrix.

The modal stiffness K and damping D (m × m, symmetric positive semidefinite) add
K η + D η̇ to the modal rows of the equations of motion.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.model import _checks as chk
from opalg.model import _validate
from opalg.errors import ModelError
from opalg.model.multibody import Inertia, _as_inertia, _symmetric
from opalg.spatial.vectors import motion_transform, spatial_inertia

__all__ = ["FlexBody"]


def _matrix(x, shape: tuple, what: str) -> np.ndarray:
    """``x`` as a float array of ``shape``, or an object array if it holds sympy expressions.

    Strings are refused before anything could evaluate them (:func:`opalg._backend.asarray`).
    """
    if np.iscomplexobj(x):                           # a cast would drop the imaginary part
        raise ModelError(f"{what} must be real, got complex entries")
    try:
        a = bk.asarray(x, what, ModelError)
        if a.dtype != object:
            a = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be an array of numbers or sympy expressions, got {x!r} "
                         "(strings are never evaluated)") from None
    if a.shape != shape:
        raise ModelError(f"{what} has shape {a.shape}, expected {shape}")
    bad = bk.first_nonfinite(a)
    if bad is not None:
        raise ModelError(f"{what} has non-finite entries (first {bad[1]} at {bad[0]})")
    return a


def _psd(A: np.ndarray, what: str) -> np.ndarray:
    if A.dtype == object:
        # Symbolic: symmetry is checked entrywise (no simplification: a difference that does
        # not vanish structurally is refused); definiteness cannot be decided for symbols.
        if any(A[i, j] - A[j, i] != 0 for i in range(A.shape[0]) for j in range(i)):
            raise ModelError(f"{what} must be symmetric")
        return A
    if A.size and not np.allclose(A, A.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(A).max())):
        raise ModelError(f"{what} must be symmetric")
    A = (A + A.T) / 2
    if A.size and np.linalg.eigvalsh(A).min() < -1e-12 * max(1.0, np.abs(A).max()):
        raise ModelError(f"{what} must be positive semidefinite (smallest eigenvalue "
                         f"{np.linalg.eigvalsh(A).min():.3g})")
    return A


class FlexBody:
    r"""A flexible body with m assumed modes (docs/REFERENCE.md K3).

    Parameters
    ----------
    hub : Inertia or (mass, com, I_com)
        Rigid part, in body axes (mass may be 0: then the nodes carry all of it).
    node_positions : array_like, shape (p, 3)
        Undeformed node positions x_j in the body frame.
    node_inertias : sequence of Inertia or (mass, com, I_com), length p
        Lumped inertia of each node in node axes; ``(0, zeros(3), zeros((3, 3)))`` for a
        massless attachment point.
    Phi, Psi : array_like, shape (p, 3, m)
        Translational and rotational mode shapes; ``Psi`` defaults to zero.
    K, D : array_like, shape (m, m)
        Modal stiffness and damping (symmetric positive semidefinite); D defaults to 0.
    name : str, optional

    Every datum may hold sympy expressions (object arrays; K and D are then checked for
    structural symmetry only, definiteness cannot be decided); strings are refused, never
    evaluated.

    Attributes
    ----------
    m : int
        Number of modes.
    M_hub : ndarray (6, 6)
        Hub spatial inertia about the body origin.
    M_nodes : ndarray (p, 6, 6)
        Node spatial inertias about the node origins.
    Q : ndarray (p, 6, m)
        ``[Φ_j; Ψ_j]``: the node coordinates q_j = [u_j; ψ_j] = Q_j η.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import FlexBody
    >>> b = FlexBody((1.0, [0.5, 0, 0], np.eye(3)), [[1.0, 0, 0]], [(0.2, np.zeros(3), 0.01 * np.eye(3))],
    ...              Phi=[[[0.0], [1.0], [0.0]]], K=[[10.0]])
    >>> b.m, b.Q.shape
    (1, (1, 6, 1))
    """

    def __init__(self, hub, node_positions, node_inertias: Sequence, Phi=None, Psi=None, K=None, D=None,
                 name: str | None = None):
        if name is not None and not isinstance(name, str):
            raise ModelError(f"FlexBody: name must be a str or None, got {_validate.describe(name)}")
        self.name = name
        label = f"flexible body {name!r}" if name else "flexible body"
        try:
            X = (bk.asarray(node_positions, f"{label}: node_positions", ModelError).reshape(-1, 3)
                 if len(node_positions) else np.zeros((0, 3)))
        except (TypeError, ValueError) as e:
            if isinstance(e, ModelError):
                raise
            raise ModelError(f"{label}: node_positions must be a (p, 3) array of numbers") from None
        p = X.shape[0]
        self.node_positions = _matrix(X, (p, 3), f"{label}: node_positions")
        if len(node_inertias) != p:
            raise ModelError(f"{label}: {len(node_inertias)} node inertias for {p} nodes")
        hub = _as_inertia(0, f"{name or 'flex'} hub", hub)
        chk.check_inertia(0, f"{label}: hub", hub, allow_massless=True)
        self.hub = hub
        self.node_inertias = tuple(_as_inertia(j, f"{label} node", s) for j, s in enumerate(node_inertias))
        for j, s in enumerate(self.node_inertias):
            chk.check_inertia(j, f"{label}: node {j}", s, allow_massless=True)
        if Phi is None:
            m = 0 if Psi is None else np.shape(Psi)[-1]
            Phi = np.zeros((p, 3, m))
        m = np.shape(Phi)[-1] if np.ndim(Phi) == 3 else -1
        if m < 0:
            raise ModelError(f"{label}: Phi has shape {np.shape(Phi)}, expected (p, 3, m) with p = {p}")
        self.m = int(m)
        self.Phi = _matrix(Phi, (p, 3, m), f"{label}: Phi")
        self.Psi = np.zeros((p, 3, m)) if Psi is None else _matrix(Psi, (p, 3, m), f"{label}: Psi")
        self.K = _psd(_matrix(np.zeros((m, m)) if K is None else K, (m, m), f"{label}: K"), f"{label}: K")
        self._label = label
        self.D = np.zeros((m, m)) if D is None else D
        self.Q = np.concatenate([self.Phi, self.Psi], axis=1)
        M_hub = _symmetric(spatial_inertia(hub.mass, hub.com, hub.I_com))
        self.M_hub = M_hub if M_hub.dtype == object else M_hub.astype(float)
        if p and bk.is_symbolic(*[[s.mass, s.com, s.I_com] for s in self.node_inertias]):
            self.M_nodes = np.array([spatial_inertia(s.mass, s.com, s.I_com) for s in self.node_inertias],
                                    dtype=object)
        elif p:
            ms = np.array([float(s.mass) for s in self.node_inertias])
            cs = np.array([np.asarray(s.com, float) for s in self.node_inertias])
            Js = np.array([np.asarray(s.I_com, float) for s in self.node_inertias])
            self.M_nodes = _symmetric(spatial_inertia(ms, cs, Js))
        else:
            self.M_nodes = np.zeros((0, 6, 6))

    @property
    def symbolic(self) -> bool:
        """True if any datum of the body (inertias, positions, mode shapes, K, D) is a sympy expression."""
        return bk.is_symbolic(self.M_hub, self.M_nodes, self.node_positions, self.Q, self.K, self.D)

    @property
    def D(self) -> np.ndarray:
        """Modal damping (m × m, symmetric positive semidefinite); validated on every assignment.

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.flex import examples
        >>> b = examples.two_link_arm(modes=1).bodies[0]
        >>> b.D = [[0.5]]
        >>> b.D
        array([[0.5]])
        >>> b.D = [[-1.0]]
        Traceback (most recent call last):
            ...
        opalg.errors.ModelError: flexible body: D must be positive semidefinite (smallest eigenvalue -1)
        """
        return self._D

    @D.setter
    def D(self, value) -> None:
        what = f"{self._label}: D"
        D = _psd(_matrix(value, (self.m, self.m), what), what)
        D.flags.writeable = False        # so that b.D[0, 0] = -1 cannot bypass the check
        self._D = D

    @property
    def p(self) -> int:
        """Number of nodes."""
        return self.node_positions.shape[0]

    def __repr__(self) -> str:
        return f"FlexBody(name={self.name!r}, nodes={self.p}, modes={self.m})"


def rigid_inertia(body: FlexBody) -> Inertia:
    """The inertia of the undeformed body (hub + nodes) as one rigid :class:`opalg.Inertia`.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex.body import FlexBody, rigid_inertia
    >>> b = FlexBody((1.0, np.zeros(3), np.eye(3)), [[2.0, 0, 0]], [(1.0, np.zeros(3), np.zeros((3, 3)))])
    >>> float(rigid_inertia(b).mass), rigid_inertia(b).com.tolist()
    (2.0, [1.0, 0.0, 0.0])
    """
    X = motion_transform(np.eye(3), body.node_positions)          # ^jX_k at η = 0
    M = body.M_hub + np.einsum("jab,jbc,jcd->ad", np.swapaxes(X, -1, -2), body.M_nodes, X)
    mass, symbolic = M[3, 3], M.dtype == object
    if not symbolic and mass <= 0:                                 # symbolic data: no sign test
        return Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    cx = M[:3, 3:] / mass                                          # c~ (M's upper right block is m c~)
    c = np.array([cx[2, 1], cx[0, 2], cx[1, 0]])
    I_com = M[:3, :3] + mass * cx @ cx                             # back from the origin to c
    return Inertia(mass, c, I_com) if symbolic else Inertia(float(mass), c, _symmetric(I_com))
