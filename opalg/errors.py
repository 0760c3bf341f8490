"""Exceptions raised by opalg.

Every error is a ``ValueError`` subclass so that callers who only care about
"bad input" can catch one type; the message always names the body, joint or
argument at fault.
"""


class ModelError(ValueError):
    """The model description is invalid (topology, joint axis, inertia, placement)."""


class StateError(ValueError):
    """A state or input array (q, qd, qdd, tau, frames) has the wrong shape or value."""
