r"""Property tests: every recursion against the dense LU route, on random models (hypothesis).

What is drawn (:func:`draw_case`, shared with ``tools/property_report.py``)
---------------------------------------------------------------------------
Chains, trees and forests (parent arrays) with labels in topological, reversed
(tip-to-base) or random order; joints revolute, prismatic, helical (once
``opalg.Joint`` has them), 2–3 axis joints of mixed R/P(/H) kinds with random
unit axes, spherical joints (``Joint.spherical()``) and chains of spherical
joints only; masses log-uniform in 1e-6..1e6 *within one model* (or all in
1 mg..1 g, or all 0.5..3 kg), boxes of a per-model length scale 1 mm..1 m (or
1..10 mm, or 1 m) with rotated principal frames and offset mass centres, random
placements — so that 1 mm / 1 mg arms are drawn too; gravity on or off; state
batches (), (5,) or (2, 3); and, when the model has a 3R joint, configurations
at a distance 10^-e (e in 1..12) from its gimbal lock.  A few models come from
``opalg.random_model`` itself (``joints="all"`` once it exists, else "mixed").

The criterion (the same for every recursion)
--------------------------------------------
For each state, ``err`` is the recursion's error and ``err_dense`` the error of
the dense route at the same state, both measured the same way against the same
exact answer ("Error measures" below).  A state passes if

    err <= FACTOR * err_dense + floor(recursion, state)          (FACTOR = 10)
    floor = ACC * eps + min(cond_eq(ℳ) * eps, LOST)   for the recursions that solve with ℳ
    floor = ACC * eps                                 for the forward evaluations (rnea, crba, J)

or if the recursion *refuses* the call with an ``opalg.OpalgError`` (ideally
``SingularConfigurationError``) **and** LU has lost all accuracy at one of the
states of the call (the call is batched, so one refusal covers the batch).
Non-finite output and any other exception fail.

* ``err_dense`` is the largest error of three float64 dense routes at that
  state: LU (LAPACK ``gesv``, ``np.linalg.solve``) and Cholesky
  (``scipy.linalg.cho_solve``, where ℳ is numerically positive definite) on
  ``crba(q)`` and ``bias(q, q̇)``, and LU on both perturbed randomly at the
  scale of their own first-order rounding (:meth:`State.perturbed`).  Each is
  backward stable, so each error is an honest measure of what the data allow;
  one alone is sometimes lucky by 100x — LU on a prismatic chain of light
  bodies carrying a 2e5 kg body (LU 2e-12, Cholesky 2e-10, the recursions
  6e-11), or LU and Cholesky together where the error is set by how the
  rounding of ℳ or C happened to fall (near a gimbal lock; a millimetre
  pendulum whose gravity torque is a small difference) — the largest of three
  unrelated rounding patterns is not.
* Relative to the dense route first: mass ratios of 1e12 and millimetre links
  give cond(ℳ) of 1e15 and more from the units alone, while LU still solves
  such systems to 1e-10; a bound on cond(ℳ)·eps alone would license exactly
  the drift and refusals the issue is about.  "No more than 10x the error of
  the dense factorizations" is what the O(n) recursions must deliver; 10
  covers the fluctuation between different rounding patterns.
* The floor, for when the dense routes are luckier than the data allow (their
  error far below what their rounding could have given, e.g. exact to the last
  bit), derived from the size of the computation and the conditioning:

  - ``ACC * eps`` (ACC = 1e4, 2.2e-12): the rounding the O(n) recursions
    accumulate where the dense formulas are exact.  Measured: the worst
    (err - FACTOR err_dense - the conditioning term) over 3,000 random models
    (the 2,000 of seeds 0-1999 at n <= 8 and the report's 1,000 at n <= 12 and
    spherical chains <= 30 bodies, every joint kind) under the default and the
    ``OPENBLAS_CORETYPE=Sandybridge`` / ``Prescott`` kernels with numpy's AVX2
    off is 590 eps at n <= 8 (crba's common-frame sums: (extent/link)² lever
    arms, REFERENCE D8; rnea 376 eps), a 17x margin; the n <= 12 models reach
    1.05e3 eps (crba, 11 bodies: 9.5x).
  - ``cond_eq * eps`` for the recursions that solve with ℳ (``SOLVES``): the
    classical forward-error bound cond·eps of a backward-stable solve, the
    accuracy the data determine.  The dense routes' error can be far below it
    for a quantity better conditioned than ℳ itself: Λ⁻¹ = Jℳ⁻¹J* near a
    gimbal lock, where J shares ℳ's near-null direction (a 3-body spherical
    chain at cond(ℳ) = 1.7e6: lambda_inv 3.2e-13 = 8e-4 cond·eps, the dense
    routes over 15x luckier).  cond_eq is the 2-norm condition number of ℳ equilibrated to a
    unit diagonal (S ℳ S, S = diag(ℳ)^(-1/2)), the units in which the error
    measures below are taken: a 1 mg / 1 mm arm has the cond_eq of the
    1 kg / 1 m arm, so the floor does not grow with the units (cond(ℳ) does).
    Over the 3,000 models the recursions used at most 0.018 of it where LU is
    not lost (lambda_inv, upsilon), except one n = 5 spherical chain of the
    n <= 12 set where minv's residual is 4.6 cond_eq eps, 45x LU's (it failed
    the old criterion too; ``tools/property_report.py --show 100721``).  It
    is capped at LOST, so no floor accepts a result with fewer than two
    correct digits; where LU is lost the criterion is 10x LU's error as before.

  A recursion much worse than LU still fails: a dropped term or a wrong sign
  gives O(1) errors, and an unstable update (the old P − G Uᵀ downdate lost
  4e-4 at cond 1e6, E11) is 1e6 times the floor there.
* "LU has lost all accuracy" at a state (``lost``): the LU solve of the drawn
  problems or the LU inverse (its equilibrated residual, below) has relative
  error > LOST = 1e-2 — fewer than two correct digits — or cond(ℳ)·eps_ld >
  1e-3, where even the extended-precision reference is void.  Measured, not
  predicted from cond(ℳ)·eps, for the reason above: a 1 mg / 1 mm arm has a
  huge cond and is perfectly solvable, so refusing it is a bug; where LU keeps
  fewer than two digits a refusal is better than noise.

Exact answers (where errors are measured from)
----------------------------------------------
* ABA: draw q̈ (NRHS = 4 of them per state), compute τ = rnea(q, q̇, q̈) (in
  extended precision, rounded to float64: see :func:`exact_tau`); ABA and
  ``solve(crba, τ − bias)`` then solve the same problems, and both are
  compared with the drawn q̈ (relative 2-norm, the worst of the 4).
  One right-hand side is not enough: LU's error on a single one fluctuates
  by 10x from draw to draw, the worst of 4 is stable to ~3x.  No reference
  needed.
* ℳ⁻¹: the residual ``minv(q) @ crba(q) − I`` against LU's
  ``solve(crba, I) @ crba − I``, both equilibrated (S⁻¹ R S with
  S = diag(crba)^(-1/2), Frobenius / sqrt(N)): unequilibrated, the residual of
  a 1 mg body next to a 1 t body is 1e12 times larger from the units alone,
  for every method.  No reference needed.
* Everything else is compared with a reference computed in extended precision
  (``np.longdouble``, 64-bit mantissa, eps_ld = 1.1e-19, ~2000x finer than
  float64) along the dense operator route of the algebra — ℳ = HφMφ*H* with
  φ built block by block from ℰφ, ℳ⁻¹ by Gauss–Jordan in extended precision,
  Ω(k, k) = [φ*H*ℳ⁻¹Hφ](k, k) (F1), D(k) the Schur complement of the subtree
  of k in ℳ, Λ⁻¹ = Jℳ⁻¹J*, T = Hφ(Mφ*(H*q̈ + a) + b), J = ᵉX_k [φ*H*](k) —
  never through the recursion under test.  The same formulas in float64 on
  the three dense routes give ``err_dense``.  Their errors are ~2000x
  those of the reference, so the reference's own error cannot decide a verdict.
  These tests are skipped where ``np.longdouble`` is not extended (e.g.
  Windows, macOS on arm64).

Error measures
--------------
* vectors (q̈, T): relative 2-norm.  For T the dense yardstick is
  ``crba(q) q̈ + bias(q, q̇)`` in float64 and its error is floored at
  eps (‖ℳ‖‖q̈‖ + ‖C‖)/‖T‖, the rounding of the product itself: no forward
  evaluation can be asked to beat that.
* joint-space symmetric matrices (ℳ, ℳ⁻¹(k, k), D(k), all positive
  definite): the diagonally scaled error max_ij |A − R|_ij / sqrt(R_ii R_jj),
  maximised over the blocks.  It is invariant under a change of units of each
  coordinate (|R_ij| <= sqrt(R_ii R_jj)), so a 1 mg body's block counts as
  much as a 1 t body's, where a plain norm would see only the largest entries.
* spatial symmetric matrices (Υ(k), Λ⁻¹: positive semidefinite, often rank
  deficient): the same with one scale per 3-vector group (angular, linear),
  sqrt(trace / 3) of the group's diagonal block (:func:`spatial_err`):
  invariant under changes of the mass and length units and under rotations,
  and not fooled by an entry that is small only because an axis is nearly
  orthogonal to a coordinate direction.
* J: relative Frobenius norm per frame.
* batched calls: every test calls the recursion once on the whole batch;
  ``test_batched_equals_single`` checks that each state of the batch equals the
  call on that state alone: their relative difference must stay within
  FACTOR err_dense + floor of that state (both approximate the same thing).

Profiles: the default ("opalg", derandomized) runs ``MAX_EXAMPLES`` = 40 models
per test with n <= 8 (the file takes ~30-40 s on one core when it passes; failing
tests add hypothesis' shrinking); ``--hypothesis-profile=thorough`` (conftest.py)
runs >= 1,000 new random models per test with n <= 12 and spherical chains up to
30 bodies (about a minute per test); run it on this file only.  A failure prints
the drawn case (joints, parents, masses, length scale, gimbal distance) and the
verdict of every failing state; hypothesis prints the ``@reproduce_failure`` blob.
``tools/property_report.py --show SEED`` prints every verdict of a report seed.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from functools import cached_property

import numpy as np
import pytest
import scipy.linalg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ledger
import opalg
from helpers import Tol
from opalg import Joint, Model, OpalgError
from opalg.spatial.vectors import motion_transform

FACTOR = 10.0     # allowed error relative to LU's at the same state
ACC = 1e4         # floor, in eps: rounding accumulated where the dense route is exact (measured)
LOST = 1e-2       # LU relative error above which LU "has lost all accuracy"
EPS = float(np.finfo(float).eps)
#: The recursions that solve with ℳ: their floor adds the conditioning term cond_eq(ℳ)·eps.
SOLVES = ("aba", "minv", "minv_diag", "upsilon", "lambda_inv", "articulated")
LD = np.longdouble
EPS_LD = float(np.finfo(LD).eps)
EXTENDED = EPS_LD < 1e-18
REF_VOID = 1e-3   # cond(ℳ)·eps_ld above this: the extended reference itself is void


def floor(name: str, cond_eq: float) -> float:
    """The floor under FACTOR·err_dense (module docstring): ACC·eps, plus min(cond_eq·eps, LOST)
    for the recursions that solve with ℳ (``cond_eq``: ℳ equilibrated to a unit diagonal)."""
    if name not in SOLVES:
        return ACC * EPS
    return ACC * EPS + (min(cond_eq * EPS, LOST) if cond_eq == cond_eq else LOST)

RECURSIONS = ("rnea", "crba", "aba", "minv", "minv_diag", "upsilon", "lambda_inv",
              "frame_jacobian", "articulated")
#: Recursions whose error is measured against the extended-precision reference.
REFERENCE_BASED = ("rnea", "crba", "minv_diag", "upsilon", "lambda_inv", "frame_jacobian",
                   "articulated")
#: Report categories, by the most demanding joint present in a model.
CATEGORIES = ("revolute-only", "prismatic", "helical", "multi-axis", "spherical")

_PROFILE = (settings.get_current_profile_name() if hasattr(settings, "get_current_profile_name")
            else getattr(settings, "_current_profile", None))
THOROUGH = _PROFILE == "thorough"
MAX_N = 12 if THOROUGH else 8
MAX_CHAIN = 30 if THOROUGH else 8
MAX_EXAMPLES = 40
NRHS = 4          # right-hand sides (q̈ draws) per state: see "Exact answers"


# ---------------------------------------------------------------------------
# features that other work is adding: switched on automatically when present
# ---------------------------------------------------------------------------
def _helical_factory():
    """A callable ``make(axis, pitch, name) -> Joint`` if opalg has helical joints, else None.

    Looks for ``Joint.helical`` or a ``pitch`` parameter of ``Joint`` and tries the
    plausible spellings; a factory counts only if it builds a 1-dof joint.
    """
    tries = []
    if hasattr(Joint, "helical"):
        tries += [lambda a, h, nm: Joint.helical(a, h, name=nm),
                  lambda a, h, nm: Joint.helical(axis=a, pitch=h, name=nm)]
    try:
        has_pitch = "pitch" in inspect.signature(Joint).parameters
    except (TypeError, ValueError):
        has_pitch = False
    if has_pitch:
        tries += [lambda a, h, nm: Joint("helical", a, pitch=h, name=nm),
                  lambda a, h, nm: Joint("H", a, pitch=h, name=nm)]
    for make in tries:
        try:
            j = make(np.array([0.0, 0.0, 1.0]), 0.1, "probe")
        except (TypeError, ValueError, KeyError, AttributeError):
            continue
        if getattr(j, "ndof", None) == 1:
            return make
    return None


HELICAL = _helical_factory()


def _helical_axes() -> bool:
    """Whether multi-axis joints take helical axes: ``Joint(["R", "H"], axes, pitch=[None, h])``."""
    if HELICAL is None:
        return False
    try:
        Joint(["R", "H"], np.eye(3)[:2], pitch=[None, 0.1])
        return True
    except (TypeError, ValueError, KeyError):
        return False


HELICAL_AXES = _helical_axes()


def _builder_joints() -> str:
    try:
        opalg.random_model(3, "chain", seed=0, joints="all")
        return "all"
    except (TypeError, ValueError):
        return "mixed"


BUILDER_JOINTS = _builder_joints()


def joint_label(j: Joint) -> str:
    """'R', 'P', 'H' (helical), 'S' (Joint.spherical: RRR about x, y, z) or 'M' (other multi-axis)."""
    kinds = tuple(getattr(j, "kinds", ()))
    if j.ndof == 1:
        pitch = getattr(j, "pitch", None)
        try:
            pitched = pitch is not None and np.any(np.asarray(pitch, dtype=float) != 0)
        except (TypeError, ValueError):
            pitched = False
        if pitched or kinds[:1] == ("H",):
            return "H"
        return "P" if kinds[:1] == ("P",) else "R"
    # classifies the joint (axes are given exactly); not a round-off tolerance
    if kinds == ("R", "R", "R") and np.allclose(np.asarray(j.axes, dtype=float), np.eye(3)):
        return "S"
    return "M"


def category(labels) -> str:
    s = set(labels)
    if "S" in s:
        return "spherical"
    if "M" in s:
        return "multi-axis"
    if "H" in s:
        return "helical"
    if "P" in s:
        return "prismatic"
    return "revolute-only"


# ---------------------------------------------------------------------------
# one generator, two drivers: hypothesis (tests) and numpy seeds (the report)
# ---------------------------------------------------------------------------
class Rejected(Exception):
    """A draw that does not give a valid model (numpy driver: draw again)."""


class NumpySource:
    """Draws from a seeded numpy Generator (tools/property_report.py)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def integer(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def real(self, lo, hi):
        return float(self.rng.uniform(lo, hi))

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    def generator(self):
        return self.rng

    def reject(self, why):
        raise Rejected(why)


class HypothesisSource:
    """Draws through hypothesis, so that structural choices shrink (n, kinds, masses, ...).

    Bulk continuous values (rotations, axes, boxes, states) come from one numpy
    Generator whose seed is itself a hypothesis draw.
    """

    def __init__(self, draw):
        self.draw = draw

    def integer(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def real(self, lo, hi):
        return self.draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False))

    def choice(self, options):
        return self.draw(st.sampled_from(options))

    def generator(self):
        return np.random.default_rng(self.draw(st.integers(0, 2**32 - 1)))

    def reject(self, why):
        from hypothesis import reject
        reject()


