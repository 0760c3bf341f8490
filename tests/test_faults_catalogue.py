"""The fault catalogue of ``make faults`` (tools/faults, issue 37) stays valid as the code changes.

Every fault is anchored on an exact snippet inside one named function; a refactor that removes
or duplicates the snippet would make ``make faults`` report the fault stale.  These checks run
with the suite, so such a refactor fails here first, naming the fault and the function.
"""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from faults.anchor import StaleFault, function_span, locate, mutated_text, split_target  # noqa: E402
from faults.catalogue import AREAS, FAULTS  # noqa: E402

#: The issue's list of mistakes, each with the fault that plants it.
ISSUE_FAULTS = {
    "φ vs φ*": "rnea_inward_phi_star",
    "crm vs crf": "gyroscopic_b_crm",
    "P vs P⁺": "riccati_P_not_P_plus",
    "dropped Coriolis a(k)": "coriolis_a_dropped",
    "dropped gyroscopic b(k)": "gyroscopic_b_dropped",
    "τ̄ = I − GH skipped": "tau_bar_skipped",
    "wrong parent": "rnea_chain_parent",
    "wrong topological order": "riccati_label_order",
    "angular/linear halves swapped": "crm_lower_block_misplaced",
    "gravity sign": "gravity_sign",
    "off-by-one in the dof layout": "crba_subtree_off_by_one",
    "multi-axis H transposed": "multi_axis_H_transposed",
    "Schur term C − B*A⁻¹B missing": "fijany_schur_term_missing",
    "elastic stiffness dropped": "flex_stiffness_dropped",
    "closure Jacobian at the wrong body": "closure_jacobian_wrong_body",
    "ν vs θ̇ confused": "quasi_nu_is_qd",
}


def test_catalogue_size_names_and_areas():
    names = [f.name for f in FAULTS]
    assert len(FAULTS) >= 25, f"the catalogue has {len(FAULTS)} faults; issue 37 asks for at least 25"
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"fault names must be unique: {dup}"
    missing = sorted(set(AREAS) - {f.area for f in FAULTS})
    assert not missing, f"areas without a fault: {missing}"
    unknown = sorted({f.area for f in FAULTS} - set(AREAS))
    assert not unknown, f"faults in areas not listed in AREAS: {unknown}"
    absent = {k: v for k, v in ISSUE_FAULTS.items() if v not in names}
    assert not absent, f"mistakes of the issue without their fault: {absent}"


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_fault_anchor_is_found_exactly_once(fault):
    module, qualname = split_target(fault.target)
    assert module.split(".")[0] == "opalg", f"{fault.name}: faults are planted in the package only"
    # The function exists (found by its qualified name with ast, without importing the module:
    # sympy alone would cost seconds) and holds the snippet exactly once; else StaleFault.
    path, text, at = locate(ROOT, fault.target, fault.old)
    assert text[at:at + len(fault.old)] == fault.old
    assert fault.old != fault.new
    _, _, out = mutated_text(ROOT, fault.target, fault.old, fault.new)   # the faulty source still parses
    assert out != text
    for t in fault.tests:
        assert (ROOT / t.split("::")[0]).is_file(), f"{fault.name}: test file {t} does not exist"
    assert fault.tests, f"{fault.name}: no test file selected"
    assert fault.meaning and fault.identity, f"{fault.name}: say what it means and which identity exposes it"


def test_anchor_refuses_missing_duplicate_and_moved_snippets(tmp_path):
    src = ("def outer(x):\n    y = x + 1\n    def inner(z):\n        return z + 1\n    return inner(y)\n\n"
           "class A:\n    def m(self, x):\n        return x + 1\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text(src)
    # Found inside the named function only: the same text elsewhere in the file does not count.
    _, _, at = locate(tmp_path, "pkg.mod:outer.inner", "z + 1")
    assert src[at:at + 5] == "z + 1"
    _, _, out = mutated_text(tmp_path, "pkg.mod:A.m", "x + 1", "x - 1")
    assert "return x - 1" in out and "y = x + 1" in out
    with pytest.raises(StaleFault, match="occurs 0 times"):
        locate(tmp_path, "pkg.mod:A.m", "z + 1")
    with pytest.raises(StaleFault, match="occurs 2 times"):
        locate(tmp_path, "pkg.mod:outer", " + 1")
    with pytest.raises(StaleFault, match="no function"):
        locate(tmp_path, "pkg.mod:missing", "x")
    with pytest.raises(StaleFault, match="does not parse"):
        mutated_text(tmp_path, "pkg.mod:A.m", "return x + 1", "return (x +")
    span = function_span(src, "A.m")
    assert ast.parse(src[span.start:span.stop].replace("\n        ", "\n    "))
