"""The notebook standard of CONTRIBUTING.md, checked on the committed notebooks.

Figures: every PNG is shown through ``opalg.course.display.show`` (no bare ``plt.show()``), so it has
alt text in its output metadata and a resolution of at least 110 dpi (read from the PNG's pHYs
chunk, which matplotlib writes); animations are ``opalg.course.display.animate`` players with an
aria-label.  Exercises: headed ``**Exercise NN.k**`` and checked by ``opalg.course.exercises`` (see
tests/test_exercises.py).  Every notebook links the suite's notation table.  No text output
prints raw round-off (its digits depend on the CPU, and nbval compares the text).
"""

from __future__ import annotations

import base64
import json
import pathlib
import re

import pytest

from opalg.course.display import png_dpi

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MIN_DPI = 110


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]




@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_images_have_alt_text_and_resolution(path):
    for i, cell in enumerate(_cells(path)):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                alt = out.get("metadata", {}).get("image/png", {}).get("alt", "")
                assert len(alt) >= 10, f"{path.name}, cell {i}: a PNG without alt text (use opalg.course.display.show)"
                dpi = png_dpi(base64.b64decode("".join(data["image/png"])))
                assert dpi is not None and dpi >= MIN_DPI - 0.5, f"{path.name}, cell {i}: PNG at {dpi} dpi"
            html = "".join(data.get("text/html", ""))
            if "<script" in html and "anim" in html:
                assert 'class="opalg-animation"' in html and "aria-label=" in html, (
                    f"{path.name}, cell {i}: an animation not made by opalg.course.display.animate")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_bare_plt_show(path):
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            assert not re.search(r"\bplt\.show\(", src), f"{path.name}, cell {i}: plt.show() (use opalg.course.display.show)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_links_the_notation_table(path):
    text = "".join("".join(c["source"]) for c in _cells(path) if c["cell_type"] == "markdown")
    assert "docs/NOTATION.md" in text, f"{path.name}: no link to the notation table docs/NOTATION.md"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_exercise_headings_are_numbered_by_notebook(path):
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "markdown":
            src = "".join(cell["source"])
            for m in re.finditer(r"\*\*Exercise ([^*]*)\*\*", src):
                assert re.fullmatch(rf"{path.name[:2]}\.\d+\.?", m.group(1).strip()), (
                    f"{path.name}, cell {i}: exercise heading {m.group(0)!r} (write **Exercise {path.name[:2]}.k.**)")


# The check printers come from opalg.course.report (one format for every notebook); a notebook that
# defines its own would drift back to the three formats the suite once had.
SHARED_PRINTERS = ("report", "refute", "decade", "bound", "exact")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_check_printers_come_from_opalg_report(path):
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            m = re.search(rf"^\s*(?:def\s+({'|'.join(SHARED_PRINTERS)})\s*\(|({'|'.join(SHARED_PRINTERS)})\s*=\s*lambda\b)",
                          src, re.M)
            assert m is None, (f"{path.name}, cell {i}: defines its own {m.group(1) or m.group(2)!r} "
                               "(import it from opalg.course.report)")
            m = re.search(r"^\s*rel\s*=", src, re.M)
            assert m is None, f"{path.name}, cell {i}: assigns to rel, shadowing opalg.course.report.rel (use another name)"


# A line of a check's output that says only True or False tells the reader nothing: it must say
# what was compared, the error and the tolerance (opalg.course.report).  Lines that are data, not
# checks, are allowed here by (notebook, phrase), each with its reason.
BOOLEAN_DATA = {
    # (notebook, a phrase of the output line): why the True/False there is data
}
BARE_BOOL = re.compile(r"(?:[:=]\s*|^\s*|\(|,\s*)(True|False)\b")