@dataclasses.dataclass(repr=False)
class Case:
    """A model, a batch of states and body frames, with what was drawn.

    ``q``, ``qd``: batch + (N,); ``qdd``: batch + (NRHS, N), several accelerations per state.
    """

    model: Model
    labels: tuple
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    frames: list
    info: dict

    @property
    def category(self) -> str:
        return category(self.labels)

    @property
    def batch(self) -> tuple:
        return self.q.shape[:-1]

    def _repr_pretty_(self, p, cycle):  # hypothesis prints falsifying examples with this
        p.text(repr(self))

    def __repr__(self) -> str:
        m = self.model
        masses = [float(i.mass) for i in m.inertias]
        parts = [f"n={m.n}", f"N={m.ndof}", f"parents={list(m.parents)}",
                 f"joints={''.join(self.labels)}", f"category={self.category}",
                 f"masses={min(masses):.1e}..{max(masses):.1e}", f"batch={self.batch}"]
        parts += [f"{k}={v}" for k, v in self.info.items()]
        return "Case(" + ", ".join(parts) + ")"


def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


_PALETTES = {
    "revolute": ("R",),
    "prismatic": ("R", "P"),
    "multi-axis": ("R", "P", "M"),
    "spherical": ("R", "S"),
    "all": ("R", "P", "M", "S") + (("H",) if HELICAL else ()),
}
if HELICAL:
    _PALETTES["helical"] = ("R", "P", "H")
