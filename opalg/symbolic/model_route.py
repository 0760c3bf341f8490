r"""The operator-algebra route: a TreeSystem as an opalg Model with the same q order.

An Euler-angle hinge G_j = Tz(H1) Tx(H3) Tz(H2) becomes three revolute axes z, x, z (applied
in that order, i.e. H2 first) and a slide Z_js a prismatic axis along k_js; the intermediate
frames are massless and the last one carries B_j's inertia.  An opalg revolute joint of angle
a about z maps parent to child coordinates by the passive ``Tz(a)``, which is the paper's
convention, so no sign conversion is needed.  Labels are q indices, so ``crba(model, q)`` is
directly comparable with ``TreeSystem.mass_matrix()``.

A prescribed root (``with_root=True``) becomes six leading massless axes — slides along the
inertial x, y, z and the root's z-x-z angles — whose q̈ is the prescribed acceleration, so
``rnea(model, [q_root, q], [q̇_root, q̇], [q̈_root, 0])[6:]`` is the symbolic bias.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from opalg.errors import ModelError, StateError
from opalg.symbolic.data import ROOT_CHAIN, check_subs, check_system, is_free_hinge, scalar, t

ROOT_NAMES = ("Z0_1", "Z0_2", "Z0_3", "H0_1", "H0_2", "H0_3")


def _arr(x):
    rows = x.tolist() if hasattr(x, "tolist") else x
    try:
        return np.array(rows, dtype=float)
    except (TypeError, ValueError):
        return np.array(rows, dtype=object)


def _free_hint(system) -> str:
    """The hint for a prescribed-root operation on a system with free-floating bodies."""
    free = [j for j in system.order if is_free_hinge(system.hinges[j - 1])]
    if not free:
        return ""
    return (f"; body {free[0]} floats freely on a 6-DoF hinge (e.g. base='free'): its motion is not "
            "prescribed, use opalg.symbolic.free_root_model and free_state instead")


def to_model(system, with_root: bool = False):
    """opalg ``Model`` of ``system``: one single-axis body per coordinate, label = q index.

    Bodies without DoF (NR = NT = 0) are welded: their inertia is merged into the carrier
    frame.  ``with_root=True`` (prescribed root only) prepends the root's six axes, labels
    0..5 in the order of :data:`ROOT_NAMES`, and shifts the tree's labels by 6; the opalg
    label of each body's frame is given by :func:`carriers`.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.symbolic import deployable_example
    >>> system = deployable_example("rot3")
    >>> model = system.to_model()
    >>> model.ndof, model.names[:3]
    (15, ('H1_1', 'H1_2', 'H1_3'))
    >>> Mf = system.lambdify(with_bias=False)
    >>> q = np.linspace(0.2, 1.6, 15)
    >>> M = Mf(q)      # entries up to ~2e2; round-off of either route ~1e-13 absolute
    >>> bool(np.allclose(M, opalg.crba(model, q), rtol=0, atol=1e-12 * abs(M).max()))
    True
    """
    check_system(system, "to_model")
    from opalg.model.multibody import Inertia, Joint, Model

    if with_root and system.root is None:
        raise StateError("with_root=True needs a prescribed root (TreeSystem(..., base=RootMotion(...)))"
                         + _free_hint(system))
    shift = 6 if with_root else 0
    N = system.N + shift
    parents, joints, places = [None] * N, [None] * N, [None] * N
    inert = [[] for _ in range(N)]            # (m, com, I) parts in the carrier frame
    names = list(ROOT_NAMES[:shift]) + [str(s) for s in system.q]

    def add_chain(chain, pl, offset, shift):
        """Single-axis bodies of one hinge chain under carrier ``pl``; returns the last label."""
        for n_axis, (kind, axis, i) in enumerate(chain):
            k = i + shift
            ax = axis if kind == "P" else (sp.Matrix([0, 0, 1]) if kind == "z" else sp.Matrix([1, 0, 0]))
            joints[k] = Joint("P" if kind == "P" else "R", _arr(sp.Matrix(ax).reshape(3, 1))[:, 0], name=names[k])
            parents[k] = pl
            places[k] = (np.eye(3), _arr(offset)[:, 0] if n_axis == 0 else np.zeros(3))
            pl = k
        return pl

    # B_j's frame = (carrier label, offset in it); B0 is the inertial frame or the root's last axis
    frame = {0: (add_chain(ROOT_CHAIN, -1, sp.zeros(3, 1), 0) if with_root else -1, sp.zeros(3, 1))}
    for j in system.order:
        pl, off = frame[system.T[j - 1]]
        h, b = system.hinges[j - 1], system.bodies[j - 1]
        chain = system.hinge_chain(j)
        if not chain:                         # welded (NR = NT = 0) body
            frame[j] = (pl, off + h.offset)
            if pl != -1:
                inert[pl].append((b.mass, off + h.offset + b.com, b.inertia))
            continue
        pl = add_chain(chain, pl, off + h.offset, shift)
        frame[j] = (pl, sp.zeros(3, 1))
        inert[pl].insert(0, (b.mass, b.com, b.inertia))
    inertias = []
    for parts in inert:
        if not parts:
            inertias.append(Inertia(0.0, np.zeros(3), np.zeros((3, 3))))
            continue
        m = sum(p[0] for p in parts)
        c = sum((p[0] * p[1] for p in parts), sp.zeros(3, 1)) / m
        J = sp.zeros(3, 3)
        for mi, ci, Ji in parts:          # parallel-axis theorem to the merged mass centre
            r = ci - c if len(parts) > 1 else sp.zeros(3, 1)
            J += Ji + mi * ((r.T * r)[0] * sp.eye(3) - r * r.T)
        inertias.append(Inertia(_arr(sp.Matrix([m]))[0, 0], _arr(c)[:, 0], _arr(J)))
    return Model(parents, joints, places, inertias, gravity=_arr(system.gravity)[:, 0],
                 names=names, allow_massless=True)


def carriers(system, with_root: bool = False) -> dict:
    """``{j: label}``: the opalg body of ``to_model(with_root)`` that carries B_j's frame (the
    last axis of its hinge; a welded body's inner carrier; for B0, -1 or the root's last axis).

    Examples
    --------
    >>> from opalg.symbolic import deployable_example
    >>> from opalg.symbolic.model_route import carriers
    >>> carriers(deployable_example("rot3"))        # hinge axes z(H2), x(H3), z(H1): H_j1 is last
    {0: -1, 1: 0, 2: 3, 3: 6, 4: 9, 5: 12}
    """
    check_system(system, "carriers")
    shift = 6 if with_root else 0
    out = {0: ROOT_CHAIN[-1][2] if with_root else -1}
    for j in system.order:
        chain = system.hinge_chain(j)
        out[j] = chain[-1][2] + shift if chain else out[system.T[j - 1]]
    return out


def root_state(system, time: float, subs=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Prescribed root coordinates, rates and accelerations at ``time``, in the order of
    :data:`ROOT_NAMES` (the first six coordinates of ``to_model(with_root=True)``).

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic import Body, Hinge, RootMotion, TreeSystem, t
    >>> from opalg.symbolic.model_route import root_state
    >>> s = TreeSystem([0], [Hinge(1)], [Body(1)], base=RootMotion(position=(t**2, 0, 0)))
    >>> [float(x[0]) for x in root_state(s, 3.0)]   # x, ẋ, ẍ of x = t²
    [9.0, 6.0, 2.0]
    """
    check_system(system, "root_state")
    if system.root is None:
        raise StateError("the root of this system is fixed: it has no prescribed state" + _free_hint(system))
    vals = sp.Matrix(list(system.root.position) + list(system.root.angles))
    if subs:
        vals = vals.subs(check_subs(subs))
    time = scalar(time, "time", StateError)
    out = []
    for e in (vals, vals.diff(t), vals.diff(t, 2)):
        v = e.subs(t, time)
        if v.free_symbols:
            raise ModelError(f"unset symbolic parameters {sorted(map(str, v.free_symbols))} "
                             "in the root motion: pass subs=")
        out.append(np.array(v.evalf(), dtype=float).reshape(6))
    return tuple(out)
