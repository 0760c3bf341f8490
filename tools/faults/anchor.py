"""Locate a fault's snippet inside one function of the package, by the function's qualified name.

A fault names its target as ``"opalg.algorithms.rnea:rnea"`` (module, then the qualified name of
a function, method or nested function: ``"opalg.algorithms.riccati:Articulated.pivot_inward"``)
and gives an exact source snippet that must occur in that function's source exactly once.  The
function is found with :mod:`ast` in the module's file, never by line number, so a fault stays
valid while code around it moves; a refactor that removes or duplicates the snippet makes the
fault *stale*, an error (:class:`StaleFault`), never a silent survivor.
"""

from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass


class StaleFault(Exception):
    """The target function or its snippet is missing (or the snippet is not unique)."""


def module_path(root: pathlib.Path, module: str) -> pathlib.Path:
    """The source file of ``module`` (dotted) under the repository ``root``."""
    base = root.joinpath(*module.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    raise StaleFault(f"module {module!r} has no source file under {root}")


def _find(body, parts: list[str]):
    head, rest = parts[0], parts[1:]
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == head:
            return node if not rest else _find(node.body, rest)
    return None


@dataclass(frozen=True)
class Span:
    """Character offsets [start, stop) of a function's source in its file's text."""

    start: int
    stop: int


def function_span(text: str, qualname: str) -> Span:
    """The span of the function ``qualname`` (``A.b`` for a method, ``f.g`` for a nested one),
    decorators excluded, in the module source ``text``."""
    node = _find(ast.parse(text).body, qualname.split("."))
    if node is None or isinstance(node, ast.ClassDef):
        raise StaleFault(f"no function {qualname!r}")
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))
    return Span(offs[node.lineno - 1] + node.col_offset, offs[node.end_lineno - 1] + node.end_col_offset)


def split_target(target: str) -> tuple[str, str]:
    """``"pkg.mod:Qual.name"`` -> ``("pkg.mod", "Qual.name")``."""
    module, sep, qualname = target.partition(":")
    if not sep or not module or not qualname:
        raise ValueError(f"target {target!r} must be 'module:qualname'")
    return module, qualname


def locate(root: pathlib.Path, target: str, old: str) -> tuple[pathlib.Path, str, int]:
    """(file, its text, the offset of ``old``) for the unique occurrence of ``old`` in ``target``."""
    module, qualname = split_target(target)
    path = module_path(root, module)
    text = path.read_text(encoding="utf-8")
    span = function_span(text, qualname)
    body = text[span.start:span.stop]
    count = body.count(old)
    if count != 1:
        raise StaleFault(f"{target}: the snippet {old!r} occurs {count} times in the function (expected once)")
    return path, text, span.start + body.index(old)


def mutated_text(root: pathlib.Path, target: str, old: str, new: str) -> tuple[pathlib.Path, str, str]:
    """(file, original text, text with the fault applied); the result must still parse."""
    path, text, at = locate(root, target, old)
    out = text[:at] + new + text[at + len(old):]
    try:
        ast.parse(out)
    except SyntaxError as e:
        raise StaleFault(f"{target}: the fault does not parse ({e})") from None
    return path, text, out
