"""The exceptions raised by opalg: one hierarchy, in one module.

Every error is a ``ValueError`` subclass (through :class:`OpalgError`) so that
callers who only care about "bad input" can catch one type; the message always
names the body, joint, argument or time at fault.

==============================  ==================================================
exception                       raised when
==============================  ==================================================
``OpalgError``                  base class of everything below
``ModelError``                  the model description is invalid (topology, joint
                                axis, inertia, placement, names)
``URDFError``                   a URDF file or string cannot be read as a model
``StateError``                  a state or input array (q, qd, qdd, tau, f_ext,
                                frames) has the wrong shape, type or value
``SingularConfigurationError``  the model is valid but the configuration q is
                                singular for it (e.g. the gimbal lock of a 3-axis
                                joint, or of a z-x-z hinge of ``opalg.symbolic``):
                                the message names body, joint and q (or time)
``InfeasibleDirections``        chosen control-force directions cannot realize the
                                kinematical constraints (``opalg.algorithms.constrained``)
==============================  ==================================================

The old names ``opalg.symbolic.SingularConfiguration`` (= ``SingularConfigurationError``)
and ``opalg.algorithms.constrained.InfeasibleDirections`` stay importable from their modules.
"""


class OpalgError(ValueError):
    """Base class of every exception opalg raises on bad input."""


class ModelError(OpalgError):
    """The model description is invalid (topology, joint axis, inertia, placement)."""


class URDFError(ModelError):
    """A URDF file or string cannot be read as an opalg model (names the element)."""


class StateError(OpalgError):
    """A state or input array (q, qd, qdd, tau, frames) has the wrong shape or value."""


class SingularConfigurationError(StateError):
    """The configuration is singular for a valid model (e.g. a multi-axis joint in gimbal lock).

    Attributes
    ----------
    body : int
        Label of the body whose joint is singular.
    joint : str
        Name of that joint.
    q : numpy.ndarray
        The joint's coordinates at the singular state (one batch entry).
    """

    def __init__(self, message: str, body: int | None = None, joint: str | None = None, q=None):
        super().__init__(message)
        self.body, self.joint, self.q = body, joint, q


class InfeasibleDirections(OpalgError):
    """The chosen control-force directions cannot realize the kinematical constraints
    (Ider 1990): A is rank deficient, repeats directions of the geometrical constraints,
    or the augmented system is singular."""
