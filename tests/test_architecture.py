"""The package's layout: layers that import downward only, no import circles, small modules, and
today's public names still importable (docs/ARCHITECTURE.md).

The import graph is read from the source with ``ast`` (every ``import`` statement, those inside
functions included, so a lazy import cannot hide a circle or an upward edge).
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "opalg"

#: Layer of each top-level module or subpackage of opalg, lowest first.  A module may import
#: modules of its own layer or lower ones; the topics (layer 5) may use each other, without circles.
LAYERS = {
    "errors": 0, "_backend": 0, "opcount": 0,
    "spatial": 1,
    "model": 2, "pinocchio_bridge": 2,      # a bridge sits with the model it converts
    "simulate": 2,                          # the integrator seam: below every algorithm that steps time
    "algorithms": 3,
    "algebra": 4,
    "closed": 5, "quasi": 5, "fijany": 5, "flex": 5, "floating": 5, "symbolic": 5, "underactuated": 5,
    "ider": 5,
    "course": 6,
}
#: ``opalg`` itself re-exports every layer: only the course (the notebooks' helpers) may import it.
TOP = 6
MAX_LINES = 450
MAX_TOP_MODULES = 8

#: The public names of opalg and of its topic packages before the layers (commit 52c5715):
#: ``__all__`` where there was one, else the package's own public functions, classes and constants.
API = {
    'opalg': [
        'Articulated', 'FreeJoint', 'Inertia', 'InfeasibleDirections', 'Innovations', 'Joint', 'LTDL',
        'Model', 'ModelError', 'OpalgError', 'SingularConfigurationError', 'SpatialOperators',
        'StateError', 'TreeSparse', 'URDFError', 'aba', 'articulated', 'bias', 'body_poses',
        'composite_inertias', 'crba', 'difference', 'frame_jacobian', 'from_urdf', 'hybrid',
        'innovations_passes', 'integrate', 'lambda_inv', 'ltdl', 'ltdl_solve', 'mass_matrix_diag',
        'minv', 'minv_diag', 'neutral', 'operators', 'planar_arm', 'random_model', 'reduced_inertia',
        'rnea', 'serial_chain', 'upsilon'
    ],
    'opalg.closed': [
        'Assembly', 'ClosedSystem', 'ForwardResult', 'Grasp', 'LoopClosure', 'MultiArm',
        'MultiArmResult', 'RankDeficientWarning', 'Simulation', 'four_bar', 'random_closed_system',
        'simulate', 'solve_compliance'
    ],
    'opalg.quasi': [
        'ArticulatedRates', 'NuConstraints', 'QuasiSimulation', 'articulated_rates', 'nu', 'nu_dot',
        'nu_dot_from_qdd', 'qd_from_nu', 'schur_in_nu', 'simulate'
    ],
    'opalg.fijany': [
        'CriticalPath', 'Factors', 'constraint_directions', 'critical_path', 'depth_levels', 'factors',
        'forward'
    ],
    'opalg.flex': [
        'FlexBody', 'FlexModel', 'FlexOperators', 'aba', 'crba', 'examples', 'hybrid', 'operators',
        'rnea'
    ],
    'opalg.floating': [
        'BaseReaction', 'FloatingSimulation', 'arm_dofs', 'base_reaction', 'base_velocity',
        'coupling_inertia', 'generalized_jacobian', 'simulate'
    ],
    'opalg.symbolic': [
        'Body', 'COLOURS', 'DeploymentSetup', 'FREE_COLOURS', 'FREE_ROLES', 'FreeDeployment', 'Hinge',
        'ROLES', 'ROOT_NAMES', 'RootMotion', 'SingularConfiguration', 'Trajectory', 'TreeSystem', 'Tx',
        'Tz', 'box_inertia', 'box_outlines', 'carriers', 'deployable_example', 'deployment_setup',
        'draw_outlines', 'euler_jacobian', 'free_bodies', 'free_deployment', 'free_root_model',
        'free_state', 'operator_poses', 'pose_function', 'root_state', 'simulate', 't', 'to_model'
    ],
    'opalg.ider': [
        'FeasibilitySeries', 'INERTIAS', 'IderResult', 'InfeasibleDirections', 'LENGTHS', 'MASSES',
        'PRESETS', 'STOP_TOL', 'StateError', 'THETA0', 'TIP0', 'V_A', 'arm', 'conditioning',
        'conditioning_passes', 'directions', 'display_limits', 'feasibility_sweep', 'force_directions',
        'initial_speeds', 'joint_points', 'kappa_series', 'path', 'reach_measure', 'simulate',
        'solve_augmented', 'solve_passes', 'solve_reduced', 'sweep_directions', 'tip', 'tip_bias',
        'tip_jacobian'
    ],
    'opalg.underactuated': [
        'InfeasibleDirections', 'Model', 'OpalgError', 'Run', 'SPONG', 'StateError', 'TaskSolution',
        'UnderactuatedArm', 'acrobot', 'body_kinematics', 'check_forces', 'check_passive',
        'check_state', 'conditioning_passes', 'hybrid', 'hybrid_on', 'ider_arm', 'overflow_guard',
        'pendubot', 'refuse_free', 'simulate', 'swing_controller', 'task_control', 'unit_response'
    ],
    'opalg.course.exercises': [   # was opalg.exercises
        'Exercise', 'Feedback', 'check', 'exercise', 'grade', 'not_answered', 'registry'
    ],
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """module -> the opalg modules it imports (every import statement, at any depth)."""
    paths = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            deps |= {t for t in targets if t in paths and t != name}
        graph[name] = deps
    return graph


def _layer(module: str) -> int:
    parts = module.split(".")
    return TOP if len(parts) == 1 else LAYERS[parts[1]]


def test_every_top_level_name_has_a_layer():
    """A new top-level module or subpackage must be placed in LAYERS (and in docs/ARCHITECTURE.md)."""
    names = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert names == set(LAYERS), sorted(names ^ set(LAYERS))
    top_modules = [p.name for p in ROOT.glob("*.py")]
    assert len(top_modules) <= MAX_TOP_MODULES, top_modules


def test_imports_point_down():
    """No module imports a higher layer (``__main__`` modules are programs, above every layer)."""
    upward = [(m, d) for m, deps in _graph().items() for d in deps
              if not m.endswith("__main__") and _layer(d) > _layer(m)]
    assert not upward, upward


def test_no_import_circles():
    """The module graph has no cycle (Tarjan's strongly connected components), lazy imports included;
    neither has the graph of the topic packages (layer 5) among themselves."""
    graph = _graph()

    def cycles(g):
        index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

        def visit(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in g[v]:
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))

        for v in g:
            if v not in index:
                visit(v)
        return found

    assert not cycles(graph)
    topics = {k for k, v in LAYERS.items() if v == 5}
    package = {m: m.split(".")[1] for m in graph if m.count(".") and m.split(".")[1] in topics}
    between = {t: {package[d] for m, p in package.items() if p == t for d in graph[m]
                   if d in package and package[d] != t} for t in topics}
    assert not cycles(between), between


def test_modules_are_small():
    long = {str(p.relative_to(ROOT.parent)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


@pytest.mark.parametrize("package", sorted(API))
@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # old names kept for one release warn when used
def test_public_names_still_import(package):
    """Every public name of the layout before the layers is still there, at the same address."""
    module = importlib.import_module(package)
    missing = [n for n in API[package] if not hasattr(module, n)]
    assert not missing, missing