PALETTES = tuple(_PALETTES) + ("spherical-chain", "builder")


def _gimbal_angle(joint: Joint) -> float:
    """q2 at which the three revolute axes a, b, c of a 3R joint are dependent.

    In the frame after axis 1, the axes are a, b and Rot(b, ±q2) c; they are
    dependent when (a×b)·Rot(b, ±q2)c = 0.  The sign convention is settled
    numerically on a one-body model (σ_min of the joint Jacobian, public API).
    """
    a, b, c = np.asarray(joint.axes, dtype=float)
    nrm = np.cross(a, b)
    base = float(np.arctan2(-nrm @ c, nrm @ np.cross(b, c)))
    one = Model([-1], [joint], [(np.eye(3), np.zeros(3))], [(1.0, np.zeros(3), np.eye(3))],
                (0.0, 0.0, 0.0))

    def smin(q2):
        J = opalg.frame_jacobian(one, np.array([0.0, q2, 0.0]), (0, np.zeros(3)))
        return np.linalg.svd(J, compute_uv=False)[-1]

    return min((base, -base), key=smin)


def draw_case(src, max_n: int = MAX_N, max_chain: int | None = None) -> Case:
    """Draw one model, a batch of states and body frames (see the module docstring)."""
    max_chain = max_n if max_chain is None else max_chain
    palette = src.choice(PALETTES)
    if palette == "spherical-chain":
        n, topology = src.integer(1, max_chain), "chain"
    else:
        n, topology = src.integer(1, max_n), src.choice(("chain", "tree", "forest"))
    labelling = src.choice(("topological", "random", "reversed"))
    gravity_on = src.choice((True, False))
    batch = src.choice(((), (5,), (2, 3)))
    mass_mode = src.choice(("mixed", "unit", "tiny"))
    length_mode = src.choice(("unit", "mixed", "tiny"))
    if topology == "chain":
        parents = list(range(-1, n - 1))
    else:
        parents = [-1] + [src.integer(0, k - 1) for k in range(1, n)]
        if topology == "forest" and n >= 2:
            parents[1] = -1
    if palette == "spherical-chain":
        kinds = ["S"] * n
    elif palette == "builder":
        kinds = None
    else:
        kinds = [src.choice(_PALETTES[palette]) for _ in range(n)]
    mass_range = {"mixed": (-6.0, 6.0), "tiny": (-6.0, -3.0)}.get(mass_mode)
    log_mass = [src.real(*mass_range) if mass_range else None for _ in range(n)]
    length_range = {"mixed": (-3.0, 0.0), "tiny": (-3.0, -2.0)}.get(length_mode)
    ell = 10.0 ** src.real(*length_range) if length_range else 1.0
    gimbal = src.choice(("off", "near"))
    depth = src.real(1.0, 12.0) if gimbal == "near" else None
    rng = src.generator()
    g = 9.81 * _unit(rng) if gravity_on else np.zeros(3)

    if palette == "builder":
        topo = "chain" if topology == "chain" else "tree"
        kw = {"n_roots": 2} if topology == "forest" and n >= 2 else {}
        base = opalg.random_model(n, topo, seed=int(rng.integers(2**31)), joints=BUILDER_JOINTS,
                                  gravity=g, **kw)
        joints, places, inert = list(base.joints), list(base.placements), list(base.inertias)
        parents = list(base.parents)
        ell = 1.0
    else:
        joints, places, inert = [], [], []
        for k in range(n):
            name = f"joint{k}"
            kind = kinds[k]
            if kind == "R":
                j = Joint("R", _unit(rng), name=name)
            elif kind == "P":
                j = Joint("P", _unit(rng), name=name)
            elif kind == "H":
                pitch = float(rng.choice((-1.0, 1.0)) * ell * 10.0 ** rng.uniform(-2.0, 0.0))
                j = HELICAL(_unit(rng), pitch, name)
            elif kind == "S":
                j = Joint.spherical(name=name)
            else:
                m = int(rng.integers(2, 4))
                mk = [("R", "P")[int(rng.uniform() < 0.3)] for _ in range(m)]
                axes = np.array([_unit(rng) for _ in range(m)])
                kw = {}
                if HELICAL and HELICAL_AXES:  # some revolute axes become helical
                    mk = ["H" if c == "R" and rng.uniform() < 0.3 else c for c in mk]
                    if "H" in mk:
                        kw["pitch"] = [float(ell * 10.0 ** rng.uniform(-2.0, 0.0)) if c == "H" else None
                                       for c in mk]
                try:
                    j = Joint(mk, axes, name=name, **kw)
                except opalg.ModelError as e:  # axes dependent at q = 0: not a valid joint
                    src.reject(str(e))
            joints.append(j)
            places.append((_rotation(rng), ell * rng.uniform(-0.5, 0.5, size=3)))
            mass = 10.0 ** log_mass[k] if log_mass[k] is not None else rng.uniform(0.5, 3.0)
            a, b, c = ell * rng.uniform(0.1, 1.0, size=3)
            Dp = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
            R = _rotation(rng)
            inert.append((mass, ell * rng.uniform(-0.3, 0.3, size=3), R @ Dp @ R.T))

    # relabelling: new body i is drawn body perm[i]
    if labelling == "topological":
        perm = list(range(n))
    elif labelling == "reversed":
        perm = list(range(n))[::-1]
    else:
        perm = [int(p) for p in rng.permutation(n)]
    inv = {old: new for new, old in enumerate(perm)}
    new_parents = [-1 if parents[o] == -1 else inv[parents[o]] for o in perm]
    joints = [joints[o] for o in perm]
    try:
        model = Model(new_parents, joints, [places[o] for o in perm], [inert[o] for o in perm], g)
    except opalg.ModelError as e:  # pragma: no cover - the draws are valid by construction
        raise AssertionError(f"the generator drew an invalid model: {e}") from e
    labels = tuple(joint_label(j) for j in joints)

    # states: angles uniform, slides scaled by the length scale, rates and accelerations O(1)
    shape = tuple(batch) + (model.ndof,)
    q, qd = np.empty(shape), np.empty(shape)
    qdd = rng.normal(size=tuple(batch) + (NRHS, model.ndof))
    for k, j in enumerate(joints):
        for i, kind in enumerate(j.kinds):
            d = model.dof_slice[k].start + i
            if kind == "P":
                q[..., d] = ell * rng.normal(size=batch)
                qd[..., d] = ell * rng.normal(size=batch)
            else:
                q[..., d] = rng.uniform(-np.pi, np.pi, size=batch)
                qd[..., d] = rng.normal(size=batch)
    info = {"palette": palette, "topology": topology, "labels": labelling,
            "gravity": gravity_on, "length_scale": f"{ell:.1e}"}
    rrr = [k for k, j in enumerate(joints) if tuple(j.kinds) == ("R", "R", "R")]
    if gimbal == "near" and rrr:
        k = rrr[int(rng.integers(len(rrr)))]
        q2 = _gimbal_angle(joints[k]) + rng.choice((0.0, np.pi), size=batch)
        d = model.dof_slice[k].start + 1
        q[..., d] = q2 + rng.choice((-1.0, 1.0), size=batch) * 10.0 ** (-depth)
        info["gimbal"] = f"body {k} at 1e-{depth:.1f}"
    frames = [(int(rng.integers(n)), _rotation(rng), ell * rng.uniform(-0.5, 0.5, size=3))
              for _ in range(int(rng.integers(1, 3)))]
    return Case(model, labels, q, qd, qdd, frames, info)


