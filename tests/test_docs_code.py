"""Every ```python block of the documentation runs as written, and the README stays a front door.

The documents are README.md, CONTRIBUTING.md and every docs/**/*.md except docs/solutions/ (the
model answers, which tests/test_exercises.py runs through their checks).  The blocks of one file
run in order in one shared namespace, with the repository root as the working directory, as a
reader who pastes them one after the other into one Python session would run them.  A failure
names the file and the line of the block's opening fence.

A block that is deliberately not runnable (shell commands, expected output, a fragment) is
fenced as ```text or ```console, never ```python.  pytest has no markdown collection of its own
(``--doctest-glob`` runs only ``>>>`` examples), hence this small parametrized test.
"""

from __future__ import annotations

import os
import pathlib
import re
import textwrap

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: The README is the front door (issue 34): at most this many words, counted as `wc -w` does.
README_MAX_WORDS = 1500

#: Info strings that mark a fenced block as Python (the first word after the backticks).
PYTHON_TAGS = {"python", "py", "python3"}

#: An opening or closing fence: three or more backticks or tildes, then the info string.
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")


def documents(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """The markdown files whose code blocks must run, in a stable order."""
    files = [root / "README.md", root / "CONTRIBUTING.md"]
    files += sorted(p for p in (root / "docs").rglob("*.md")
                    if "solutions" not in p.relative_to(root / "docs").parts[:1])
    return [p for p in files if p.is_file()]


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line of the opening fence, code) of every Python block of a markdown text, in order.

    A fence closes with the same character, at least as long, and no info string (CommonMark);
    an unclosed block runs to the end of the text.
    """
    blocks, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        opening, info = m.group("fence"), m.group("info").strip()
        start, body = i + 1, []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if (close and close.group("fence")[0] == opening[0]
                    and len(close.group("fence")) >= len(opening) and not close.group("info").strip()):
                break
            body.append(lines[i])
            i += 1
        i += 1
        if info.split(maxsplit=1)[:1] and info.split(maxsplit=1)[0].lower() in PYTHON_TAGS:
            blocks.append((start, textwrap.dedent("\n".join(body)) + "\n"))
    return blocks


def run_blocks(path: pathlib.Path, text: str, root: pathlib.Path = ROOT) -> int:
    """Execute the Python blocks of ``text`` in order in one namespace, from ``root``.

    Returns the number of blocks run; raises AssertionError naming ``path`` relative to ``root``,
    the block's line and first line of code if one raises.  numpy's print options and the working
    directory are restored afterwards (a block may set them, and the worker runs other tests).
    """
    name = path.relative_to(root) if path.is_relative_to(root) else path
    namespace = {"__name__": "__main__", "__file__": str(path)}
    options, cwd = np.get_printoptions(), os.getcwd()
    blocks = python_blocks(text)
    try:
        os.chdir(root)
        for line, code in blocks:
            first = next((s.strip() for s in code.splitlines() if s.strip()), "")
            try:
                exec(compile(code, f"{name}:{line}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(
                    f"{name}, the ```python block at line {line} ({first!r}) raised "
                    f"{type(exc).__name__}: {exc}") from exc
    finally:
        os.chdir(cwd)
        np.set_printoptions(**options)
    return len(blocks)


DOCUMENTS = documents()


@pytest.mark.parametrize("path", DOCUMENTS, ids=[str(p.relative_to(ROOT)) for p in DOCUMENTS])
def test_code_blocks_run(path):
    """Each file's ```python blocks run as written, in order, in one namespace."""
    run_blocks(path, path.read_text(encoding="utf-8"))


def test_readme_is_a_front_door():
    """README.md has at most 1,500 words (whitespace-separated, as `wc -w` counts) and a
    first example that prints (not only asserts)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    words = len(text.split())
    assert words <= README_MAX_WORDS, (
        f"README.md has {words} words, more than {README_MAX_WORDS}: move the detail to docs/guides/")
    blocks = python_blocks(text)
    assert blocks and "print(" in blocks[0][1], "README.md: the first example prints nothing"


def test_the_documents_have_examples():
    """The collection finds the documents and their blocks (an empty glob or a broken fence
    parser would otherwise pass silently)."""
    names = {str(p.relative_to(ROOT)) for p in DOCUMENTS}
    assert {"README.md", "CONTRIBUTING.md", "docs/guides/recursions.md"} <= names
    assert not any(n.startswith("docs/solutions/") for n in names)
    assert sum(len(python_blocks(p.read_text(encoding="utf-8"))) for p in DOCUMENTS) >= 10


def test_a_broken_block_is_reported(tmp_path):
    """The runner fails on a bad block, naming the file and the block's line; blocks share one
    namespace in order; text and console blocks are not run."""
    doc = tmp_path / "doc.md"
    text = textwrap.dedent("""\
        # A page

        ```python
        x = 41
        ```

        ```console
        make this-is-not-python
        ```

        ```python
        assert x + 1 == 42
        ```

        ~~~py
        y = x / 0      # the planted fault
        ~~~
        """)
    assert [line for line, _ in python_blocks(text)] == [3, 11, 15]
    with pytest.raises(AssertionError, match=r"doc\.md, the ```python block at line 15 \('y = x / 0"):
        run_blocks(doc, text, root=tmp_path)
    assert run_blocks(doc, text.replace("x / 0", "x / 1"), root=tmp_path) == 3


def test_relative_links_resolve():
    """Every relative link of the README, CONTRIBUTING.md, the guides and the students' guide
    names a file of the repository (anchors and web addresses are not followed)."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "notebooks" / "README.md",
             *sorted((ROOT / "docs" / "guides").glob("*.md"))]
    dead = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)    # no links in code
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (page.parent / target.split("#", 1)[0]).exists():
                dead.append(f"{page.relative_to(ROOT)}: {target}")
    assert not dead, "dead links:\n" + "\n".join(dead)
