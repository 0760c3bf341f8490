"""Notebook kernels forked from a warm process, for the test suite's notebook executions.

A fresh Jupyter kernel starts a Python interpreter, imports ipykernel (with IPython, zmq,
tornado, debugpy) and then the notebook's first cell imports numpy, matplotlib and opalg: about
2.5 s of CPU before the first line of mathematics, paid by every notebook of ``make test``.
Here one *zygote* process per pytest worker makes those imports once and forks a kernel for
each notebook, which then starts in a few hundredths of a second.

What a notebook sees is what a fresh kernel gives it: its own process and session, the working
directory, environment, standard streams and connection file jupyter_client chose, and nothing
from other notebooks (each kernel is a fork of the untouched zygote).  The zygote preloads only
modules that every lecture notebook loads itself in its first cell (``tools/kernel_preload.py``),
and a notebook that does not load all of them gets a fresh kernel, so a notebook that forgets
an import still fails as in a fresh kernel: preloading a module that a notebook does not import
would let that notebook reach it as an attribute of its package.

``make reproduce`` (``tools/execute_notebooks.py``) still starts fresh kernels: it writes the
committed outputs, and the suite's byte check compares a warm execution with them.

How it fits jupyter_client: :func:`kernel_manager` returns a ``KernelManager`` whose kernel
command is this file run as a tiny client (``python -I -S warm_kernel.py connect SOCKET -f
CONNECTION_FILE``, standard library only).  The client hands its standard streams, working
directory, environment and arguments to the zygote over a Unix socket, forwards the signals
jupyter_client sends it (interrupt, terminate) to the kernel and exits with the kernel's exit
status, so jupyter_client's usual process management applies unchanged.  If the client is
killed, the zygote kills its kernel; if the pytest worker exits, the zygote's stdin closes and
it kills every kernel it forked, then exits.
"""
from __future__ import annotations

import atexit
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile

#: The one native kernel this project's notebooks use; its launcher module is replaced.
KERNEL_NAME = "python3"
_HEADER = 8   # bytes of the request's length prefix
_MAX_FDS = 3  # stdin, stdout, stderr


# --------------------------------------------------------------------------------------------
# The pytest side
# --------------------------------------------------------------------------------------------

class Zygote:
    """A warm process that forks notebook kernels (one per pytest process, started lazily).

    Parameters
    ----------
    preload : list of str
        Modules to import before forking (``tools/kernel_preload.py``).  A notebook that does
        not load all of them itself gets a fresh kernel (:meth:`kernel_manager_class`).
    """

    def __init__(self, preload: list[str]):
        self.preload = list(preload)
        self._dir = tempfile.mkdtemp(prefix="opalg-zygote-")   # mode 0700: only we connect
        self.socket = os.path.join(self._dir, "s")
        env = dict(os.environ)
        # What ipykernel sets before matplotlib is imported in a kernel, and jupyter_client
        # passes to a kernel: set here because the preloaded modules read them on import.
        env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        env["PYDEVD_USE_FRAME_EVAL"] = "NO"
        self.process = subprocess.Popen(
            [sys.executable, __file__, "serve", self.socket, *preload],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=self._dir)
        ready = self.process.stdout.readline()
        if ready.strip() != b"ready":
            self.close()
            raise RuntimeError(f"the warm kernel server did not start (it said {ready!r}); "
                               f"preloading {preload}")
        atexit.register(self.close)

    def close(self) -> None:
        """Stop the zygote (it kills the kernels it forked) and remove its socket."""
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        try:
            os.unlink(self.socket)
        except FileNotFoundError:
            pass
        try:
            os.rmdir(self._dir)
        except OSError:
            pass

    def kernel_manager_class(self, loaded: list[str] | None):
        """An ``AsyncKernelManager`` subclass (nbclient's ``kernel_manager_class``) whose
        ``python3`` kernels this zygote forks, nbclient starting and shutting them down as
        usual; None (a fresh kernel) unless the notebook loads every preloaded module itself.

        Parameters
        ----------
        loaded : list of str or None
            What the notebook's first cell loads (``kernel_preload.loaded_modules``).
        """
        if loaded is None or not set(self.preload) <= set(loaded):
            return None
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import AsyncKernelManager
        from traitlets import default

        client = [sys.executable, "-I", "-S", __file__, "connect", self.socket]

        class Specs(KernelSpecManager):
            def get_kernel_spec(self, kernel_name):
                spec = super().get_kernel_spec(kernel_name)
                if kernel_name == KERNEL_NAME:
                    # [python, -m, ipykernel_launcher, -f, {connection_file}]: keep the arguments.
                    i = spec.argv.index("ipykernel_launcher")
                    spec.argv = client + spec.argv[i + 1:]
                return spec

        class WarmKernelManager(AsyncKernelManager):
            @default("kernel_spec_manager")
            def _kernel_spec_manager_default(self):
                return Specs(data_dir=self.data_dir)

        return WarmKernelManager