@st.composite
def cases(draw, max_n=MAX_N, max_chain=MAX_CHAIN):
    return draw_case(HypothesisSource(draw), max_n, max_chain)


# ---------------------------------------------------------------------------
# linear algebra and the dense operator route, in any float dtype
# ---------------------------------------------------------------------------
def ld_inv(A) -> np.ndarray:
    """Inverse by Gauss–Jordan with partial pivoting in extended precision (NaN if singular)."""
    A = np.array(A, dtype=LD)
    n = A.shape[0]
    aug = np.concatenate([A, np.eye(n, dtype=LD)], 1)
    for j in range(n):
        p = j + int(np.argmax(np.abs(aug[j:, j])))
        if aug[p, j] == 0:
            return np.full((n, n), np.nan, dtype=LD)
        if p != j:
            aug[[j, p]] = aug[[p, j]]
        aug[j] /= aug[j, j]
        col = aug[:, j].copy()
        col[j] = 0
        aug -= np.outer(col, aug[j])
    return aug[:, n:]


def dense_solve(method: str, A, B):
    """A⁻¹B by Gauss–Jordan in extended precision ("ld"), LAPACK LU ("lu", ``np.linalg.solve``)
    or Cholesky ("chol", ``scipy.linalg.cho_factor``; raises LinAlgError if A is not
    numerically positive definite)."""
    if method == "ld":
        return ld_inv(A) @ np.asarray(B, dtype=LD)
    if method == "lu":
        return np.linalg.solve(A, B)
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), B)


