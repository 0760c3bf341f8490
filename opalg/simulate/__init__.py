r"""The one way to simulate: :func:`integrate` (the integrator seam) and :class:`Trajectory`.

:func:`integrate` steps one of scipy's solver classes by hand, locates :class:`Event` crossings
on each step's dense output, and returns a :class:`Solution` that keeps everything computed even
when the run fails; :class:`Trajectory` is the result type of every topic's ``simulate``.

Note that ``opalg.simulate.integrate`` is the function; the module of the same name is
``sys.modules["opalg.simulate.integrate"]``.

Examples
--------
>>> import numpy as np
>>> from opalg.simulate import integrate, Trajectory
>>> sol = integrate(lambda t, y: [y[1], -y[0]], [0.0, 1.0], (0.0, np.pi), t_eval=[np.pi / 2])
>>> traj = Trajectory.from_solution(sol, nq=1)
>>> traj.ok, np.round(traj.q[-1], 9), np.round(traj.v[-1], 9)
(True, array([1.]), array([0.]))
"""

from opalg.simulate.integrate import Event, Solution, integrate
from opalg.simulate.trajectory import Trajectory

__all__ = ["integrate", "Event", "Solution", "Trajectory"]