# --------------------------------------------------------------------------------------------
# The client: what jupyter_client launches (standard library only, started with -I -S)
# --------------------------------------------------------------------------------------------

def _connect(path: str, argv: list[str]) -> int:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    s.sendall(len(request).to_bytes(_HEADER, "big"))
    socket.send_fds(s, [request], [0, 1, 2])
    reply = s.makefile("rb")
    pid = int(reply.readline())

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, forward)
    status = reply.readline()         # the kernel's exit code; empty if the zygote died
    return int(status) if status.strip() else 1


# --------------------------------------------------------------------------------------------
# The zygote
# --------------------------------------------------------------------------------------------

def _recv_request(conn: socket.socket) -> tuple[dict, list[int]]:
    size = int.from_bytes(_recv_exactly(conn, _HEADER), "big")
    data, fds, _, _ = socket.recv_fds(conn, size, _MAX_FDS)
    while len(data) < size:
        data += _recv_exactly(conn, size - len(data))
    return json.loads(data), fds


def _recv_exactly(conn: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the client closed the connection mid-request")
        out += chunk
    return out


def _kernel(request: dict, fds: list[int]) -> None:
    """In the forked child: become the kernel jupyter_client asked for.  Never returns."""
    import importlib.util

    code = 1
    try:
        os.setsid()                    # its own session, as jupyter_client starts kernels
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        from ipykernel import kernelapp

        # As `python -m ipykernel_launcher` started in the notebook's folder would have them.
        sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *request["argv"]]
        # Exit if the zygote exits (the kernel's parent is the zygote, not the pytest worker).
        kernelapp.launch_new_instance(argv=[*request["argv"],
                                            f"--IPKernelApp.parent_handle={os.getppid()}"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _serve(path: str, preload: list[str]) -> None:
    import gc
    import importlib
    import selectors

    # Not tools/ (this script's folder): as ipykernel_launcher drops its first sys.path entry.
    del sys.path[0]
    for name in preload:
        importlib.import_module(name)
    import ipykernel.kernelapp  # noqa: F401  (the kernel itself: most of a kernel's start-up)
    # What the imports made lives as long as every kernel forked from here: move it out of the
    # cyclic collector's reach, so that no kernel's full collections scan it again (nor touch,
    # and so copy, the pages it shares with the zygote).
    gc.collect()
    gc.freeze()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "parent")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    kernels: dict[int, socket.socket] = {}   # pid -> its client's connection
    sys.stdout.write("ready\n")
    sys.stdout.flush()

    def reap() -> None:
        while kernels:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = kernels.pop(pid, None)
            if conn is not None:
                code = os.waitstatus_to_exitcode(status)
                try:
                    conn.sendall(f"{code if code >= 0 else 128 - code}\n".encode())
                except OSError:
                    pass
                sel.unregister(conn)
                conn.close()

    running = True
    while running:
        for key, _ in sel.select():
            what = key.data
            if what == "accept":
                conn, _ = listener.accept()
                try:
                    request, fds = _recv_request(conn)
                except (ConnectionError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    for sig in (signal.SIGCHLD, signal.SIGTERM):
                        signal.signal(sig, signal.SIG_DFL)
                    signal.signal(signal.SIGINT, signal.default_int_handler)
                    sel.close()
                    listener.close()
                    conn.close()
                    for c in kernels.values():
                        c.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    _kernel(request, fds)
                for fd in fds:
                    os.close(fd)
                kernels[pid] = conn
                conn.sendall(f"{pid}\n".encode())
                sel.register(conn, selectors.EVENT_READ, pid)
            elif what == "parent":
                running = False   # stdin closed (or written to): the pytest process is done
            elif what == "child":
                os.read(wake_r, 4096)
                reap()
            else:                 # a client's connection: it closed, so it died or was killed
                pid = what
                if pid in kernels:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    conn = kernels.pop(pid)
                    sel.unregister(conn)
                    conn.close()
                    try:
                        os.waitpid(pid, 0)
                    except ChildProcessError:
                        pass
    for pid in list(kernels):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    listener.close()


if __name__ == "__main__":
    if sys.argv[1] == "connect":
        sys.exit(_connect(sys.argv[2], sys.argv[3:]))
    elif sys.argv[1] == "serve":
        _serve(sys.argv[2], sys.argv[3:])
    else:
        raise SystemExit(f"usage: {sys.argv[0]} serve SOCKET [MODULE ...] | connect SOCKET ARGS")