class DenseRoute:
    """The dense operator route at one state, in the dtype of ``q``.

    φ blocks from ℰφ (φ(k,k) = I, φ(℘j,k) = ℰφ(℘j,j) φ(j,k)), ``Hphi`` = Hφ (N x 6n),
    ℳ = Σ_k (Hφ)(:,k) M(k) (Hφ)(:,k)*.  Solves with ``M_used`` (the route's own ℳ for
    the reference, crba(q) for the float64 yardsticks) by ``method`` (:func:`dense_solve`).
    """

    def __init__(self, model, q, qd=None, M_used=None, method=None):
        self.model = model
        self.dtype = q.dtype
        self.method = method or ("ld" if q.dtype == LD else "lu")
        ops = opalg.operators(model, q, qd)
        self.ops = ops
        n, N = model.n, model.ndof
        E = ops.E_phi.dense()
        H = ops.H.dense()
        self.Mb = np.asarray(ops.M.dense(), dtype=self.dtype)
        self.phi = {}
        Hphi = np.zeros((N, 6 * n), dtype=self.dtype)
        I6 = np.eye(6, dtype=self.dtype)
        for k in range(n):
            blk, j = I6, k
            while j != -1:
                self.phi[(j, k)] = blk
                Hphi[model.dof_slice[j], 6 * k:6 * k + 6] = H[model.dof_slice[j], 6 * j:6 * j + 6] @ blk
                p = model.parents[j]
                if p != -1:
                    blk = E[6 * p:6 * p + 6, 6 * j:6 * j + 6] @ blk
                j = p
        self.Hphi = Hphi
        self._M_used = M_used

    @cached_property
    def mass(self) -> np.ndarray:
        Hm = np.concatenate([self.Hphi[:, 6 * k:6 * k + 6] @ self.Mb[6 * k:6 * k + 6, 6 * k:6 * k + 6]
                             for k in range(self.model.n)], 1)
        return Hm @ self.Hphi.T

    @property
    def M_used(self):
        return self.mass if self._M_used is None else self._M_used

    #: The cached values that depend on the state alone, which :meth:`with_solver` shares.
    STATE_CACHES = ("mass",)

    def with_solver(self, M_used, method) -> "DenseRoute":
        """The same route (model, state: φ, Hφ, M shared, not rebuilt) solving with ``M_used``
        by ``method``: what ``DenseRoute(model, q, qd, M_used, method)`` builds.  Every other
        cached value (``Minv``, and any added later) is dropped, to be formed for this solver."""
        other = copy.copy(self)
        for name, attr in vars(DenseRoute).items():
            if isinstance(attr, cached_property) and name not in self.STATE_CACHES:
                other.__dict__.pop(name, None)
        other._M_used, other.method = M_used, method
        return other

    def solve(self, B):
        if self.method == "ld":
            return self.Minv @ np.asarray(B, dtype=LD)
        return dense_solve(self.method, self.M_used, B)

    @cached_property
    def Minv(self) -> np.ndarray:
        if self.method == "ld":
            return ld_inv(self.M_used)
        return dense_solve(self.method, self.M_used, np.eye(self.model.ndof))

    def tau(self, qdd) -> np.ndarray:
        """T = Hφ(Mφ*(H*q̈ + a) + b) for q̈ of shape (K, N); returns (K, N)."""
        a, b = self.ops.a, self.ops.b
        phia = np.zeros(6 * self.model.n, dtype=self.dtype)
        for (j, k), blk in self.phi.items():  # (φ* a)(k) = Σ_{j ⪰ k} φ(j,k)* a(j)
            phia[6 * k:6 * k + 6] += blk.T @ a[6 * j:6 * j + 6]
        alpha = np.asarray(qdd, dtype=self.dtype) @ self.Hphi + phia
        return (alpha @ self.Mb.T + b) @ self.Hphi.T

    def bias_abs(self) -> np.ndarray:
        """|Hφ|(|M||φ*||a| + |b|): C = Hφ(Mφ*a + b) evaluated with absolute values."""
        a, b = np.abs(self.ops.a), np.abs(self.ops.b)
        phia = np.zeros(6 * self.model.n, dtype=self.dtype)
        for (j, k), blk in self.phi.items():
            phia[6 * k:6 * k + 6] += np.abs(blk.T) @ a[6 * j:6 * j + 6]
        return np.abs(self.Hphi) @ (np.abs(self.Mb) @ phia + b)

    def upsilon(self) -> list:
        W = self.solve(self.Hphi)
        return [self.Hphi[:, 6 * k:6 * k + 6].T @ W[:, 6 * k:6 * k + 6] for k in range(self.model.n)]

    def jacobian(self, frame) -> np.ndarray:
        body, R, p = frame
        X = motion_transform(np.asarray(R).T, np.asarray(p))
        return X @ self.Hphi[:, 6 * body:6 * body + 6].T

    def minv_diag(self) -> list:
        return [self.Minv[s, s] for s in self.model.dof_slice]

    def pivots(self) -> list:
        """D(k): Schur complement of the descendants of k in ℳ restricted to the subtree of k."""
        m, M = self.model, self.M_used
        out = []
        for k in range(m.n):
            sk = np.arange(m.dof_slice[k].start, m.dof_slice[k].stop)
            desc = [j for j in range(m.n) if j != k and _is_ancestor(m.parents, k, j)]
            if not desc:
                out.append(M[np.ix_(sk, sk)])
                continue
            d = np.concatenate([np.arange(m.dof_slice[j].start, m.dof_slice[j].stop) for j in desc])
            Mdd, Mdk = M[np.ix_(d, d)], M[np.ix_(d, sk)]
            X = dense_solve(self.method, Mdd, Mdk)
            out.append(M[np.ix_(sk, sk)] - Mdk.T @ X)
        return out


def _is_ancestor(parents, i, j) -> bool:
    while j != -1:
        if j == i:
            return True
        j = parents[j]
    return False


# ---------------------------------------------------------------------------
# error measures
# ---------------------------------------------------------------------------
def vec_err(x, ref) -> float:
    ref = np.asarray(ref, dtype=LD)
    d = float(np.linalg.norm((np.asarray(x, dtype=LD) - ref).astype(float)))
    r = float(np.linalg.norm(ref.astype(float)))
    return d / r if r > 0 else d


def sym_err(A, R) -> float:
    """max_ij |A − R|_ij / sqrt(R_ii R_jj) (diagonally scaled; R symmetric PSD)."""
    R = np.asarray(R, dtype=LD)
    d = np.sqrt(np.abs(np.diagonal(R)).astype(float))
    top = d.max() if d.size else 0.0
    d = np.maximum(d, 1e-150 * max(top, 1e-150))     # a guard against 0/0, not a tolerance
    diff = np.abs((np.asarray(A, dtype=LD) - R).astype(float))
    return float((diff / np.outer(d, d)).max())


def spatial_err(A, R) -> float:
    """max_ij |A − R|_ij / (d_g(i) d_g(j)) for spatial (6m x 6m, R PSD) matrices.

    Rows come in 3-vector groups g (angular, linear, per frame) with scale
    d_g = sqrt(trace(R_gg) / 3): invariant under changes of the mass and length
    units and under rotations, and — unlike per-entry scaling — not fooled by an
    entry that is small only because an axis happens to be nearly orthogonal to a
    coordinate direction (Υ(k) and Λ⁻¹ are often rank deficient).
    """
    R = np.asarray(R, dtype=LD)
    g = np.sqrt(np.abs(np.array([float(np.trace(R[i:i + 3, i:i + 3])) for i in range(0, R.shape[0], 3)])) / 3)
    top = g.max() if g.size else 0.0
    d = np.repeat(np.maximum(g, 1e-150 * max(top, 1e-150)), 3)
    diff = np.abs((np.asarray(A, dtype=LD) - R).astype(float))
    return float((diff / np.outer(d, d)).max())


def blocks_err(As, Rs, measure=sym_err) -> float:
    return max(measure(A, R) for A, R in zip(As, Rs))


def rows_err(X, R) -> float:
    """max over the right-hand sides (rows) of the relative 2-norm error."""
    return max(vec_err(x, r) for x, r in zip(X, R))


def _nan_inf(e: float) -> float:
    return np.inf if np.isnan(e) else e


def equilibrated_cond(M, Mi) -> float:
    """cond₂(S M S) = ‖S M S‖₂ ‖S⁻¹ Mi S⁻¹‖₂ for ``Mi`` = M⁻¹ and S = diag(M)^(-1/2)."""
    s = np.sqrt(np.abs(np.diagonal(M)))
    s = np.where(s > 0, s, 1)
    Me = np.asarray(M / s[:, None] / s[None, :], dtype=float)
    Mie = np.asarray(Mi * s[:, None] * s[None, :], dtype=float)
    return float(np.linalg.norm(Me, 2) * np.linalg.norm(Mie, 2))


def residual(X, M) -> float:
    """‖S⁻¹(X M − I)S‖_F / sqrt(N), S = diag(M)^(-1/2): the residual of the inverse X of M
    after equilibration (X → S⁻¹XS⁻¹, M → SMS), so that a change of the units of one
    coordinate (1 mg next to 1 t) does not change it.
    """
    N = M.shape[-1]
    s = np.sqrt(np.abs(np.diagonal(M)))
    s = np.where(s > 0, s, 1.0)
    Rs = (X @ M - np.eye(N)) * s[:, None] / s[None, :]
    return float(np.linalg.norm(Rs) / np.sqrt(N))


