r"""The one way to simulate: :func:`integrate` (the integrator seam) and :class:`Trajectory`."""
