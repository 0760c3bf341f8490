r"""The one result type of every topic's ``simulate``: q and v against t, how the run ended, extras."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from opalg.errors import StateError
from opalg.simulate.integrate import Solution

STATUSES = ("completed", "event", "failed")


@dataclass
class Trajectory:
    """A simulated motion: configurations ``q`` and generalized velocities ``v`` at times ``t``.

    ``status``, ``message``, ``t_stop`` and ``event`` say how the run ended (as in
    :class:`~opalg.simulate.integrate.Solution`).  ``extras`` holds what a topic adds (momentum,
    energy, drift, forces …); each is also an attribute: ``traj.energy is traj.extras["energy"]``.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0.0, 1.0, 5)
    >>> traj = Trajectory(t, np.sin(t)[:, None], np.cos(t)[:, None], "completed", "reached t = 1",
    ...                   1.0, extras={"energy": 0.5 * np.cos(t) ** 2})
    >>> traj.ok, traj.energy is traj.extras["energy"], traj.q.shape
    (True, True, (5, 1))
    >>> traj.momentum
    Traceback (most recent call last):
    ...
    AttributeError: Trajectory has no attribute or extra 'momentum'; its extras are ['energy']
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    status: str
    message: str
    t_stop: float
    extras: dict = field(default_factory=dict)
    event: str | None = None

    def __post_init__(self):
        self.t, self.q, self.v = np.asarray(self.t), np.asarray(self.q), np.asarray(self.v)
        T = self.t.shape[0] if self.t.ndim == 1 else None
        if T is None or self.q.ndim != 2 or self.v.ndim != 2 or len(self.q) != T or len(self.v) != T:
            raise StateError(f"Trajectory: t must be (T,), q (T, nq) and v (T, nv), got shapes "
                             f"{self.t.shape}, {self.q.shape}, {self.v.shape}")
        if self.status not in STATUSES:
            raise StateError(f"Trajectory: status must be one of {STATUSES}, got {self.status!r}")
        self.extras = dict(self.extras)
        hidden = sorted(k for k in self.extras if not isinstance(k, str) or hasattr(type(self), k)
                        or k in self.__dataclass_fields__ or k.startswith("__"))
        if hidden:
            raise StateError(f"Trajectory: extras {hidden} would be hidden by the attributes of the same name")

    def __getattr__(self, name):
        # Only called when normal lookup fails.  Read extras from __dict__: during copy or unpickling
        # the instance has no fields yet, and self.extras would call __getattr__ again.
        extras = self.__dict__.get("extras")
        if extras is not None and not name.startswith("__") and name in extras:
            return extras[name]
        raise AttributeError(f"Trajectory has no attribute or extra {name!r}; its extras are "
                             f"{sorted(extras) if extras is not None else []}")

    @property
    def ok(self) -> bool:
        """True if the run reached the end of its time span."""
        return self.status == "completed"

    @classmethod
    def from_solution(cls, sol: Solution, nq: int, nv: int | None = None, **extras) -> Trajectory:
        """The Trajectory of ``sol``: q the first ``nq`` columns of ``sol.y``, v the next ``nv``.

        ``nv`` defaults to the remaining columns.  ``extras`` are kept by name; if the run had
        events, ``t_events`` and ``y_events`` (dicts per event name) are added unless given.

        Examples
        --------
        >>> from opalg.simulate import integrate
        >>> sol = integrate(lambda t, y: [y[1], -y[0]], [1.0, 0.0], (0.0, 1.0), t_eval=[0.0, 0.5, 1.0])
        >>> traj = Trajectory.from_solution(sol, nq=1, period=2 * 3.14159)
        >>> traj.q.shape, traj.v.shape, traj.status, round(traj.period, 2)
        ((3, 1), (3, 1), 'completed', 6.28)
        """
        n = sol.y.shape[1]
        nv = n - nq if nv is None else nv
        ints = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (nq, nv))
        if not (ints and nq >= 0 and nv >= 0 and nq + nv <= n):
            raise StateError(f"Trajectory.from_solution: need ints nq, nv >= 0 with nq + nv <= {n} "
                             f"(the size of the state), got nq = {nq!r}, nv = {nv!r}")
        if sol.t_events:
            extras = {"t_events": sol.t_events, "y_events": sol.y_events, **extras}
        return cls(sol.t, sol.y[:, :nq], sol.y[:, nq:nq + nv], sol.status, sol.message,
                   sol.t_stop, extras, sol.event)

    def sample(self, t) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) at time ``t`` (a number or an array of them) by linear interpolation.

        ``t`` must lie within [t[0], t[-1]] (StateError otherwise).  The interpolation is linear
        in each coordinate: a unit quaternion in q comes back slightly shorter than 1.

        Examples
        --------
        >>> import numpy as np
        >>> traj = Trajectory([0.0, 1.0], [[0.0], [2.0]], [[1.0], [3.0]], "completed", "", 1.0)
        >>> traj.sample(0.25)
        (array([0.5]), array([1.5]))
        >>> traj.sample(1.5)
        Traceback (most recent call last):
        ...
        opalg.errors.StateError: Trajectory.sample: t = 1.5 is outside the trajectory's [0, 1]
        """
        s = np.asarray(t, dtype=float)
        if not len(self.t):
            raise StateError("Trajectory.sample: the trajectory has no samples")
        lo, hi = float(self.t[0]), float(self.t[-1])
        if not np.all((s >= lo) & (s <= hi)):              # NaN fails too
            raise StateError(f"Trajectory.sample: t = {t} is outside the trajectory's [{lo:g}, {hi:g}]")
        if len(self.t) == 1:
            return (np.broadcast_to(self.q[0], s.shape + self.q.shape[1:]).copy(),
                    np.broadcast_to(self.v[0], s.shape + self.v.shape[1:]).copy())
        i = np.clip(np.searchsorted(self.t, s, side="right") - 1, 0, len(self.t) - 2)
        dt = self.t[i + 1] - self.t[i]
        w = np.where(dt > 0, (s - self.t[i]) / np.where(dt > 0, dt, 1.0), 0.0)[..., None]
        return ((1 - w) * self.q[i] + w * self.q[i + 1], (1 - w) * self.v[i] + w * self.v[i + 1])

    def plot(self, which: str = "q", ax=None, labels=None):
        """Each column of q (``which="q"``), v, or an extra against t, on ``ax`` (a new one if None).

        A run that did not complete gets a dashed vertical line at ``t_stop``; the title states the
        status and the message (shortened).  Returns the matplotlib Axes.

        Examples
        --------
        >>> import numpy as np
        >>> from matplotlib.figure import Figure
        >>> t = np.linspace(0.0, 0.4, 5)
        >>> traj = Trajectory(t, np.c_[t, t ** 2], np.c_[1 + 0 * t, 2 * t], "failed",
        ...                   "failed at t = 0.4: rhs raised RuntimeError: fault", 0.4)
        >>> ax = traj.plot("v", ax=Figure().subplots(), labels=["ẋ", "ẏ"])
        >>> len(ax.lines), ax.get_title()
        (3, 'failed: failed at t = 0.4: rhs raised RuntimeError: fault')
        """
        if which in ("q", "v"):
            data = self.q if which == "q" else self.v
        elif which in self.extras:
            data = np.asarray(self.extras[which])
            if data.ndim not in (1, 2) or len(data) != len(self.t) or data.dtype.kind not in "biuf":
                raise StateError(f"Trajectory.plot: extra {which!r} is not a real array of {len(self.t)} "
                                 f"rows (one per time), got shape {data.shape}")
            data = data.reshape(len(self.t), -1)
        else:
            raise StateError(f"Trajectory.plot: which must be 'q', 'v' or an extra in {sorted(self.extras)}, "
                             f"got {which!r}")
        ncol = data.shape[1]
        if labels is None:
            labels = [which] if ncol == 1 and which not in ("q", "v") else [f"{which}[{i}]" for i in range(ncol)]
        elif len(labels) != ncol:
            raise StateError(f"Trajectory.plot: {len(labels)} labels for {ncol} columns of {which!r}")
        if ax is None:
            import matplotlib.pyplot as plt
            _, ax = plt.subplots()
        for j in range(ncol):
            ax.plot(self.t, data[:, j], label=str(labels[j]))
        if self.status != "completed":
            ax.axvline(self.t_stop, color="k", linestyle="--", linewidth=1, label=f"t_stop ({self.status})")
        msg = self.message if len(self.message) <= 70 else self.message[:69] + "…"
        ax.set_title(f"{self.status}: {msg}", fontsize="medium")
        ax.set_xlabel("t")
        if ncol <= 10:
            ax.legend(fontsize="small")
        return ax

    def animate(self, draw, *, fig, frames=None, title: str | None = None):
        """A matplotlib animation of the run: ``draw(q, t)`` poses the figure's artists at each frame.

        Parameters
        ----------
        draw : callable
            ``draw(q, t) -> iterable of Artists``: updates what the figure shows for the
            configuration ``q`` (nq,) at time ``t``.  Called once per frame, in time order.
        fig : matplotlib Figure
            The figure ``draw`` updates (its axes and artists are set up by the caller).
        frames : None, int or sequence of int
            Sample indices to show: None gives every sample, or 40 evenly spaced ones including the
            first and the last if there are more (the notebooks' cap); an int n gives n evenly spaced.
        title : str, optional
            A format string with field ``t`` (``"t = {t:.2f} s"``) set as the first axes' title
            text at each frame (its font is kept).  On the last frame of a run that did not complete,
            the status and ``t_stop`` are added.

        Returns
        -------
        matplotlib.animation.FuncAnimation
            Pass it to :func:`opalg.course.display.animate` to show it in a notebook.

        Examples
        --------
        >>> import numpy as np
        >>> from matplotlib.figure import Figure
        >>> t = np.linspace(0.0, 1.0, 11)
        >>> traj = Trajectory(t, np.c_[t], np.c_[0 * t + 1], "failed", "failed at t = 1: fault", 1.0)
        >>> fig = Figure()
        >>> ax = fig.subplots()
        >>> (dot,) = ax.plot([], [], "o")
        >>> anim = traj.animate(lambda q, t: dot.set_data([q[0]], [0.0]) or [dot], fig=fig, frames=3,
        ...                     title="t = {t:.1f} s")
        >>> list(anim.new_frame_seq())
        [0, 5, 10]
        >>> _ = anim.to_jshtml()
        >>> ax.title.get_text()
        't = 1.0 s (failed at t_stop = 1)'
        """
        from matplotlib.animation import FuncAnimation

        if not callable(draw):
            raise StateError(f"Trajectory.animate: draw must be callable draw(q, t), got {type(draw).__name__}")
        n = len(self.t)
        if n == 0:
            raise StateError("Trajectory.animate: the trajectory has no samples")
        if frames is None or isinstance(frames, (int, np.integer)) and not isinstance(frames, bool):
            count = min(n, 40) if frames is None else int(frames)
            if count < 1:
                raise StateError(f"Trajectory.animate: frames must be >= 1, got {frames!r}")
            idx = np.unique(np.round(np.linspace(0, n - 1, min(count, n))).astype(int))
        else:
            idx = np.asarray(list(frames))
            if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= n:
                raise StateError(f"Trajectory.animate: frames must be sample indices in [0, {n}), got {frames!r}")
        idx = [int(i) for i in idx]
        ax = fig.axes[0] if title is not None and fig.axes else None
        if title is not None and ax is None:
            raise StateError("Trajectory.animate: a title needs a figure with axes")

        def update(i):
            artists = list(draw(self.q[i], float(self.t[i])) or [])
            if ax is not None:
                text = title.format(t=float(self.t[i]))
                if i == idx[-1] and self.status != "completed":
                    text += f" ({self.status} at t_stop = {self.t_stop:g})"
                ax.title.set_text(text)
                artists.append(ax.title)
            return artists

        return FuncAnimation(fig, update, frames=idx, blit=False)

    def __repr__(self):
        ex = f", extras={sorted(self.extras)}" if self.extras else ""
        return (f"Trajectory(status={self.status!r}, message={self.message!r}, {len(self.t)} samples, "
                f"nq={self.q.shape[1]}, nv={self.v.shape[1]}{ex})")