# ---------------------------------------------------------------------------
# evaluation of one recursion on one case
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Record:
    """The verdict on one state of one call."""

    recursion: str
    state: tuple
    ok: bool
    err: float = np.nan
    err_dense: float = np.nan      # the yardstick: error of the dense route (LU, Cholesky)
    cond: float = np.nan           # cond₂(ℳ)
    lost: bool = False
    refused: str | None = None     # "ExceptionClass: message" of a refusal
    why: str = ""
    cond_eq: float = np.nan        # cond₂ of ℳ equilibrated to a unit diagonal (the floor's)

    @property
    def allowance(self) -> float:
        """FACTOR err_dense + floor: the largest error that passes."""
        return FACTOR * self.err_dense + floor(self.recursion, self.cond_eq)

    @property
    def ratio(self) -> float:
        """err / (FACTOR err_dense + floor): > 1 fails."""
        return self.err / self.allowance


class State:
    """Per-state yardsticks: the dense routes on crba(q) and (lazily) the extended reference.

    The float64 dense routes (:attr:`routes`): LU and Cholesky on (crba(q), bias(q, q̇)),
    and LU on both perturbed at the scale of their own first-order rounding
    (:meth:`perturbed`).  ``e_solve``, ``e_inv``: the LU solve error of the drawn
    problems and the residual of LU's inverse (they decide ``lost``); ``y_solve``,
    ``y_inv``: the yardsticks, the largest of these errors over the routes.
    """

    def __init__(self, case: Case, idx, Mhat, bias, tau):
        self.case, self.idx = case, idx
        m = case.model
        self.q, self.qd, self.qdd = case.q[idx], case.qd[idx], case.qdd[idx]
        self.Mhat, self.bias, self.tau = Mhat[idx], bias[idx], tau[idx]
        self.routes = []    # (method, ℳ, C) of the float64 dense routes that run
        errs = []
        with np.errstate(all="ignore"):
            for method, M, C in (("lu", self.Mhat, self.bias), ("chol", self.Mhat, self.bias),
                                 ("lu",) + self.perturbed()):
                try:
                    x = dense_solve(method, M, (self.tau - C).T).T
                    X = dense_solve(method, M, np.eye(m.ndof))
                except (np.linalg.LinAlgError, ValueError):  # singular / not positive definite
                    if not self.routes:  # LU on crba itself fails: LU is lost
                        self.routes.append((method, M, C))
                        errs.append((np.inf, np.inf))
                    continue
                self.routes.append((method, M, C))
                errs.append((_nan_inf(rows_err(x, self.qdd)), _nan_inf(residual(X, self.Mhat))))
        self.e_solve, self.e_inv = errs[0]
        self.y_solve = max(e[0] for e in errs)
        self.y_inv = max(e[1] for e in errs)

    @cached_property
    def route(self) -> DenseRoute:
        """The dense route at (q, q̇) (φ, Hφ, M, ℳ), built once: :meth:`perturbed` reads its
        operators, :attr:`dense` solves with it by each solver."""
        return DenseRoute(self.case.model, self.q, self.qd)

    def perturbed(self):
        """(ℳ + δℳ, C + δC): crba(q) and bias(q, q̇) perturbed at the scale of their rounding.

        δℳ_ij = u_ij eps |ℳ|_ij (u symmetric, uniform in [-1, 1]) with |ℳ| = |Hφ||M||Hφ|*,
        and δC_i = u_i eps (|τ|_i + |C|_i) with |C| = |Hφ|(|M||φ*||a| + |b|): ℳ and C
        evaluated with absolute values, the scale of the first-order rounding of any
        float64 evaluation of them (fixed pseudo-random u).  The LU solution with these
        data is an answer that a dense method, rounding differently, could as well have
        given.  It matters where the answer's error is set by how the rounding of ℳ or
        C happens to fall, not by the factorization, so that LU and Cholesky are lucky
        together: near a gimbal lock (the rounding of ℳ along its near-null direction,
        LU 200x below its level at the neighbouring states) or for a millimetre
        pendulum whose gravity torque is 1000x smaller than the moments it is a
        difference of.
        """
        route = self.route
        rng = np.random.default_rng(12345)
        N = self.case.model.ndof
        U = rng.uniform(-1.0, 1.0, size=(N, N))
        U = np.triu(U) + np.triu(U, 1).T
        Habs = np.abs(route.Hphi)
        Mabs = np.concatenate([Habs[:, 6 * k:6 * k + 6] @ np.abs(route.Mb[6 * k:6 * k + 6, 6 * k:6 * k + 6])
                               for k in range(self.case.model.n)], 1) @ Habs.T
        u = rng.uniform(-1.0, 1.0, size=self.bias.shape)
        Cabs = route.bias_abs()
        return (self.Mhat + EPS * U * Mabs,
                self.bias + EPS * u * (np.abs(self.tau).max(axis=0) + Cabs))

    @cached_property
    def ref(self) -> DenseRoute:
        return DenseRoute(self.case.model, self.q.astype(LD), self.qd.astype(LD))

    @cached_property
    def dense(self) -> list:
        """The float64 dense routes (:attr:`routes`) as DenseRoutes, for the matrix outputs."""
        return [self.route.with_solver(M, mt) for mt, M, _ in self.routes]

    @cached_property
    def cond(self) -> float:
        with np.errstate(all="ignore"):
            if EXTENDED:
                Mi = self.ref.Minv
                if not np.all(np.isfinite(Mi)):
                    return np.inf
                return float(np.linalg.norm(self.ref.mass.astype(float), 2)
                             * np.linalg.norm(Mi.astype(float), 2))
            return float(np.linalg.cond(self.Mhat))

    @cached_property
    def cond_eq(self) -> float:
        """cond₂ of S ℳ S, S = diag(ℳ)^(-1/2): ℳ in the units where each coordinate's diagonal
        entry is 1 (the units of the scaled error measures), so a change of units leaves it."""
        with np.errstate(all="ignore"):
            if EXTENDED:
                M, Mi = self.ref.mass, self.ref.Minv
                if not np.all(np.isfinite(Mi)):
                    return np.inf
            else:
                M = self.Mhat
                try:
                    Mi = np.linalg.inv(M)
                except np.linalg.LinAlgError:
                    return np.inf
            return equilibrated_cond(M, Mi)

    @property
    def void(self) -> bool:
        """The extended reference is too inaccurate to judge anything."""
        return EXTENDED and not self.cond * EPS_LD <= REF_VOID

    @property
    def lost(self) -> bool:
        """LU has lost all accuracy here (see the module docstring)."""
        return not (self.e_solve <= LOST and self.e_inv <= LOST) or self.void

    def _worst(self, measure) -> float:
        """The largest error of the float64 dense routes (a route that cannot run is skipped)."""
        out = []
        for route in self.dense:
            try:
                out.append(measure(route))
            except (np.linalg.LinAlgError, ValueError):
                continue
        return max(out) if out else np.inf

    # -- (err, err_dense) of each recursion's output at this state -------------
    def measure(self, name, out):
        r = self.ref if name in REFERENCE_BASED else None
        if name == "aba":
            return rows_err(out, self.qdd), self.y_solve
        if name == "minv":
            return residual(out, self.Mhat), self.y_inv
        if name == "rnea":
            t = r.tau(self.qdd)
            dense_t = self.qdd @ self.Mhat.T + self.bias
            tn = np.linalg.norm(t.astype(float), axis=-1)
            rounding = EPS * (np.linalg.norm(self.Mhat, 2) * np.linalg.norm(self.qdd, axis=-1)
                              + np.linalg.norm(self.bias)) / np.maximum(tn, 1e-300)
            return rows_err(out, t), max(rows_err(dense_t, t), float(rounding.max()))
        if name == "crba":
            return sym_err(out, r.mass), sym_err(self.dense[0].mass, r.mass)
        if name == "minv_diag":
            ref = r.minv_diag()
            return blocks_err(out, ref), self._worst(lambda d: blocks_err(d.minv_diag(), ref))
        if name == "upsilon":
            ref = r.upsilon()
            return (blocks_err(out, ref, spatial_err),
                    self._worst(lambda d: blocks_err(d.upsilon(), ref, spatial_err)))
        if name == "articulated":
            ref = r.pivots()
            return blocks_err(out, ref), self._worst(lambda d: blocks_err(d.pivots(), ref))
        if name == "lambda_inv":
            Jr = np.concatenate([r.jacobian(f) for f in self.case.frames], 0)
            ref = Jr @ r.Minv @ Jr.T
            J = np.concatenate([opalg.frame_jacobian(self.case.model, self.q, f)
                                for f in self.case.frames], 0)
            return spatial_err(out, ref), self._worst(lambda d: spatial_err(J @ d.solve(J.T), ref))
        if name == "frame_jacobian":
            e = e_d = 0.0
            for f, Jf in zip(self.case.frames, out):
                Jr = r.jacobian(f)
                e, e_d = max(e, vec_err(Jf, Jr)), max(e_d, vec_err(self.dense[0].jacobian(f), Jr))
            return e, e_d
        raise ValueError(name)


