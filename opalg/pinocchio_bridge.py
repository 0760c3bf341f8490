r"""Bridge to Pinocchio (PyPI ``pin``), used as an independent oracle.

Pinocchio's conventions differ from opalg's, and every difference is converted
here, at the edge, never inside opalg:

* spatial vectors are **linear first** ``[v; ω]`` (opalg: ``[ω; v]``) — the
  similarity Π = [[0, I], [I, 0]] (SOA_REFERENCE A7);
* ``continuous`` joints have two configuration entries ``(cos θ, sin θ)`` and
  one velocity;
* the q order is Pinocchio's own (depth-first, siblings in its parser's
  order), so vectors are mapped by joint name;
* gravity is on by default, ``(0, 0, -9.81)``; here it is set from the model.

Pinocchio is an optional dependency (``pip install opalg[oracle]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Model
from .urdf import to_urdf


def _pin():
    try:
        import pinocchio
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError("the Pinocchio oracle needs the 'oracle' extra: pip install 'opalg[oracle]'") from e
    return pinocchio


@dataclass
class PinocchioTwin:
    """A Pinocchio model of the same mechanism, with the index maps between the two.

    ``v_idx[i]`` is the Pinocchio velocity index of opalg dof ``i``;
    ``q_idx[i]`` its configuration index and ``continuous[i]`` whether it is
    stored as (cos, sin).
    """

    model: object
    data: object
    v_idx: np.ndarray
    q_idx: np.ndarray
    continuous: np.ndarray

    def q(self, q) -> np.ndarray:
        """opalg q (N,) -> Pinocchio configuration (nq,)."""
        q = np.asarray(q, dtype=float)
        out = np.array(_pin().neutral(self.model), dtype=float)
        c = self.continuous
        out[self.q_idx[~c]] = q[~c]
        out[self.q_idx[c]] = np.cos(q[c])
        out[self.q_idx[c] + 1] = np.sin(q[c])
        return out

    def v(self, x) -> np.ndarray:
        """opalg joint-space vector (N,) -> Pinocchio tangent vector (nv,)."""
        out = np.zeros(self.model.nv)
        out[self.v_idx] = x
        return out

    def from_v(self, xp) -> np.ndarray:
        """Pinocchio tangent vector (nv,) -> opalg order (N,)."""
        return np.asarray(xp)[self.v_idx]

    def from_vv(self, Ap) -> np.ndarray:
        """Pinocchio (nv, nv) matrix -> opalg order."""
        return np.asarray(Ap)[np.ix_(self.v_idx, self.v_idx)]


def motion_to_opalg(x) -> np.ndarray:
    """Reorder linear-first 6-rows ``[v; ω]`` (Pinocchio) to angular-first ``[ω; v]``."""
    x = np.asarray(x)
    return np.concatenate([x[3:6], x[0:3]], axis=0)


def twin_from_urdf(model: Model, urdf: str, gravity: bool = True) -> PinocchioTwin:
    """Pinocchio model parsed from ``urdf`` (the same mechanism as ``model``)."""
    pm = _pin().buildModelFromXML(urdf)
    pm.gravity.linear = np.asarray(model.gravity, dtype=float) if gravity else np.zeros(3)
    return twin_from_pin(model, pm)


def twin_from_pin(model: Model, pm) -> PinocchioTwin:
    """Pair an opalg model with a Pinocchio model of the same mechanism, by joint name.

    Multi-axis opalg joint ``j`` is matched with Pinocchio joints ``j_0, j_1, ...``
    (the names :func:`opalg.urdf.to_urdf` writes).  Gravity is left as ``pm`` has it.
    """
    names = []
    for k, j in enumerate(model.joints):
        jn = j.name or f"joint{k}"
        names += [jn] if j.ndof == 1 else [f"{jn}_{i}" for i in range(j.ndof)]
    v_idx, q_idx, cont = [], [], []
    for nm in names:
        if not pm.existJointName(nm):
            raise ValueError(f"Pinocchio model has no joint named {nm!r}")
        jm = pm.joints[pm.getJointId(nm)]
        v_idx.append(jm.idx_v)
        q_idx.append(jm.idx_q)
        cont.append(jm.nq == 2)
    return PinocchioTwin(pm, pm.createData(), np.array(v_idx), np.array(q_idx), np.array(cont))


def to_pinocchio(model: Model, gravity: bool = True, continuous: bool = False) -> PinocchioTwin:
    """Export ``model`` to URDF and let Pinocchio parse it.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.pinocchio_bridge import to_pinocchio
    >>> import pinocchio as pin
    >>> m = opalg.random_model(5, "tree", seed=1, joints="single")
    >>> tw = to_pinocchio(m)
    >>> q = np.linspace(-1, 1, m.ndof)
    >>> Mp = pin.crba(tw.model, tw.data, tw.q(q))
    >>> Mp = np.triu(Mp) + np.triu(Mp, 1).T      # Pinocchio fills the upper triangle
    >>> bool(np.allclose(tw.from_vv(Mp), opalg.crba(m, q)))
    True
    """
    return twin_from_urdf(model, to_urdf(model, continuous=continuous), gravity)
