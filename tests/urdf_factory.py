"""Random URDF generator for the oracle tests (writes raw XML, never through opalg).

``random_urdf(n, topology, seed)`` gives a URDF string with exactly ``n`` movable
joints (revolute with ``<limit>``, continuous, prismatic with ``<limit>``), plus
some ``fixed`` joints and some links without ``<inertial>``:

* joint axes are random directions, sometimes exactly a coordinate axis (so that
  Pinocchio picks its aligned joint types), sometimes not normalized (scaled by
  2 or 0.5: URDF semantics normalize them);
* joint origins have random ``xyz`` and ``rpy``;
* every ``<inertial>`` has a nonzero ``<origin xyz rpy>`` and a full, physically
  valid central inertia tensor ``R diag(box) Rᵀ`` (``ixy, ixz, iyz`` nonzero, the
  triangle inequality holds because it holds for a box);
* fixed joints weld their child link (and its inertia) to the parent body;
* links without ``<inertial>`` (massless) are only intermediate links, never
  leaves, so every movable joint still moves mass;
* whenever the fractions are positive there is at least one fixed joint and at
  least one massless non-root link (if any link is intermediate), and for
  n >= 3 all three movable joint types occur;
* ``topology="tree"`` always branches below a moving body: some link that is
  moved by a movable joint has two child subtrees that both contain movable
  joints (for n = 2 the only possible branching, at the root, is enforced).

Names: links ``L0`` (the root), ``L1``, ...; joints ``J1``, ... (joint ``Ji`` has
child ``Li``), so link and joint names never clash.
"""

from __future__ import annotations

import numpy as np

__all__ = ["random_urdf", "random_urdf_structure"]


def _rot(rng) -> np.ndarray:
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def _num(x) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(x))


def _axis(rng) -> np.ndarray:
    u = rng.uniform()
    if u < 0.2:  # exactly a coordinate axis, possibly negative
        a = np.zeros(3)
        a[int(rng.integers(3))] = rng.choice([-1.0, 1.0])
        return a
    a = rng.normal(size=3)
    a /= np.linalg.norm(a)
    if u > 0.7:  # not normalized: URDF semantics normalize the axis
        a *= rng.choice([2.0, 0.5])
    return a


def _inertial(rng) -> str:
    mass = rng.uniform(0.5, 3.0)
    a, b, c = rng.uniform(0.05, 0.5, size=3)
    box = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    R = _rot(rng)
    J = R @ np.diag(box) @ R.T
    xyz = rng.uniform(-0.2, 0.2, size=3)
    rpy = rng.uniform(-np.pi, np.pi, size=3)
    return (f'<inertial><origin xyz="{_num(xyz)}" rpy="{_num(rpy)}"/>'
            f'<mass value="{_num(mass)}"/>'
            f'<inertia ixx="{_num(J[0, 0])}" ixy="{_num(J[0, 1])}" ixz="{_num(J[0, 2])}" '
            f'iyy="{_num(J[1, 1])}" iyz="{_num(J[1, 2])}" izz="{_num(J[2, 2])}"/></inertial>')


def _structure(n: int, topology: str, rng, fixed_fraction: float):
    """Parent link index and joint type for links 1..L (link 0 is the root)."""
    parent, kind = [None], [None]
    movable = 0
    while movable < n:
        k = len(parent)
        if topology == "chain":
            p = k - 1
        else:  # half the time extend the newest link (depth), else any link (branching)
            p = k - 1 if rng.uniform() < 0.5 else int(rng.integers(0, k))
        is_fixed = rng.uniform() < fixed_fraction
        t = "fixed" if is_fixed else str(rng.choice(["revolute", "continuous", "prismatic"],
                                                    p=[0.45, 0.3, 0.25]))
        parent.append(p)
        kind.append(t)
        movable += t != "fixed"
    return parent, kind


def _branches(parent, kind, below_moving_body: bool) -> bool:
    L = len(parent)
    children = [[c for c in range(1, L) if parent[c] == k] for k in range(L)]
    has_movable = [False] * L  # the subtree hanging from link k's own joint down contains a movable joint
    for k in reversed(range(1, L)):
        has_movable[k] = kind[k] != "fixed" or any(has_movable[c] for c in children[k])

    def moving(k):  # link k is moved by some movable joint above it
        while k != 0:
            if kind[k] != "fixed":
                return True
            k = parent[k]
        return False

    first = 1 if below_moving_body else 0
    return any((k == 0 or moving(k)) and sum(has_movable[c] for c in children[k]) >= 2
               for k in range(first, L))


def random_urdf_structure(n: int, topology: str = "chain", seed=0, fixed_fraction: float = 0.2,
                          massless_fraction: float = 0.15) -> dict:
    """The random mechanism as plain data: ``parent`` (link index per link, None for the root),
    ``kind`` (joint type per link), ``massless`` (bool per link) and the ``urdf`` text."""
    if topology not in ("chain", "tree"):
        raise ValueError(f"topology must be 'chain' or 'tree', got {topology!r}")
    if n < 1:
        raise ValueError("need n >= 1 movable joints")
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        parent, kind = _structure(n, topology, rng, fixed_fraction)
        ok = (  # n >= 3: branch below a moving body; n = 2 can only branch at the root.
            (topology == "chain" or _branches(parent, kind, below_moving_body=n >= 3))
            and (fixed_fraction == 0 or "fixed" in kind)
            and (n < 3 or {"revolute", "continuous", "prismatic"} <= set(kind)))
        if ok:
            break
    else:  # pragma: no cover
        raise RuntimeError("could not draw a mechanism with the promised features")
    L = len(parent)
    has_child = [any(parent[c] == k for c in range(1, L)) for k in range(L)]
    # Massless only for intermediate links (every leaf carries mass, so every
    # movable joint moves mass); the root's inertia never moves either way.
    massless = [bool(has_child[k] and rng.uniform() < massless_fraction) for k in range(L)]
    inner = [k for k in range(1, L) if has_child[k]]
    if massless_fraction > 0 and inner and not any(massless[1:]):
        massless[inner[int(rng.integers(len(inner)))]] = True  # at least one moving massless link
    lines = [f'<robot name="random_{topology}_{n}">']
    for k in range(L):
        body = "" if massless[k] else _inertial(rng)
        lines.append(f'  <link name="L{k}">{body}</link>')
    for k in range(1, L):
        xyz = rng.uniform(-0.4, 0.4, size=3)
        rpy = rng.uniform(-np.pi, np.pi, size=3)
        t = kind[k]
        inner = (f'<parent link="L{parent[k]}"/><child link="L{k}"/>'
                 f'<origin xyz="{_num(xyz)}" rpy="{_num(rpy)}"/>')
        if t != "fixed":
            inner += f'<axis xyz="{_num(_axis(rng))}"/>'
        if t == "revolute":
            inner += '<limit lower="-3.2" upper="3.2" effort="100" velocity="10"/>'
        elif t == "prismatic":
            inner += '<limit lower="-2" upper="2" effort="100" velocity="10"/>'
        lines.append(f'  <joint name="J{k}" type="{t}">{inner}</joint>')
    lines.append("</robot>")
    return {"parent": parent, "kind": kind, "massless": massless, "urdf": "\n".join(lines)}


def random_urdf(n: int, topology: str = "chain", seed=0, fixed_fraction: float = 0.2,
                massless_fraction: float = 0.15) -> str:
    """URDF text of a random mechanism with ``n`` movable joints (see the module docstring)."""
    return random_urdf_structure(n, topology, seed, fixed_fraction, massless_fraction)["urdf"]