def call(case: Case, name: str, q=None, qd=None, qdd=None, tau=None):
    """The recursion on (a batch of) states; per-state outputs are picked by :func:`pick`."""
    m = case.model
    q = case.q if q is None else q
    qd = case.qd if qd is None else qd
    if name == "aba":  # the NRHS accelerations of a state share its q, qd
        return opalg.aba(m, q[..., None, :], qd[..., None, :], tau)
    if name == "rnea":
        return opalg.rnea(m, q[..., None, :], qd[..., None, :], case.qdd if qdd is None else qdd)
    if name == "crba":
        return opalg.crba(m, q)
    if name == "minv":
        return opalg.minv(m, q)
    if name == "minv_diag":
        return opalg.minv_diag(m, q)
    if name == "upsilon":
        return opalg.upsilon(m, q)
    if name == "articulated":
        return opalg.articulated(m, q).D
    if name == "lambda_inv":
        return opalg.lambda_inv(m, q, case.frames)
    if name == "frame_jacobian":
        return [opalg.frame_jacobian(m, q, f) for f in case.frames]
    raise ValueError(name)


def pick(out, idx):
    """State ``idx`` of a batched output (array or list of arrays)."""
    if isinstance(out, list):
        return [o[idx] for o in out]
    return out[idx]


def _finite(out) -> bool:
    parts = out if isinstance(out, list) else [out]
    return all(np.all(np.isfinite(p)) for p in parts)


def _refusal_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def exact_tau(case: Case) -> np.ndarray:
    """τ of the drawn q̈, batch + (NRHS, N): rnea in extended precision, rounded to float64.

    The last-bit-correct τ of the drawn problem.  A float64 τ would share its rounding
    with ``bias(q, q̇)`` (the same gravity and Coriolis arithmetic), which the LU route
    then cancels and ABA does not: on a 1-dof arm whose τ is mostly gravity, LU's
    error would be 10x below what the rounding of the data allows.
    """
    m = case.model
    if not EXTENDED:
        return opalg.rnea(m, case.q[..., None, :], case.qd[..., None, :], case.qdd)
    ld = [x.astype(LD) for x in (case.q[..., None, :], case.qd[..., None, :], case.qdd)]
    return np.asarray(opalg.rnea(m, *ld), dtype=float)


def states(case: Case) -> list:
    """The per-state yardsticks (crba, bias and τ evaluated once on the whole batch)."""
    m = case.model
    Mhat = opalg.crba(m, case.q)
    bias = opalg.bias(m, case.q, case.qd)
    tau = exact_tau(case)
    return [State(case, idx, Mhat, bias, tau) for idx in np.ndindex(*case.batch)]


def evaluate(case: Case, name: str, sts=None) -> list:
    """Records of every state of ``case`` for recursion ``name`` (one batched call)."""
    sts = states(case) if sts is None else sts
    tau = np.stack([s.tau for s in sts]).reshape(case.qdd.shape)
    try:
        with np.errstate(all="ignore"):
            out = call(case, name, tau=tau)
    except OpalgError as e:
        allowed = any(s.lost for s in sts)
        why = "" if allowed else ("refused, but LU keeps >= 2 digits at every state of the call "
                                  f"(worst LU error {max(max(s.e_solve, s.e_inv) for s in sts):.1e})")
        return [Record(name, s.idx, allowed, cond=s.cond, lost=s.lost, refused=_refusal_text(e), why=why)
                for s in sts]
    except Exception as e:  # noqa: BLE001 - anything else is an unclear failure
        return [Record(name, s.idx, False, cond=s.cond, lost=s.lost, refused=_refusal_text(e),
                       why=f"raised {type(e).__name__}, not an opalg.OpalgError") for s in sts]
    recs = []
    for s in sts:
        o = pick(out, s.idx)
        if not _finite(o):
            recs.append(Record(name, s.idx, False, cond=s.cond, lost=s.lost,
                               why="non-finite output without a refusal"))
            continue
        if name in REFERENCE_BASED and s.void:
            recs.append(Record(name, s.idx, True, cond=s.cond, lost=True,
                               why="not judged: cond(M) beyond the extended reference"))
            continue
        with np.errstate(all="ignore"):
            err, err_dense = s.measure(name, o)
        rec = Record(name, s.idx, True, err, err_dense, s.cond, s.lost, None, "", s.cond_eq)
        rec.ok = err <= rec.allowance
        if not rec.ok:
            rec.why = (f"error {err:.2e} > {FACTOR:g} x dense error {err_dense:.2e} "
                       f"+ floor {floor(name, s.cond_eq):.1e}")
            if s.lost:
                rec.why += " (LU is lost here too: refuse instead of returning a result this much worse)"
        recs.append(rec)
    return recs


def failure_message(case: Case, name: str, recs: list) -> str:
    bad = [r for r in recs if not r.ok]
    lines = [f"{name}: {len(bad)} of {len(recs)} states fail the criterion "
             f"err <= {FACTOR:g} err_dense + floor (or a refusal only where LU is lost)",
             f"  {case!r}"]
    for r in bad[:6]:
        by_cond = "" if np.isnan(r.err) else f", err/(cond_eq eps) = {r.err / (r.cond_eq * EPS):.2e}"
        lines.append(f"  state {r.state}: {r.why}; cond(M) = {r.cond:.2e}, cond_eq(M) = {r.cond_eq:.2e}"
                     f"{by_cond}, LU lost here: {r.lost}"
                     + (f"; {r.refused}" if r.refused else ""))
    return "\n".join(lines)


