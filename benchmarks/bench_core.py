#!/usr/bin/env python
"""Core benchmark of opalg, in one run: accuracy of forward dynamics, size scaling, import time.

(a) Accuracy.  Serial chains of n spherical joints (``Joint.spherical()``: x-y-z Euler
    angles), 1 kg links of 0.3 m (joint k+1 at (0.3, 0, 0) in body k, mass centre at
    (0.15, 0, 0), I_com = diag(1e-4, mL²/12, mL²/12)), gravity on, q, q̇, q̈ ~ U(−1, 1)
    (seed n), n = 5 … 40.  Columns: cond(ℳ); the relative error ‖q̈' − q̈‖/‖q̈‖ of
    ``aba(q, q̇, rnea(q, q̇, q̈))``, of the dense route ``np.linalg.solve(crba, τ − bias)``
    (LU), and of ``aba`` on the same chain written with 1-dof joints (each spherical joint
    split into revolute x, y, z joints through two massless bodies, τ from that model's
    own rnea); and aba/LU.  Then a gimbal-lock sweep: a 3-body chain of spherical joints
    whose middle joint has q₂ = π/2 − δ, δ = 1e-2 … 1e-8, the same columns.  A failing
    call is shown as ``error [i]`` with its exception type and message listed below.

(b) Size scaling.  Revolute serial chains (random axes, placements and inertias, the
    distribution of ``random_model(n, "chain", joints="revolute")``, built directly) at
    n = 2,000 and 16,000: wall time and peak memory of ``Model(...)``,
    ``kinematics.body_kinematics``, ``rnea``, ``aba``, ``articulated``, ``minv_diag``,
    ``upsilon`` and ``from_urdf`` of a generated URDF chain; at n = 2,000 also ``crba`` and
    ``minv`` (N×N outputs).  Every measurement runs in a fresh subprocess: the model is
    built once per n (that build is the ``Model(...)`` measurement) and pickled, each
    other measurement loads the pickle, so its *first call* includes any per-model cache
    it builds; *repeat* is the best of the further calls (3 at n = 2,000, 1 at 16,000;
    none if the first call took > 20 s).  Peak memory = ``ru_maxrss`` after the first call
    minus the resident size just before it (inputs loaded, ``gc.collect()``), with the
    high-water mark reset right before the call (``echo 5 > /proc/self/clear_refs``, Linux),
    so it is the extra resident peak of that call alone; where the reset is refused the
    plain ``ru_maxrss`` difference is shown, marked ``*`` (it can read 0 when loading the
    inputs peaked higher).  A measurement whose first call takes > 60 s
    is killed and shown as ``> 60 s (timeout)``.  µs/body uses the repeat time (the first
    call where there is none); 16k/2k is that time's ratio (8 = linear, 64 = quadratic).

(c) Import time: ``python -c "import opalg"``, best of 5 fresh interpreters, the bare
    interpreter (``python -c pass``) for reference, and whether sympy got imported.

The script measures the opalg of the checkout it lives in (it puts that checkout first
on ``sys.path`` and ``PYTHONPATH``).  About 3–5 minutes on a quiet 2-core machine.

Run: ``make bench-core`` or ``python benchmarks/bench_core.py [--skip-accuracy]
[--skip-scaling] [--skip-import] [--sizes 2000 16000] [--timeout 60] [--calls ...]``;
e.g. ``--skip-accuracy --skip-import --calls from_urdf --sizes 120000`` times a 120,000-link URDF import.
"""
from __future__ import annotations

import argparse
import gc
import os
import pickle
import queue
import resource
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if sys.path[0] != ROOT:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import opalg  # noqa: E402
from opalg.model.multibody import Inertia, Joint, Model  # noqa: E402

LINK, MASS = 0.3, 1.0
ACCURACY_SIZES = (5, 10, 15, 20, 25, 30, 35, 40)
DELTAS = tuple(10.0 ** -e for e in range(2, 9))
BUILD_TIMEOUT = 300  # s: a Model() that times out is still built (once) for the other rows


# ---------------------------------------------------------------------------
# (a) accuracy
# ---------------------------------------------------------------------------
def link_inertia() -> Inertia:
    rod = MASS * LINK ** 2 / 12
    return Inertia(MASS, np.array([LINK / 2, 0.0, 0.0]), np.diag([1e-4, rod, rod]))