def _text_outputs(cell):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            yield "".join(out["text"])
        elif "text/plain" in out.get("data", {}):
            yield "".join(out["data"]["text/plain"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_bare_boolean_output_lines(path):
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] != "code":
            continue
        for text in _text_outputs(cell):
            for line in text.splitlines():
                if BARE_BOOL.search(line) and not any(
                        nb == path.name[:2] and phrase in line for nb, phrase in BOOLEAN_DATA):
                    raise AssertionError(f"{path.name}, cell {i}: output line {line.strip()!r} prints a bare "
                                         "boolean (use opalg.course.report: report, refute, bound, exact)")


def test_bare_boolean_pattern():
    # the pattern catches what it must and leaves words alone
    for line in ("True", "ok: True", "x = False", "a (as dense: True), b", "[True, False]"):
        assert BARE_BOOL.search(line), line
    for line in ("Trueness", "rel. error < 1e-15 (tolerance 1e-12: round-off)", "feasible, kappa = 0.4"):
        assert not BARE_BOOL.search(line), line


# No committed output prints raw round-off (CONTRIBUTING.md, "Writing a verification cell that
# holds on any machine"): its digits move with the CPU and the BLAS kernel, and plain nbval compares
# every text output.  A check prints the decade through opalg.course.report ("rel. error ≤ 1e-13", which
# tools/nbval_sanitize.cfg sanitizes) and values are rounded to what is meaningful.  Caught here:
# a number below 1e-12 in scientific notation with digits other than a bare decade ("1.7e-15",
# "[3.2e-16 1.1e-16]", "2e-16"; a decade "1e-13" is a tolerance, a limit or report's floor), and a
# float printed to round-off ("0.9999999999999998", "1.0000000002", 12 or more decimals), and
# report's round-off floor "≤ 1e-13" printed by opalg.course.report.decade outside a report line (a table
# of decades: nbval's sanitizer only knows "rel. error ≤ 1e-13", and the decade moves with the CPU).
TINY_SCI = re.compile(r"(?<![\w.])[-+]?(\d(?:\.\d+)?)[eE]([-−])(\d+)\b")
ROUND_OFF_TAIL = re.compile(r"(?<![\w.])\d+\.(?:\d*?(?:0{7,}|9{7,})[1-9]|\d{12,})")
BARE_FLOOR = re.compile(r"(?<!rel\. error )≤ 1e-\d+")
_FRAMES = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=\\\n]+")   # animation frames (not text)
PANELS = sorted((ROOT / "notebooks" / "panels").glob("*.ipynb"))


def round_off_in(text: str) -> list[str]:
    """The pieces of ``text`` that print raw round-off (see above)."""
    found = [m.group(0) for m in TINY_SCI.finditer(text)
             if m.group(1) != "1" and float(m.group(1)) * 10.0 ** -int(m.group(3)) < 1e-12]
    return found + ROUND_OFF_TAIL.findall(text) + BARE_FLOOR.findall(text)


def _all_text_outputs(cell):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            yield "".join(out["text"])
        for mime in ("text/plain", "text/html", "text/latex", "text/markdown"):
            if mime in out.get("data", {}):
                yield _FRAMES.sub("", "".join(out["data"][mime]))


@pytest.mark.parametrize("path", NOTEBOOKS + PANELS, ids=[p.name for p in NOTEBOOKS + PANELS])
def test_no_raw_round_off_in_outputs(path):
    for i, cell in enumerate(_cells(path)):
        for text in _all_text_outputs(cell):
            for line in text.splitlines():
                bad = round_off_in(line)
                assert not bad, (f"{path.name}, cell {i}: output line {line.strip()[:120]!r} prints raw round-off "
                                 f"{bad} (use opalg.course.report: report, bound, exact; or round to meaningful digits)")


def test_round_off_pattern():
    # the old notebook 08 (Cell 7) and the shapes CONTRIBUTING.md names are caught ...
    for line in ("Lambda^-1[v_x, v_y] vs S: relative error 1.8e-15 (tolerance 1e-12: a dense solve)",
                 "residual [3.2e-16 1.1e-16 0.0e+00]", "error 2e-16", "err = 4.4E-16", "kappa = 0.9999999999999998",
                 "x = 1.0000000002", "pi = 3.141592653589793",
                 "qdd = solve(crba, T - bias)                    ≤ 1e-13   ≤ 1e-13"):   # the old notebook 06
        assert round_off_in(line), line
    # ... and the report helper's lines, limits, tolerances and meaningful values are not
    for line in ("S vs Lambda^-1: rel. error ≤ 1e-13 (tolerance 1e-12: 45 cond(M) eps, cond(M) = 70)",
                 "max |crm(V) V|: < 1e-14 (V x V = 0 up to round-off)", "tolerance 2.2384e-10", "kappa = 6.45e-04",
                 "eigenvalues 6.53e-03 .. 2.02", "(x0, y0) = (1.908832, 0.989282) m", "peak |T1| about 2.6e+04 N m",
                 "the drift: < 2e-09 (1.3e-10 measured)", "0.0000 0.3462", "rows 1e-15 to 1e-12"):
        assert not round_off_in(line), line