def refusal_reason(text: str) -> str:
    """A refusal message with numbers, names and indices blanked, to count refusals by reason."""
    t = re.sub(r"body \d+ \([^)]*\)", "body k", text)
    t = re.sub(r"body \d+", "body k", t)
    t = re.sub(r"joint [\w']+(?=[:,)])", "joint j", t)
    t = re.sub(r"\([^()]*\d[^()]*\)", "(...)", t)
    t = re.sub(r"\[[^\]]*\]", "[...]", t)
    t = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", t)
    return t[:200]


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.filter_too_much])
if not THOROUGH:
    _SETTINGS["max_examples"] = MAX_EXAMPLES
SETTINGS = settings(**_SETTINGS)

_NEEDS_EXTENDED = pytest.mark.skipif(
    not EXTENDED, reason=f"np.longdouble is not extended precision here (eps {EPS_LD:.1e}): "
                         "no reference more accurate than float64")
#: The id of docs/REFERENCE.md each recursion computes (the ledger's ``verifies`` marks).
IDS = {"rnea": "C2", "crba": "C3", "aba": "E9", "minv": "E8", "minv_diag": "F6", "upsilon": "F2",
       "lambda_inv": "F5", "frame_jacobian": "C8", "articulated": "E10c"}
_ROUTE = ("recursion vs the exact answer (drawn q̈, or extended-precision dense operator route), "
          "against 10x the float64 dense LU/Cholesky routes' error + floor")
_PARAMS = [pytest.param(r, marks=([_NEEDS_EXTENDED] if r in REFERENCE_BASED else [])
                        + [pytest.mark.verifies(IDS[r], route=_ROUTE)]) for r in RECURSIONS]


@pytest.mark.parametrize("name", _PARAMS)
@SETTINGS
@given(case=cases())
def test_recursion_matches_dense_lu(name, case):
    """err <= 10 err_dense + floor at every state, or a refusal only where LU is lost."""
    recs = evaluate(case, name)
    for r in recs:  # the ledger's record of each judged state (tests/ledger.py)
        if r.refused is None and np.isfinite(r.err):
            ledger.check(f"{name} vs the extended-precision / exact answer", r.err,
                         Tol(r.allowance, f"{FACTOR:g} x the dense routes' error "
                             f"{r.err_dense:.1e} + floor (ACC eps{' + cond_eq eps' if name in SOLVES else ''}),"
                             f" cond_eq = {r.cond_eq:.1e}"))
    assert all(r.ok for r in recs), failure_message(case, name, recs)


def _same(a, b) -> float:
    """Relative 2-norm difference of two outputs (arrays or lists of arrays)."""
    return vec_err(np.concatenate([np.ravel(x) for x in (a if isinstance(a, list) else [a])]),
                   np.concatenate([np.ravel(x) for x in (b if isinstance(b, list) else [b])]))


@pytest.mark.parametrize("name", RECURSIONS)
@SETTINGS
@given(case=cases())
def test_batched_equals_single(name, case):
    """Each state of a batched call equals the call on that state alone.

    Both are approximations of the same quantity: their relative difference
    must stay within the criterion's allowance, FACTOR err_dense + floor, with
    err_dense the larger dense error (solve, inverse) of that state.
    """
    if not case.batch:
        case = dataclasses.replace(case, q=case.q[None], qd=case.qd[None], qdd=case.qdd[None])
    sts = states(case)
    tau = np.stack([s.tau for s in sts]).reshape(case.qdd.shape)
    try:
        with np.errstate(all="ignore"):
            out = call(case, name, tau=tau)
    except OpalgError:
        return  # refusals are judged by test_recursion_matches_dense_lu
    for s in sts:
        try:
            with np.errstate(all="ignore"):
                one = call(case, name, q=s.q, qd=s.qd, qdd=s.qdd, tau=s.tau)
        except OpalgError as e:
            raise AssertionError(f"{name}: the batched call succeeds but state {s.idx} alone is "
                                 f"refused ({_refusal_text(e)})\n  {case!r}") from e
        diff = _same(pick(out, s.idx), one)
        allow = FACTOR * max(s.y_solve, s.y_inv) + floor(name, s.cond_eq)
        assert diff <= allow or s.lost, (
            f"{name}: state {s.idx} of the batch differs from the single call by {diff:.2e} "
            f"(allowed {allow:.2e})\n  {case!r}")


@pytest.mark.skipif(not EXTENDED, reason="np.longdouble is not extended precision here")
def test_reference_is_extended_precision():
    """The reference route really runs in extended precision and agrees with opalg.

    The joint rotation of a revolute z axis carries cos q to ~eps_ld (a float64
    evaluation would be off by ~eps at some of the angles), and the reference ℳ,
    T, Υ, D, ℳ⁻¹(k, k), J agree with opalg's float64 recursions on a benign model.
    """
    I3, z = np.eye(3), np.zeros(3)
    arm = Model([-1, 0], [Joint("R", [0.0, 0.0, 1.0])] * 2, [(I3, z)] * 2, [(1.0, z, I3)] * 2)
    angles = np.linspace(0.1, 3.0, 30)
    off64 = 0.0
    for a in angles:
        E = DenseRoute(arm, np.array([0.0, a], dtype=LD)).ops.E_phi.dense()
        c = E[0, 6]
        # 4 ulps of long double: the entry is at most a few long-double roundings from cosl (cond 1;
        # measured: 0, it is cosl itself, at 400 angles under 3 kernels); a float64 cos is off by
        # up to 1e3 of them (caught below)
        assert c.dtype == LD and abs(c - np.cos(LD(a))) <= 4 * EPS_LD, (a, c)
        off64 = max(off64, float(abs(LD(np.cos(a)) - np.cos(LD(a)))))
    assert off64 > 4 * EPS_LD  # float64 cos would have been caught above (the check's power, not a tolerance)

    model = opalg.random_model(6, "tree", seed=3, joints="mixed")
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.normal(size=(3, model.ndof))
    ref = DenseRoute(model, q.astype(LD), qd.astype(LD))
    assert ref.mass.dtype == LD
    # within the criterion's floor (the dense routes' error is ~eps on this benign model)
    ce = equilibrated_cond(ref.mass, ref.Minv)
    assert sym_err(opalg.crba(model, q), ref.mass) <= floor("crba", ce)
    assert vec_err(opalg.rnea(model, q, qd, qdd), ref.tau(qdd)) <= floor("rnea", ce)
    assert blocks_err(opalg.upsilon(model, q), ref.upsilon(), spatial_err) <= floor("upsilon", ce)
    assert blocks_err(opalg.articulated(model, q).D, ref.pivots()) <= floor("articulated", ce)
    assert blocks_err(opalg.minv_diag(model, q), ref.minv_diag()) <= floor("minv_diag", ce)
    fr = (4, np.eye(3), np.array([0.1, 0.0, 0.2]))
    assert vec_err(opalg.frame_jacobian(model, q, fr), ref.jacobian(fr)) <= floor("frame_jacobian", ce)


def test_generator_covers_the_joint_kinds():
    """The shared generator reaches every report category (helical once it exists)."""
    seen = set()
    for seed in range(300):
        try:
            seen.add(draw_case(NumpySource(seed)).category)
        except Rejected:
            continue
    expected = set(CATEGORIES) - (set() if HELICAL else {"helical"})
    assert expected <= seen, f"categories never drawn: {expected - seen}"