def spherical_chain(n: int, split: bool = False) -> Model:
    """n spherical joints; with ``split`` each one as revolute x, y, z through two massless bodies."""
    parents, joints, places, inert = [], [], [], []
    massless = Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    for k in range(n):
        r = np.zeros(3) if k == 0 else np.array([LINK, 0.0, 0.0])
        if not split:
            parents.append(k - 1)
            joints.append(Joint.spherical(name=f"ball{k}"))
            places.append((np.eye(3), r))
            inert.append(link_inertia())
            continue
        for i, axis in enumerate(np.eye(3)):
            parents.append(len(parents) - 1)
            joints.append(Joint("R", axis, name=f"ball{k}_{'xyz'[i]}"))
            places.append((np.eye(3), r if i == 0 else np.zeros(3)))
            inert.append(link_inertia() if i == 2 else massless)
    return Model(parents, joints, places, inert, allow_massless=split)


def rel(x, ref) -> float:
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


def accuracy_row(model, split, q, qd, qdd, errors: list) -> list:
    """[cond, err aba, err LU, err split aba, aba/LU]; failures become 'error [i]'."""
    def attempt(fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            errors.append(f"{type(e).__name__}: {e}")
            return f"error [{len(errors)}]"

    cond = attempt(lambda: float(np.linalg.cond(opalg.crba(model, q))))
    tau = attempt(lambda: opalg.rnea(model, q, qd, qdd))
    e_aba = attempt(lambda: rel(opalg.aba(model, q, qd, tau), qdd))
    e_lu = attempt(lambda: rel(np.linalg.solve(opalg.crba(model, q), tau - opalg.bias(model, q, qd)), qdd))
    e_split = attempt(lambda: rel(opalg.aba(split, q, qd, opalg.rnea(split, q, qd, qdd)), qdd))
    ratio = e_aba / e_lu if isinstance(e_aba, float) and isinstance(e_lu, float) and e_lu > 0 else "-"
    return [cond, e_aba, e_lu, e_split, ratio]


def fmt(x, width=12) -> str:
    if isinstance(x, float):
        return f"{x:{width}.2e}"
    return f"{x:>{width}}"


def print_accuracy() -> None:
    cols = ["cond(M)", "aba", "LU solve", "1-dof aba", "aba/LU"]
    errors: list = []
    print("(a) accuracy: relative error ||qdd' - qdd|| / ||qdd|| of forward dynamics from tau = rnea(q, qd, qdd)")
    print("    spherical-joint chains, 1 kg x 0.3 m links, gravity on, q, qd, qdd ~ U(-1, 1) (seed n);")
    print("    '1-dof aba': the same chain as revolute x, y, z joints through massless bodies (its own rnea)")
    print(f"{'n':>4} {'N':>4} " + " ".join(f"{c:>12}" for c in cols))
    for n in ACCURACY_SIZES:
        model, split = spherical_chain(n), spherical_chain(n, split=True)
        q, qd, qdd = np.random.default_rng(n).uniform(-1, 1, (3, model.ndof))
        row = accuracy_row(model, split, q, qd, qdd, errors)
        print(f"{n:>4} {model.ndof:>4} " + " ".join(fmt(x) for x in row), flush=True)
    print("\n    gimbal-lock sweep: 3 spherical joints, middle joint q2 = pi/2 - delta (others ~ U(-1, 1), seed 3)")
    print(f"{'delta':>9} " + " ".join(f"{c:>12}" for c in cols))
    model, split = spherical_chain(3), spherical_chain(3, split=True)
    q0, qd, qdd = np.random.default_rng(3).uniform(-1, 1, (3, model.ndof))
    for delta in DELTAS:
        q = q0.copy()
        q[model.dof_slice[1].start + 1] = np.pi / 2 - delta
        row = accuracy_row(model, split, q, qd, qdd, errors)
        print(f"{delta:9.0e} " + " ".join(fmt(x) for x in row), flush=True)
    for i, msg in enumerate(errors, 1):
        print(f"    [{i}] {msg}")


# ---------------------------------------------------------------------------
# (b) size scaling
# ---------------------------------------------------------------------------
def chain_inputs(n: int, seed: int = 0):
    """Model(...) arguments of a revolute chain with random_model's distributions."""
    from opalg.model.builders import random_inertia, random_rotation

    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    joints = [Joint("R", a, name=f"joint{k}") for k, a in enumerate(axes)]
    places = [(random_rotation(rng), rng.uniform(-0.5, 0.5, size=3)) for _ in range(n)]
    inert = [random_inertia(rng) for _ in range(n)]
    return list(range(-1, n - 1)), joints, places, inert


def urdf_chain(n: int, seed: int = 0) -> str:
    """URDF text of a revolute chain (links link0..link{n}, joints j1..j{n}), written directly."""
    rng = np.random.default_rng(seed)

    def v(x):
        return " ".join(f"{float(t):.17g}" for t in x)

    lines = ['<robot name="chain">', '  <link name="link0"/>']
    for k in range(1, n + 1):
        axis = rng.normal(size=3)
        m = rng.uniform(0.5, 3.0)
        a, b, c = rng.uniform(0.1, 1.0, size=3)
        ixx, iyy, izz = m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
        lines.append(
            f'  <link name="link{k}"><inertial><origin xyz="{v(rng.uniform(-0.3, 0.3, 3))}" '
            f'rpy="{v(rng.uniform(-3, 3, 3))}"/><mass value="{m:.17g}"/><inertia ixx="{ixx:.17g}" ixy="0" '
            f'ixz="0" iyy="{iyy:.17g}" iyz="0" izz="{izz:.17g}"/></inertial></link>')
        lines.append(
            f'  <joint name="j{k}" type="revolute"><parent link="link{k - 1}"/><child link="link{k}"/>'
            f'<origin xyz="{v(rng.uniform(-0.5, 0.5, 3))}" rpy="{v(rng.uniform(-3, 3, 3))}"/>'
            f'<axis xyz="{v(axis / np.linalg.norm(axis))}"/>'
            '<limit lower="-3" upper="3" effort="100" velocity="10"/></joint>')
    lines.append("</robot>")
    return "\n".join(lines)


def _measure_calls(model, what: str):
    """(callable, description) of one measured call on a loaded model."""
    q = np.random.default_rng(1).uniform(-1, 1, model.ndof)
    qd, x = np.random.default_rng(2).uniform(-1, 1, (2, model.ndof))
    from opalg.model.kinematics import body_kinematics

    return {
        "body_kinematics": lambda: body_kinematics(model, q, qd),
        "rnea": lambda: opalg.rnea(model, q, qd, x),
        "aba": lambda: opalg.aba(model, q, qd, x),
        "articulated": lambda: opalg.articulated(model, q),
        "minv_diag": lambda: opalg.minv_diag(model, q),
        "upsilon": lambda: opalg.upsilon(model, q),
        "crba": lambda: opalg.crba(model, q),
        "minv": lambda: opalg.minv(model, q),
    }[what]


def maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def memory_baseline_kib() -> tuple[int, str]:
    """(baseline, method): reset the resident high-water mark to the current RSS if Linux allows
    it (``/proc/self/clear_refs`` 5), else fall back to the ru_maxrss reached so far."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        with open("/proc/self/status") as fh:
            rss = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS:"))
        return rss, "reset"
    except (OSError, StopIteration, ValueError):
        return maxrss_kib(), "maxrss"


def child(what: str, n: int, path: str, repeat: int) -> None:
    """Subprocess side: prepare inputs, print 'ready', time the first call, then repeats."""
    def emit(*parts):
        print(*parts, flush=True)

    if what == "Model":
        args = chain_inputs(n)
        fn = lambda: Model(*args)  # noqa: E731
    elif what == "from_urdf":
        with open(path) as fh:
            text = fh.read()
        fn = lambda: opalg.from_urdf(text)  # noqa: E731
    else:
        with open(path, "rb") as fh:
            model = pickle.load(fh)
        fn = _measure_calls(model, what)
    gc.collect()
    emit("ready")
    base, method = memory_baseline_kib()
    t0 = time.perf_counter()
    out = fn()
    t_first = time.perf_counter() - t0
    emit("first", t_first, (maxrss_kib() - base) / 1024, method)
    if what == "Model":
        with open(path, "wb") as fh:
            pickle.dump(out, fh, protocol=pickle.HIGHEST_PROTOCOL)
        emit("saved")
        return
    del out
    if t_first > 20:
        return
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        emit("again", time.perf_counter() - t0)


def run_child(what: str, n: int, path: str, repeat: int, timeout: float) -> dict:
    """Parent side: the child's first call gets ``timeout`` seconds after it is ready."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", what, str(n), path, str(repeat)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout] + [lines.put(None)], daemon=True).start()
    res = {"first": None, "again": [], "error": None}
    deadline = time.monotonic() + 600  # preparing the inputs (pickle load) is not timed
    try:
        while True:
            try:
                ln = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                res["error"] = "timeout"
                break
            if ln is None:
                break
            tag, *vals = ln.split()
            if tag == "ready":
                deadline = time.monotonic() + timeout
            elif tag == "first":
                res["first"], res["mem"], res["method"] = float(vals[0]), float(vals[1]), vals[2]
                deadline = time.monotonic() + max(timeout, 2 * res["first"] * (repeat + 1) + 30)
            elif tag == "again":
                res["again"].append(float(vals[0]))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    if res["first"] is None and res["error"] is None:
        err = proc.stderr.read().strip().splitlines()
        res["error"] = err[-1] if err else f"exit code {proc.returncode}"
    return res


CALLS = ("Model", "body_kinematics", "rnea", "aba", "articulated", "minv_diag", "upsilon", "from_urdf",
         "crba", "minv")


def print_scaling(sizes, timeout: float, whats=CALLS) -> None:
    print("\n(b) size scaling: revolute serial chains; each row a fresh subprocess (see the docstring);")
    print("    'first' = first call on a freshly loaded model, 'repeat' = best of the further calls;")
    print("    peak = resident high-water mark during the first call minus the resident size before it (MiB;")
    print("    the mark is reset first through /proc/self/clear_refs; * = reset refused, ru_maxrss difference)")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            repeat = 3 if n <= 2000 else 1
            mpath, upath = os.path.join(tmp, f"chain{n}.pkl"), os.path.join(tmp, f"chain{n}.urdf")
            with open(upath, "w") as fh:
                fh.write(urdf_chain(n))
            print(f"\n  n = {n:,} (repeats: {repeat})")
            print(f"  {'call':>16} {'first [s]':>12} {'repeat [s]':>11} {'us/body':>9} {'peak MiB':>9}")
            for what in whats:
                if what in ("crba", "minv") and n > 2000:
                    continue
                if what not in ("Model", "from_urdf") and not os.path.exists(mpath):
                    if "Model" not in whats:  # asked for other calls only: build it untimed
                        run_child("Model", n, mpath, 0, BUILD_TIMEOUT)
                if what not in ("Model", "from_urdf") and not os.path.exists(mpath):
                    print(f"  {what:>16}  skipped (no model: Model() did not finish)", flush=True)
                    continue
                res = run_child(what, n, upath if what == "from_urdf" else mpath, repeat, timeout)
                if res["first"] is None:
                    msg = f"> {timeout:.0f} s (timeout)" if res["error"] == "timeout" else f"failed: {res['error']}"
                    if what == "Model" and res["error"] == "timeout":  # build it anyway for the other rows
                        again = run_child(what, n, mpath, 0, BUILD_TIMEOUT)
                        msg += (f"; built untimed for the other rows in {again['first']:.0f} s"
                                if again["first"] is not None else f"; not built within {BUILD_TIMEOUT} s either")
                    print(f"  {what:>16} {msg}", flush=True)
                    continue
                t = min(res["again"]) if res["again"] else res["first"]
                results[what, n] = t
                again = f"{min(res['again']):11.3f}" if res["again"] else f"{'-':>11}"
                mark = "" if res["method"] == "reset" else "*"
                print(f"  {what:>16} {res['first']:12.3f} {again} {t / n * 1e6:9.1f} {res['mem']:9.1f}{mark}",
                      flush=True)
    if len(sizes) == 2:
        a, b = sizes
        print(f"\n  time ratio n = {b:,} / {a:,} (linear = {b / a:g}, quadratic = {(b / a) ** 2:g}):")
        for what in whats:
            if (what, a) in results and (what, b) in results:
                print(f"  {what:>16} {results[what, b] / results[what, a]:9.1f}")
            elif (what, a) in results and what not in ("crba", "minv"):
                print(f"  {what:>16}         - (n = {b:,} did not finish)")


# ---------------------------------------------------------------------------
# (c) import time
# ---------------------------------------------------------------------------
def print_import(repeat: int = 5) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))

    def best(code):
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
            ts.append(time.perf_counter() - t0)
        return min(ts)

    t_imp, t_bare = best("import opalg"), best("pass")
    out = subprocess.run([sys.executable, "-c", "import sys, opalg; print('sympy' in sys.modules, opalg.__file__)"],
                         check=True, env=env, cwd=ROOT, capture_output=True, text=True).stdout.split()
    print(f"\n(c) import time (best of {repeat} fresh interpreters)")
    print(f'    python -c "import opalg": {t_imp * 1e3:7.0f} ms   (python -c pass: {t_bare * 1e3:.0f} ms, '
          f"difference {(t_imp - t_bare) * 1e3:.0f} ms)")
    print(f"    sympy imported by 'import opalg': {out[0]}   (opalg from {out[1]})")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        what, n, path, repeat = sys.argv[2:6]
        child(what, int(n), path, int(repeat))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--skip-import", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 16000])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed for one measured call")
    ap.add_argument("--calls", nargs="+", choices=CALLS, default=list(CALLS),
                    help="which calls the scaling part measures (e.g. --calls from_urdf --sizes 120000)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"opalg {opalg.__version__} from {os.path.dirname(opalg.__file__)}; numpy {np.__version__}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not args.skip_accuracy:
        print_accuracy()
    if not args.skip_scaling:
        print_scaling(args.sizes, args.timeout, args.calls)
    if not args.skip_import:
        print_import()
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
