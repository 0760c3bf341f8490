"""What a notebook's first cell loads, read from the source: the warm kernels' preload.

``tools/warm_kernel.py`` forks notebook kernels from a process that has already imported
modules; it may preload a module only if the notebook would load it anyway, or a notebook that
forgets an import would pass in the suite and fail for a student.  This module says which
modules a first cell certainly loads (:func:`loaded_modules`) and which every lecture notebook
loads (:func:`common_imports`, :func:`preload`), without importing anything.
"""
from __future__ import annotations

import ast
import functools
import json
import pathlib


def first_cell(path: pathlib.Path) -> str:
    """The source of the notebook's first code cell ('' if it has none)."""
    cells = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))["cells"]
    return next(("".join(c["source"]) for c in cells if c["cell_type"] == "code"), "")


def preload(root: pathlib.Path) -> list[str]:
    """What every lecture notebook (``root/notebooks/*.ipynb``) loads in its first cell."""
    return common_imports([first_cell(p) for p in sorted((root / "notebooks").glob("*.ipynb"))], root)


def _source_file(name: str, root: pathlib.Path) -> pathlib.Path | None:
    """The file of module ``name`` if it is one of the project's own (under ``root``)."""
    path = root.joinpath(*name.split("."))
    for file in (path / "__init__.py", path.with_suffix(".py")):
        if file.is_file():
            return file
    return None


@functools.lru_cache(maxsize=None)
def _file_imports(file: pathlib.Path, package: str, root: pathlib.Path) -> tuple[str, ...]:
    return tuple(_imports(ast.parse(file.read_text(encoding="utf-8")), package, root))


def _imports(tree: ast.Module, package: str, root: pathlib.Path) -> list[str]:
    """Modules a module body imports when it runs: its top-level ``import`` statements (also
    inside top-level ``try``/``if``), with each parent package, relative ones resolved against
    ``package``.  ``from m import x`` counts ``m.x`` when the project has a file for it (for
    other packages, telling a submodule from an attribute would mean importing them)."""
    names: list[str] = []
    body = list(tree.body)
    while body:
        node = body.pop(0)
        if isinstance(node, (ast.Try, ast.If)):
            body[:0] = node.body
            continue
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module
            found = [base] + [f"{base}.{a.name}" for a in node.names
                              if _source_file(f"{base}.{a.name}", root) is not None]
        else:
            continue
        for name in found:
            parts = name.split(".")
            names += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return list(dict.fromkeys(names))


def loaded_modules(source: str, root: pathlib.Path) -> list[str] | None:
    """The modules that running the imports of ``source`` (a notebook's first cell) loads for
    certain: the ones it names, their parent packages, and, through the source files under
    ``root`` (the project's own packages), what those import at their top level.  None if the
    source is not Python.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "pkg").mkdir(); _ = (root / "pkg" / "__init__.py").write_text("import json")
    >>> _ = (root / "pkg" / "sub.py").write_text("from . import other\\nimport numpy.linalg as la")
    >>> _ = (root / "pkg" / "other.py").write_text("def f():\\n    import sympy")
    >>> loaded_modules("%matplotlib inline\\nfrom pkg.sub import f", root)
    ['json', 'numpy', 'numpy.linalg', 'pkg', 'pkg.other', 'pkg.sub']
    """
    # IPython magics and shell escapes are not Python: leave them out of the parse.
    src = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                    for line in source.splitlines())
    try:
        todo = _imports(ast.parse(src), "", root)
    except SyntaxError:
        return None
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        file = _source_file(name, root)
        if file is not None:
            package = name if file.name == "__init__.py" else name.rpartition(".")[0]
            todo += _file_imports(file, package, root)
    return sorted(seen)


def common_imports(sources, root: pathlib.Path) -> list[str]:
    """The modules every one of ``sources`` (the notebooks' first cells) loads for certain
    (:func:`loaded_modules`): what the zygote may preload without a notebook noticing.

    Examples
    --------
    >>> import pathlib
    >>> common_imports(["import numpy as np\\nimport sympy", "from numpy import linalg\\nimport os"],
    ...                pathlib.Path("/nonexistent"))
    ['numpy']
    >>> common_imports(["import numpy", "x = ("], pathlib.Path("/nonexistent"))
    []
    """
    common: set[str] | None = None
    for source in sources:
        names = loaded_modules(source, root)
        if names is None:
            return []
        common = set(names) if common is None else common & set(names)
    return sorted(common or ())
