"""Project hygiene: dependency lists in sync, CI runs the README's command (the documents' code
blocks run in tests/test_docs_code.py)."""

from __future__ import annotations

import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin"
            pins[name.lower().replace("_", "-")] = version
    return pins


def _environment_yml() -> dict[str, str]:
    deps = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.fullmatch(r"\s*-\s*([A-Za-z0-9_.-]+)\s*=\s*([0-9][^\s#]*)\s*", line)
        if m:
            deps[m.group(1).lower()] = m.group(2)
    return deps


def test_environment_yml_matches_pyproject_and_pins():
    """environment.yml lists exactly the pyproject dependencies (runtime + test), at the pinned versions."""
    proj = _pyproject()["project"]
    wanted = {_name(r) for r in proj["dependencies"] + proj["optional-dependencies"]["test"]}
    env = _environment_yml()
    env.pop("python", None)
    assert set(env) == wanted, f"environment.yml {sorted(env)} vs pyproject {sorted(wanted)}"
    pins = _constraints()
    for name, version in env.items():
        assert pins.get(name) == version, f"{name}: environment.yml {version}, constraints.txt {pins.get(name)}"


def test_every_dependency_is_pinned():
    """Each direct dependency has an exact pin in constraints.txt (what CI installs)."""
    proj = _pyproject()["project"]
    pins = _constraints()
    for req in proj["dependencies"] + proj["optional-dependencies"]["test"]:
        assert _name(req) in pins, f"{_name(req)} is not pinned in constraints.txt"


def test_ci_runs_the_readme_test_command():
    """.ci/run calls `make test`, the command the README documents."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\s*make test\s*$", ci, re.M)
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make reproduce" in readme
    install = (ROOT / "docs" / "guides" / "install.md").read_text()
    assert "make test" in install and "conda env create -f environment.yml" in install
