r"""Closed mechanisms for tests, notebooks and benchmarks: a four-bar and random closed trees (H2–H6)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from opalg.model.builders import planar_arm, random_model, random_rotation
from opalg.errors import StateError
from opalg.model import _validate
from opalg.model.kinematics import body_poses
from opalg.model.multibody import Inertia, Joint, Model
from opalg.spatial.vectors import rotation_about
from opalg.closed.closure import LoopClosure
from opalg.closed.system import ClosedSystem


def _four_bar_angles(lengths, crank: float):
    """Absolute angles of crank, coupler, rocker (C → D) and D → C at a closed pose (upper branch)."""
    a, b, c, d = lengths
    B = a * np.array([np.cos(crank), np.sin(crank)])
    D = np.array([d, 0.0])
    L = np.linalg.norm(D - B)
    if not abs(b - c) < L < b + c:
        raise StateError(f"four_bar: no closed pose at crank angle {crank} for lengths {tuple(lengths)}")
    x = (L ** 2 + b ** 2 - c ** 2) / (2 * L)          # along B → D, from B
    h = np.sqrt(b ** 2 - x ** 2)
    u = (D - B) / L
    C = B + x * u + h * np.array([-u[1], u[0]])
    ang = lambda v: float(np.arctan2(v[1], v[0]))   # noqa: E731
    return crank, ang(C - B), ang(D - C), ang(C - D)


def four_bar(lengths: Sequence[float] = (1.0, 3.0, 2.0, 2.5), masses: Sequence[float] = (1.0, 2.0, 1.5),
             crank: float = 0.6, closure: str = "planar", gravity=(0.0, -9.81, 0.0)):
    r"""A planar four-bar linkage (crank, coupler, rocker; ground link of length d) in the x–y plane.

    ``lengths`` = (crank a, coupler b, rocker c, ground d); links are uniform rods (I = mL²/12).
    ``closure`` chooses the spanning tree and the closure rows:

    * ``"revolute"``: the 3-body chain crank–coupler–rocker, the rocker's tip joined to the
      ground pivot D = (d, 0, 0) by a 5-row revolute closure about z.  In a planar model its three
      out-of-plane rows vanish identically: Λ_c⁻¹ has rank 2 of 5 (the planar rank trap);
    * ``"planar"``: the same tree with the in-plane rows of that revolute closure, rows=[3, 4]
      (v_x, v_y);
    * ``"split"``: a different spanning tree — the rocker cut in the middle, its halves hanging
      from C (on the crank–coupler chain) and from the ground pivot D — closed by a planar weld,
      rows=[2, 3, 4] (ω_z, v_x, v_y).  Same mechanism, same masses: θ̈ of the crank, coupler and
      rocker angles agree with the other two (loop-cut invariance).

    Returns
    -------
    (ClosedSystem, q) with q a closed configuration at the given crank angle (upper branch).
    For ``"split"`` q = (θ₁, θ₂, θ₃, θ₄): crank, coupler (relative), rocker half at C (relative)
    and the half at D (absolute).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar
    >>> sys, q = four_bar(closure="planar")
    >>> sys.m, bool(np.abs(sys.constraint_error(q)).max() < 1e-12)
    (2, True)
    """
    where = "four_bar"
    _validate.choice(closure, ("revolute", "planar", "split"), "closure", where)
    for nm, x, n in (("lengths", lengths, 4), ("masses", masses, 3)):
        if np.any(_validate.array(x, nm, where, (n,)) <= 0):
            raise StateError(f"{where}: {nm} must be > 0, got {list(np.asarray(x).tolist())}")
    a, b, c, d = (float(x) for x in lengths)
    m1, m2, m3 = (float(x) for x in masses)
    crank = _validate.real(crank, "crank", where)
    t1, t2, t3, t4 = _four_bar_angles((a, b, c, d), crank)
    if closure in ("revolute", "planar"):
        model = planar_arm([a, b, c], [m1, m2, m3], [m1 * a * a / 12, m2 * b * b / 12, m3 * c * c / 12],
                           gravity=gravity)
        kw = dict(kind="revolute", axis=[0, 0, 1.0]) if closure == "revolute" else dict(rows=[3, 4])
        lc = LoopClosure((2, [c, 0, 0]), (-1, [d, 0, 0]), name="D", **kw)
        q = np.array([t1, t2 - t1, t3 - t2])
        return ClosedSystem(model, [lc]), (q + np.pi) % (2 * np.pi) - np.pi
    if closure != "split":
        raise StateError(f"four_bar: closure must be 'revolute', 'planar' or 'split', got {closure!r}")
    h, mh = c / 2, m3 / 2

    def rod(m, L):   # a lamina rod along x from the joint, as planar_arm builds it
        Izz = m * L * L / 12
        return Inertia(m, np.array([L / 2, 0, 0]), np.diag([Izz / 2, Izz / 2, Izz]))

    model = Model([-1, 0, 1, -1], [Joint("R", [0, 0, 1.0], name=f"joint{k + 1}") for k in range(4)],
                  [(np.eye(3), np.zeros(3)), (np.eye(3), np.array([a, 0, 0])),
                   (np.eye(3), np.array([b, 0, 0])), (np.eye(3), np.array([d, 0, 0]))],
                  [rod(m1, a), rod(m2, b), rod(mh, h), rod(mh, h)], gravity,
                  names=["crank", "coupler", "rocker_C", "rocker_D"])
    flip = np.diag([-1.0, -1.0, 1.0])                 # the D half points the other way
    lc = LoopClosure((2, [h, 0, 0]), (3, flip, [h, 0, 0]), rows=[2, 3, 4], name="rocker")
    q = np.array([t1, t2 - t1, t3 - t2, t4])
    return ClosedSystem(model, [lc]), (q + np.pi) % (2 * np.pi) - np.pi


def random_closed_system(n: int, n_loops: int, seed: int, kinds: Sequence[str] = ("weld", "ball", "revolute"),
                         where: Sequence[str] = ("branch", "across", "ground"), joints: str = "all",
                         topology: str = "tree"):
    r"""A random tree with ``n_loops`` closures, and a configuration where all of them are closed.

    The model is :func:`opalg.random_model` (n, topology, seed, joints).  Closure i has kind
    ``kinds[i % len(kinds)]`` and joins two bodies chosen by ``where[i % len(where)]``: a body and
    one of its ancestors (``"branch"``), two bodies in different branches (``"across"``), or a body
    and the ground (``"ground"``).  Each loop path (the bodies between the two frames) must carry
    at least as many dofs as the closure has rows, and the stacked G_c must have full row rank at
    the drawn configuration q*; otherwise another draw is made.  Frame e1 is random on its body;
    frame e2 is placed so that it coincides with e1 at q* (turned about the axis for a revolute
    closure), so q* is closed exactly.

    Returns
    -------
    (ClosedSystem, q*)

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import random_closed_system
    >>> sys, q = random_closed_system(8, 2, seed=4)
    >>> bool(np.abs(sys.constraint_error(q)).max() < 1e-10)
    True
    """
    n_loops = _validate.integer(n_loops, "n_loops", "random_closed_system", lo=0)
    seed = _validate.integer(seed, "seed", "random_closed_system")
    if isinstance(kinds, str) or isinstance(where, str):
        raise StateError(f"random_closed_system: kinds and where must be sequences of str, got "
                         f"{kinds!r} and {where!r} (write kinds=[{kinds!r}])")
    bad = [k for k in kinds if k not in ("weld", "ball", "revolute")]
    if bad or not kinds or not where:
        raise StateError(f"random_closed_system: kinds must be non-empty, from 'weld', 'ball', 'revolute' "
                         f"(got {list(kinds)!r}), and where non-empty (got {list(where)!r})")
    model = random_model(n, topology, seed=seed, joints=joints)
    rng = np.random.default_rng(10_000 + int(seed))
    why = "G_c never had full row rank with N > m"
    for _ in range(200):
        q = rng.uniform(-1.0, 1.0, size=model.ndof)
        R, p = body_poses(model, q)
        closures = []
        for i in range(n_loops):
            kind, wh = kinds[i % len(kinds)], where[i % len(where)]
            pair = _pick_pair(model, rng, wh, c_rows(kind))
            if pair is None:
                why = (f"no pair of bodies for loop {i} ({kind}, {wh!r}) has >= "
                       f"{c_rows(kind)} dofs on its loop path")
                break
            k1, k2 = pair
            R1, p1 = random_rotation(rng), rng.uniform(-0.3, 0.3, 3)
            Rw, pw = R[k1] @ R1, R[k1] @ p1 + p[k1]      # e1 in the world at q*
            axis = None
            if kind == "revolute":
                axis = rng.normal(size=3)
                axis /= np.linalg.norm(axis)
                Rw2 = Rw @ rotation_about(axis, rng.uniform(-np.pi, np.pi))
            else:
                Rw2 = Rw if kind == "weld" else random_rotation(rng)
            if k2 == -1:
                R2, p2 = Rw2, pw
            else:
                R2, p2 = R[k2].T @ Rw2, R[k2].T @ (pw - p[k2])
            closures.append(LoopClosure((k1, R1, p1), (k2, R2, p2), kind=kind, axis=axis, name=f"loop{i}"))
        if len(closures) < n_loops:
            continue
        sys = ClosedSystem(model, closures)
        sv = np.linalg.svd(sys.jacobian(q), compute_uv=False)
        if sys.m < model.ndof and sv[-1] > 1e-3 * sv[0]:
            return sys, q
    raise StateError(f"random_closed_system: no admissible draw for n={n}, n_loops={n_loops}, seed={seed}: "
                     f"{why}; try another seed or more bodies")


def c_rows(kind: str) -> int:
    """Rows of a closure kind."""
    return {"weld": 6, "ball": 3, "revolute": 5}[kind]


def _path_dofs(model: Model, k1: int, k2: int) -> int:
    """Dofs of the joints on the loop through the tree between bodies k1 and k2 (k2 = -1: ground)."""
    def anc(k):
        out = []
        while k != -1:
            out.append(k)
            k = model.parents[k]
        return out
    a1, a2 = anc(k1), anc(k2) if k2 != -1 else []
    common = set(a1) & set(a2)
    return sum(model.joint_sizes[k] for k in set(a1) ^ set(a2) if k not in common)


def _pick_pair(model: Model, rng, where: str, rows: int):
    """Bodies (k1, k2) of the requested kind with >= rows dofs on the loop path, or None."""
    n = model.n
    cands = []
    for k1 in range(n):
        anc = []
        k = model.parents[k1]
        while k != -1:
            anc.append(k)
            k = model.parents[k]
        if where == "ground":
            cands.append((k1, -1))
        elif where == "branch":
            cands += [(k1, k2) for k2 in anc]
        elif where == "across":
            cands += [(k1, k2) for k2 in range(k1 + 1, n) if k2 not in anc and k1 not in _ancestors(model, k2)]
        else:
            raise StateError(f"random_closed_system: where must be 'branch', 'across' or 'ground', got {where!r}")
    cands = [c for c in cands if _path_dofs(model, *c) >= rows]
    if not cands:
        return None
    return cands[int(rng.integers(len(cands)))]


def _ancestors(model: Model, k: int) -> list:
    out = []
    k = model.parents[k]
    while k != -1:
        out.append(k)
        k = model.parents[k]
    return out
