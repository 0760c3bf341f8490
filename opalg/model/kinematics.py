r"""Per-body kinematic quantities in body coordinates (Featherstone frames).

For body k with parent p = ℘(k) this module computes, for a state (q, q̇) with
any leading batch axes,

* ``Xup[k] = ^k X_p = X_J(q_k) X_T(k)`` and hence ``phi(p, k) = Xup[k]^*``;
* ``S[k]`` (6 x n_k), the joint motion subspace in body-k coordinates, so that
  ``H(k) = S[k]^*``;
* ``V[k] = phi(p,k)^* V(p) + H(k)^* q̇_k`` (docs/REFERENCE.md §5);
* ``a[k] = crm(V[k]) H^*(k) q̇_k + c_J(k)``, the Coriolis acceleration of the
  body-frame derivative convention, plus the base acceleration ``-g`` folded
  into the roots (pitfall 6);
* ``b[k] = crf(V[k]) M(k) V[k]``, the gyroscopic force.

X_J, S and the velocity-product term c_J of every joint kind (revolute,
prismatic, helical, and sequences of them) come from :mod:`opalg.model.joints`; for a
multi-axis joint ``a[k]`` also contains ``c_J = Σ_{i<j} crm(S_i q̇_i) S_j q̇_j``.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field

import numpy as np

from opalg import _backend as bk
from opalg import opcount
from opalg.errors import StateError
from opalg.model import _validate
from opalg.model.joints import joint_transform
from opalg.model.multibody import Model
from opalg.spatial.quaternion import UNIT_TOL
from opalg.spatial.vectors import cross_force, cross_motion


def check_state(model: Model, x, name: str, last: int | None = None,
                config: bool | None = None) -> np.ndarray:
    """Validate a joint-space array of shape (..., N) and return it as an array.

    A configuration (``config=True``; by default the argument named ``"q"``) has
    shape (..., nq) instead, and the quaternion of every free joint in it must be
    of unit norm to :data:`opalg.spatial.quaternion.UNIT_TOL` (docs/REFERENCE.md K8).

    Entries must be numbers or sympy expressions (a string is refused, never
    evaluated) and finite (nan, inf and sympy's nan, zoo, ±oo are refused, in
    object arrays too).  float16/float32 states are cast to float64 (complex64 to
    complex128) so that every result has double accuracy.

    Raises
    ------
    StateError
        Naming the argument, its shape and the expected trailing size, or the
        index of the first non-numeric or non-finite entry.
    """
    if not isinstance(model, Model) and not hasattr(model, "nq"):   # opalg.rnea("panda", ...)
        _validate.model(model, "")
    config = (name == "q" and last is None) if config is None else config
    size = (model.nq if config else model.ndof) if last is None else last
    a = _read(x, name)
    if a.ndim == 0 or a.shape[-1] != size:
        what = f"nq={model.nq} configuration coordinates" if config and model.nq != model.ndof \
            else f"N={model.ndof} dof"
        raise StateError(f"{name} has shape {a.shape}, expected (..., {size}) for a model with {what}")
    a, bad = _double(a)
    if bad is not None:
        raise StateError(f"{name} has a non-finite entry at index {bad[0]} ({bad[1]})")
    if config:
        _check_quaternions(model, a, name)
    return a


def _check_quaternions(model: Model, q: np.ndarray, name: str) -> None:
    """StateError naming the body if a free joint's quaternion is not unit (K8).

    The real part is checked: a complex-step perturbation of a unit quaternion
    changes its norm only at second order in the step."""
    if q.dtype == object:   # sympy: nothing numeric to check
        return
    for k in model.free_bodies:
        sl = model.q_slice[k]
        quat = q[..., sl.start + 3:sl.stop].real
        err = np.abs(np.sqrt(np.sum(quat * quat, -1)) - 1)
        if np.any(err > UNIT_TOL):
            idx = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
            raise StateError(
                f"{name}: the quaternion (x, y, z, w) of free joint {model.joint_names[k]!r} (body {k}, "
                f"{model.names[k]}), {name}[{sl.start + 3}:{sl.stop}] = {quat[idx].tolist()}, has norm "
                f"{float(np.sqrt(np.sum(quat[idx] ** 2))):.9g}; "
                f"a free joint needs a unit quaternion (to {UNIT_TOL:g}): advance q with "
                "opalg.integrate, not q + v*dt")


def _read(x, name: str) -> np.ndarray:
    """``x`` as a numeric or sympy array (strings refused unevaluated), or StateError."""
    try:
        a = bk.asarray(x, name, StateError)
    except (TypeError, ValueError) as e:
        if isinstance(e, StateError):
            raise
        raise StateError(f"{name}: cannot be read as an array ({e})") from None
    if a.dtype.kind not in "fcO":
        raise StateError(f"{name} must be numeric (or sympy), got dtype {a.dtype}")
    return a


def _double(a: np.ndarray):
    """float16/32 (complex64) cast to double, and the first non-finite entry (or None)."""
    if a.dtype.kind in "fc" and a.dtype.itemsize < (8 if a.dtype.kind == "f" else 16):
        a = a.astype(np.float64 if a.dtype.kind == "f" else np.complex128)
    return a, bk.first_nonfinite(a)


#: States per pass of a batched recursion.  Arrays of (1024, 6, 6) doubles (288 KiB)
#: stay in cache and in malloc's reuse pool; one pass over 10,000 states is ~1.5x slower
#: per state, mostly from page faults on fresh multi-megabyte temporaries
#: (measured with benchmarks/bench_pinocchio.py).
CHUNK = 1024


def check_forces(model: Model, f, name: str) -> np.ndarray:
    """Validate per-body spatial forces of shape (..., n, 6) (e.g. ``f_ext``; C9).

    Raises
    ------
    StateError
        Naming the argument, its shape and the expected trailing shape, or the
        first non-finite entry (body and component).
    """
    a = _read(f, name)
    if a.ndim < 2 or a.shape[-2:] != (model.n, 6):
        raise StateError(f"{name} has shape {a.shape}, expected (..., {model.n}, 6): one spatial "
                         f"force [moment; force] per body of the model")
    a, bad = _double(a)
    if bad is not None:
        raise StateError(f"{name} has a non-finite entry at index {bad[0]} (body {bad[0][-2]}, "
                         f"component {bad[0][-1]})")
    return a


def chunked(n_states: int, forces: tuple[str, ...] = ()):
    """Run a batched numeric recursion over chunks of at most :data:`CHUNK` states.

    The first ``n_states`` parameters after the model are joint-space arrays
    (..., N); the parameters named in ``forces`` are optional per-body force
    arrays (..., n, 6) or None.  They are validated here, whole (so error messages
    give indices in the caller's array) — the decorated function receives checked
    arrays and need not validate again — then broadcast, flattened and fed in
    chunks; outputs (arrays, or lists of arrays) are reassembled with the
    caller's batch shape.  Symbolic and small inputs go straight through.

    Floating-point overflow inside the recursion raises no RuntimeWarning; instead
    a numeric result that is not finite (for the finite inputs checked here) is a
    :class:`~opalg.errors.StateError` naming the function and the largest inputs.
    """
    def deco(fn):
        sig = inspect.signature(fn)
        names = list(sig.parameters)[1:1 + n_states]
        others = list(sig.parameters)[1 + n_states:]

        def run(model, arrs, rest, frc):
            batch = broadcast_batch(model, **dict(zip(names, arrs)),
                                    **{nm: f[..., 0] for nm, f in frc.items()})
            size = int(np.prod(batch, dtype=int))
            # (one pass while operations are counted: opalg.opcount's counts are per state)
            if size <= CHUNK or opcount._ACTIVE or any(a.dtype.kind != "f" for a in [*arrs, *frc.values()]):
                return fn(model, *arrs, **rest)
            flat = [np.broadcast_to(a, batch + a.shape[-1:]).reshape(size, a.shape[-1]) for a in arrs]
            fflat = {nm: np.broadcast_to(f, batch + f.shape[-2:]).reshape((size,) + f.shape[-2:])
                     for nm, f in frc.items()}
            parts = [fn(model, *[f[i:i + CHUNK] for f in flat],
                        **{**rest, **{nm: f[i:i + CHUNK] for nm, f in fflat.items()}})
                     for i in range(0, size, CHUNK)]

            def join(pieces):
                out = np.concatenate(pieces, 0)
                return out.reshape(batch + out.shape[1:])

            if isinstance(parts[0], list):
                return [join([p[j] for p in parts]) for j in range(len(parts[0]))]
            return join(parts)

        bind = _binder(sig)

        @functools.wraps(fn)
        def wrapper(model, *args, **kw):
            arguments = bind(model, args, kw)
            arrs = [check_state(model, arguments[nm], nm) for nm in names]
            rest = {nm: arguments[nm] for nm in others}
            frc = {nm: check_forces(model, rest[nm], nm) for nm in forces if rest[nm] is not None}
            rest.update(frc)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                out = run(model, arrs, rest, frc)
            _check_result(fn.__name__, out, {**dict(zip(names, arrs)), **frc})
            return out

        return wrapper

    return deco


def _binder(sig: inspect.Signature):
    """``bind(model, args, kw)`` -> every argument by name, defaults applied: ``sig.bind``.

    A single-state call (an ODE right-hand side) spends a fifth of its time in
    ``Signature.bind``; plain positional-or-keyword parameters are bound here by a dict
    merge instead, and anything else (a missing, repeated or unknown argument: the
    TypeError) goes to ``sig.bind`` itself.
    """
    params = list(sig.parameters.values())
    pnames = [p.name for p in params][1:]
    defaults = {p.name: p.default for p in params[1:] if p.default is not p.empty}
    known = set(pnames)
    plain = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)

    def bind(model, args, kw):
        if plain and len(args) <= len(pnames):
            arguments = dict(zip(pnames, args))
            if not (kw.keys() & arguments.keys()) and kw.keys() <= known:
                arguments = {**defaults, **arguments, **kw}
                if len(arguments) == len(pnames):
                    return arguments
        bound = sig.bind(model, *args, **kw)   # raises the TypeError naming the problem
        bound.apply_defaults()
        return bound.arguments

    return bind


def _check_result(fname: str, out, inputs: dict) -> None:
    """StateError if a numeric result of ``fname`` has a non-finite entry (an overflow)."""
    for i, part in enumerate(out if isinstance(out, list) else [out]):
        if not (isinstance(part, np.ndarray) and part.dtype.kind in "fc") or np.isfinite(part).all():
            continue
        idx, val = bk.first_nonfinite(part)
        what = f"output {i}" if isinstance(out, list) else "the result"
        sizes = ", ".join(f"max |{nm}| = {float(np.abs(a).max(initial=0)):.3g}"
                          for nm, a in inputs.items() if a.dtype.kind in "fc")
        raise StateError(f"{fname}: {what} overflowed double precision ({val} at index {idx}) "
                         f"although the inputs are finite ({sizes})")


def broadcast_batch(model: Model, **arrays) -> tuple:
    """Check that the batch axes of the named arrays broadcast; return the batch shape."""
    shapes = {k: v.shape[:-1] for k, v in arrays.items() if v is not None}
    first = next(iter(shapes.values()), None)
    if first is not None and all(s == first for s in shapes.values()):
        return first   # what np.broadcast_shapes gives, without its ~20 µs (single-state calls)
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        desc = ", ".join(f"{k}: {s}" for k, s in shapes.items())
        raise StateError(f"batch shapes do not broadcast ({desc})") from None


def up_transform(model: Model, k: int, qk) -> tuple[np.ndarray, np.ndarray]:
    """``^kX_℘ = X_J(q_k) X_T(k)`` (..., 6, 6) and ``S`` of body k.

    A 1-dof joint uses its :class:`opalg.model.joints.TreeTransform` (a constant
    combination of a few scalar functions of q, X_T included: the batch code's hot
    path), built once per body and kept on the model; ``S`` is then the constant
    axis (6, 1).  Multi-axis joints compose :func:`opalg.model.joints.joint_transform`
    with X_T.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, seed=0)
    >>> X, S = opalg.model.kinematics.up_transform(m, 1, np.zeros((4, m.joints[1].ndof)))
    >>> X.shape, bool(np.allclose(X[0], m.X_tree[1]))
    ((4, 6, 6), True)
    """
    joint = model.joints[k]
    if joint.ndof != 1:
        XJ, S = joint_transform(joint, qk)
        return bk.matmul(XJ, model.X_tree[k]), S
    fast = model._tree_transform(k)
    return fast(qk[..., 0]), fast.S


@dataclass
class Kinematics:
    """Per-body arrays (lists indexed by body label) for one batched state."""

    Xup: list
    S: list
    V: list | None = None
    a: list | None = None
    b: list | None = None
    batch: tuple = field(default=())


def body_kinematics(model: Model, q, qd=None, gravity: bool = True, validate: bool = True) -> Kinematics:
    """Xup, S and (if ``qd`` is given) V, a, b for every body; see the module docstring.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, seed=0)
    >>> kin = opalg.model.kinematics.body_kinematics(m, np.zeros(m.ndof), np.ones(m.ndof))
    >>> kin.V[0].shape
    (6,)
    """
    if not isinstance(gravity, (bool, np.bool_)):  # every recursion passes its flag through here
        raise StateError(f"gravity must be True or False, got {gravity!r}")
    if not validate:  # internal callers pass arrays checked at the public entry point
        return _body_kinematics(model, q, qd, gravity)
    q = check_state(model, q, "q")
    qd = None if qd is None else check_state(model, qd, "qd")
    return overflow_guard("body_kinematics", lambda: _body_kinematics(model, q, qd, gravity),
                          {"q": q, "qd": qd},
                          lambda kin: [*kin.Xup, *(kin.V or []), *(kin.a or []), *(kin.b or [])])


def overflow_guard(fname: str, compute, inputs: dict, parts=lambda out: out):
    """Run ``compute()`` without RuntimeWarnings; a non-finite numeric result (an overflow
    from finite inputs) is a StateError naming ``fname`` — for public entry points that
    do not go through :func:`chunked`.  ``parts(out)`` lists the arrays to check."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = compute()
    _check_result(fname, parts(out), {k: v for k, v in inputs.items() if v is not None})
    return out


