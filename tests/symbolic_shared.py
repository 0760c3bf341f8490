"""Symbolic systems that several test modules derive: built once per process.

A TreeSystem is a pure function of its arguments and caches its derivations (and generated
functions) on itself; the tests only read it, so one instance can serve every module that
asks for the same system.
"""

from __future__ import annotations

import functools

from opalg.symbolic import RootMotion, deployable_example, t


@functools.cache
def spinning_deploy():
    """The deployable on a root spinning at 0.2 rad/s about its first root axis."""
    return deployable_example("deploy", base=RootMotion(angles=(0.2 * t, 0, 0)))
