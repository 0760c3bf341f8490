"""`make student`: a git-ignored copy of the notebooks that keeps a student's work."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import student  # noqa: E402

sys.path.remove(str(ROOT / "tools"))


def _fake_repo(tmp_path):
    (tmp_path / "notebooks").mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb"):
        (tmp_path / "notebooks" / name).write_text(f'{{"name": "{name}"}}')
    return tmp_path


def test_copies_every_notebook(tmp_path):
    root = _fake_repo(tmp_path)
    assert student.main([], root=root) == 0
    assert sorted(p.name for p in (root / "student").glob("*.ipynb")) == ["01_a.ipynb", "02_b.ipynb"]


def test_keeps_the_students_answers(tmp_path, capsys):
    root = _fake_repo(tmp_path)
    student.main([], root=root)
    mine = root / "student" / "01_a.ipynb"
    mine.write_text("my answers")
    student.main([], root=root)
    assert mine.read_text() == "my answers"
    assert "kept 2" in capsys.readouterr().out


def test_force_moves_old_copies_aside(tmp_path):
    root = _fake_repo(tmp_path)
    student.main([], root=root)
    (root / "student" / "01_a.ipynb").write_text("my answers")
    student.main(["--force"], root=root)
    assert (root / "student" / ".previous" / "01_a.ipynb").read_text() == "my answers"
    assert (root / "student" / "01_a.ipynb").read_text() == '{"name": "01_a.ipynb"}'


def test_workspace_is_git_ignored():
    out = subprocess.run(["git", "check-ignore", "-q", "student/01_index.ipynb"], cwd=ROOT)
    assert out.returncode == 0, "student/ is not in .gitignore"