def _body_kinematics(model: Model, q, qd, gravity: bool) -> Kinematics:
    batch = broadcast_batch(model, q=q, qd=qd)
    n = model.n
    Xup, S = [None] * n, [None] * n
    for k in range(n):
        Xup[k], S[k] = up_transform(model, k, q[..., model.q_slice[k]])
    kin = Kinematics(Xup, S, batch=batch)
    if qd is None:
        return kin
    dtype_like = (q, qd, model.I_spatial[0], model.gravity)
    V, a, b = [None] * n, [None] * n, [None] * n
    a0 = bk.zeros(batch + (6,), *dtype_like)
    if gravity:
        a0 = a0 + np.concatenate([bk.zeros((3,), model.gravity), -model.gravity])
    for k in model.order:
        p = model.parents[k]
        vJ, cJ = model.joints[k].velocity(S[k], qd[..., model.dof_slice[k]])
        if p == -1:
            V[k] = vJ if vJ.shape == batch + (6,) else np.broadcast_to(vJ, batch + (6,))
            a[k] = cross_motion(V[k], vJ) + cJ + bk.mv(Xup[k], a0)
        else:
            V[k] = bk.mv(Xup[k], V[p]) + vJ
            a[k] = cross_motion(V[k], vJ) + cJ
        b[k] = cross_force(V[k], bk.mv(model.I_spatial[k], V[k]))
    kin.V, kin.a, kin.b = V, a, b
    return kin


def _split_transform(X):
    """(E, r) of a motion transform [[E, 0], [-E r~, E]]."""
    E = X[..., :3, :3]
    rx = -(bk.mT(E) @ X[..., 3:, :3])
    return E, np.stack([rx[..., 2, 1], rx[..., 0, 2], rx[..., 1, 0]], -1)


def body_poses(model: Model, q) -> tuple[list, list]:
    """World orientation ``R_0k`` and origin ``p_0k`` of every body frame.

    ``R_0k`` maps body-k coordinates to world coordinates.  Computed from the
    composed transforms ``^kX_0``; used as the independent (pose) route in tests.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> R, p = opalg.model.kinematics.body_poses(arm, np.zeros(2))
    >>> p[1] + 0.0   # (adding 0.0 turns -0. into 0.)
    array([1., 0., 0.])
    """
    kin = body_kinematics(model, q)
    X0 = [None] * model.n
    for k in model.order:
        p = model.parents[k]
        X0[k] = kin.Xup[k] if p == -1 else kin.Xup[k] @ X0[p]
    Rs, ps = [], []
    for k in range(model.n):
        E, r = _split_transform(X0[k])
        Rs.append(bk.mT(E))
        ps.append(r)
    return Rs, ps
