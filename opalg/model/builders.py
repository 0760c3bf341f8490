"""Model builders: serial chains, planar arms and valid random models."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.errors import ModelError
from opalg.model import _validate
from opalg.model.free_joint import FreeJoint
from opalg.model.multibody import Inertia, Joint, Model


def serial_chain(joints: Sequence[Joint], placements, inertias, gravity=(0.0, 0.0, -9.81),
                 names=None) -> Model:
    """A serial chain: body k hangs from body k-1, body 0 from the inertial frame.

    Parameters are those of :class:`opalg.Model` without the parent array.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> J = opalg.Joint("R", [0, 0, 1.])
    >>> m = opalg.serial_chain([J, J], [(np.eye(3), np.zeros(3))] * 2,
    ...                        [(1.0, np.zeros(3), np.eye(3))] * 2)
    >>> m.parents
    (-1, 0)
    """
    n = len(joints)
    return Model(list(range(-1, n - 1)), joints, placements, inertias, gravity, names)


def planar_arm(lengths, masses, inertias, com=None, inertia_about: str = "com",
               gravity=(0.0, -9.81, 0.0)) -> Model:
    r"""A planar serial arm of revolute joints about z moving in the x–y plane.

    Body k's frame sits at joint k with x along the link; joint k+1 is at
    ``(L_k, 0, 0)`` in body k.  Entries may be numbers or sympy symbols.

    Parameters
    ----------
    lengths, masses : sequence
        Link lengths L_k and masses m_k.
    inertias : sequence
        Planar moment of inertia of each link: about its mass centre
        (``inertia_about="com"``) or about its proximal joint (``"joint"``,
        converted with the parallel-axis theorem ``I_cm = I_O - m c^2``).
    com : sequence, optional
        Mass-centre offset c_k along the link (default ``L_k / 2``).
    gravity : array_like
        Default ``(0, -9.81, 0)``: the arm moves in a vertical plane.

    Notes
    -----
    The out-of-plane moments are set to ``I_zz / 2`` (a lamina), which keeps the
    tensor positive definite and satisfies the triangle inequality; they never
    enter the planar motion.

    Examples
    --------
    >>> import opalg
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [1 / 12, 1 / 12], gravity=(0, 0, 0))
    >>> M = opalg.crba(arm, [0.0, 0.0])
    >>> round(float(M[1, 1]), 12)   # I_cm + m (L/2)^2 = 1/12 + 1/4
    0.333333333333
    """
    _validate.choice(inertia_about, ("com", "joint"), "inertia_about", "planar_arm", ModelError)
    given = {"lengths": lengths, "masses": masses, "inertias": inertias, **({} if com is None else {"com": com})}
    for nm, x in given.items():
        if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
            raise ModelError(f"planar_arm: {nm} must be a sequence of numbers, got {_validate.describe(x)}")
        bk.check_no_strings(x, f"planar_arm: {nm}", ModelError)
    n = len(lengths)
    if n == 0 or any(len(x) != n for x in given.values()):
        sizes = {nm: len(x) for nm, x in given.items()}
        raise ModelError("planar_arm: lengths, masses, inertias (and com) must have the same length >= 1, "
                         f"got {sizes}")
    com = [L / 2 for L in lengths] if com is None else list(com)
    joints, places, inert = [], [], []
    for k in range(n):
        joints.append(Joint("R", [0.0, 0.0, 1.0], name=f"joint{k + 1}"))
        r = bk.asarray([0, 0, 0] if k == 0 else [lengths[k - 1], 0, 0])
        places.append((np.eye(3), r))
        Izz = inertias[k] - masses[k] * com[k] ** 2 if inertia_about == "joint" else inertias[k]
        J = bk.asarray([[Izz / 2, 0, 0], [0, Izz / 2, 0], [0, 0, Izz]])
        inert.append(Inertia(masses[k], bk.asarray([com[k], 0, 0]), J))
    return serial_chain(joints, places, inert, gravity, names=[f"link{k + 1}" for k in range(n)])


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random proper rotation (QR of a Gaussian matrix)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def random_inertia(rng: np.random.Generator) -> Inertia:
    """A physically valid inertia: a random box (triangle inequality holds strictly),
    rotated, with an offset mass centre."""
    mass = rng.uniform(0.5, 3.0)
    a, b, c = rng.uniform(0.1, 1.0, size=3)
    D = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R = random_rotation(rng)
    return Inertia(mass, rng.uniform(-0.3, 0.3, size=3), R @ D @ R.T)


def _random_joint(rng: np.random.Generator, joints: str, k: int) -> Joint:
    def axis():
        v = rng.normal(size=3)
        return v / np.linalg.norm(v)

    u = rng.uniform()
    if joints == "revolute" or u < 0.6:
        return Joint("R", axis(), name=f"joint{k}")
    if joints == "single" or u < 0.8:
        return Joint("P", axis(), name=f"joint{k}")
    m = int(rng.integers(2, 4))
    kinds = [("R", "P")[int(rng.uniform() < 0.3)] for _ in range(m)]
    return Joint(kinds, np.array([axis() for _ in range(m)]), name=f"joint{k}")


def _random_joint_any(rng: np.random.Generator, k: int) -> Joint:
    """A joint of any kind (``joints="all"``): R, P, helical, spherical, or 2–3 axes of R/P/H.

    Helical pitches are U(-0.2, 0.2) m/rad, comparable with the link sizes (±0.5 m)
    over a radian of rotation.  Drawn by a separate function so that the draws of
    the other ``joints`` options stay exactly as they were.
    """
    def axis():
        v = rng.normal(size=3)
        return v / np.linalg.norm(v)

    name, u = f"joint{k}", rng.uniform()
    if 0.7 <= u < 0.8:
        return Joint.spherical(name)
    if u < 0.7:  # one axis: R 35 %, P 15 %, H 20 %
        kinds = ["R" if u < 0.35 else "P" if u < 0.5 else "H"]
    else:        # 2-3 axes of uniformly drawn kinds
        kinds = [("R", "P", "H")[int(rng.integers(0, 3))] for _ in range(int(rng.integers(2, 4)))]
    pitch = [rng.uniform(-0.2, 0.2) if c == "H" else None for c in kinds]
    return Joint(kinds, np.array([axis() for _ in kinds]), name=name,
                 pitch=pitch[0] if len(kinds) == 1 else pitch)


def random_model(n: int, topology: str = "chain", seed=None, joints: str = "mixed",
                 n_roots: int = 1, gravity=(0.0, 0.0, -9.81), floating: bool = False) -> Model:
    """A valid random model for tests, notebooks and benchmarks.

    Parameters
    ----------
    n : int
        Number of bodies.
    topology : {"chain", "tree"}
        ``"tree"`` draws each parent uniformly among earlier bodies and makes
        sure at least one body has two children (for n >= 3).
    seed : int or numpy Generator
    joints : {"mixed", "revolute", "single", "all"}
        ``"mixed"``: revolute (most), prismatic, and 2–3 axis joints of mixed
        type; ``"single"``: revolute and prismatic only; ``"revolute"``: only
        revolute joints; ``"all"``: every kind — revolute, prismatic, helical
        (pitch U(-0.2, 0.2) m/rad), spherical and 2–3 axis sequences of R/P/H.
    n_roots : int
        Number of bodies attached to the inertial frame (trees only; a forest if > 1).
    floating : bool
        Put every root on a :class:`opalg.model.free_joint.FreeJoint` (a free-floating base:
        nq = nv + 1 per root, docs/REFERENCE.md K8).  The other bodies are drawn
        exactly as without it.

    Examples
    --------
    >>> import opalg
    >>> m = opalg.random_model(6, "tree", seed=1)
    >>> m.n, len(m.parents)
    (6, 6)
    """
    where = "random_model"
    n = _validate.integer(n, "n", where, error=ModelError)
    if n < 1:
        raise ModelError(f"random_model: need n >= 1 bodies, got n={n}")
    _validate.choice(topology, ("chain", "tree"), "topology", where, ModelError)
    _validate.choice(joints, ("mixed", "revolute", "single", "all"), "joints", where, ModelError)
    n_roots = _validate.integer(n_roots, "n_roots", where, lo=1, error=ModelError)
    _validate.flag(floating, "floating", where, ModelError)
    if topology == "chain" and n_roots != 1:
        raise ModelError(f"random_model: a chain has exactly one root; got n_roots={n_roots} (use topology='tree')")
    if topology == "tree" and n_roots > n:
        raise ModelError(f"random_model: need 1 <= n_roots <= n (got n={n}, n_roots={n_roots})")
    if isinstance(seed, (str, bytes, bool, float, np.bool_, np.floating)):
        raise ModelError(f"random_model: seed must be None, an int or a numpy Generator, got {_validate.describe(seed)}")
    rng = np.random.default_rng(seed)
    if topology == "chain":
        parents = list(range(-1, n - 1))
    else:
        parents = [-1] * n_roots + [int(rng.integers(0, k)) for k in range(n_roots, n)]
        counts = np.bincount([p for p in parents if p >= 0], minlength=n)
        if n - n_roots >= 2 and counts.max() < 2:
            parents[n_roots + 1] = parents[n_roots]
    js = [_random_joint_any(rng, k) if joints == "all" else _random_joint(rng, joints, k)
          for k in range(n)]
    places = [(random_rotation(rng), rng.uniform(-0.5, 0.5, size=3)) for _ in range(n)]
    inert = [random_inertia(rng) for _ in range(n)]
    if floating:
        js = [FreeJoint(f"joint{k}") if parents[k] == -1 else j for k, j in enumerate(js)]
    return Model(parents, js, places, inert, gravity)
