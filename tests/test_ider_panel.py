"""The pure functions behind the Ider widget panel, and its callbacks driven from code."""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import ider
from opalg.ider.panel import CHOICES, CUSTOM, IderPanel, evaluate, parse_directions

PAPER_A = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


@pytest.mark.parametrize("text", ["0 1 0; 0 0 1", "0,1,0;0,0,1", "[[0, 1, 0], [0, 0, 1]]",
                                  "  0  1  0 ;\n 0 0 1 "])
def test_parse_directions_accepts_the_documented_forms(text):
    """parse_directions reads 'a b c; d e f', commas, and a nested-list literal."""
    np.testing.assert_array_equal(parse_directions(text), PAPER_A)


@pytest.mark.parametrize("text, match", [
    ("garbage", r"A must be numbers"),
    ("0 1 0", r"A must have 2 rows of 3 numbers \(got shape \(1, 3\)"),
    ("0 1; 0 0", r"got shape \(2, 2\)"),
    ("0 1 0; 0 0", r"A must be numbers|2 rows of 3"),
    ("0 1 nan; 0 0 1", r"non-finite"),
    ("", r"2 rows of 3 numbers"),
])
def test_parse_directions_rejects_bad_text_with_a_message(text, match):
    """Bad custom text is a ValueError saying what is wrong."""
    with pytest.raises(ValueError, match=match):
        parse_directions(text)


def test_evaluate_matches_simulate_for_presets_and_custom():
    """evaluate(choice) runs the same simulation as ider.simulate (looser panel tolerance: 1e-6 rad)."""
    for choice, A in (("no motor at joint 1", PAPER_A), (CUSTOM, PAPER_A), ("conventional", None)):
        out = evaluate(choice, "0 1 0; 0 0 1", t_end=0.5, n_points=11)
        ref = ider.simulate(A, t_span=(0.0, 0.5), t_eval=np.linspace(0.0, 0.5, 11))
        assert out.feasible and out.verdict.startswith("feasible: the tip follows the path for 0.5 s")
        # rtol 1e-9 in the panel vs 1e-12 here: the states agree to ~1e-9 relative.
        assert np.abs(out.result.q - ref.q).max() <= 1e-6


def test_evaluate_reports_infeasible_presets_with_the_stop_time():
    """'no motor at joint 2/3' give an infeasible verdict naming the stop time of the run."""
    for choice in ("no motor at joint 2", "no motor at joint 3"):
        out = evaluate(choice)
        assert not out.feasible and (out.result.status, out.result.event) == ("event", "singular")
        assert out.verdict.startswith(f"infeasible: stopped at t = {out.result.t_stop:.4f} s")
        # The panel skips the ~1 s refinement of the singular time (its budget is ~0.3 s a run).
        assert out.result.t_singular is None


def test_evaluate_singular_at_start_and_bad_choice():
    """A singular-at-t=0 custom A gives an 'infeasible at t = 0' verdict; an unknown choice raises."""
    # A whose rows are M⁻¹-orthogonal to the tip constraint normals at θ0 (S = B M⁻¹ Aᵀ = 0).
    M = opalg.crba(ider.arm(), ider.THETA0)
    B = ider.tip_jacobian(ider.THETA0)
    from scipy.linalg import null_space

    N = null_space(B)  # 3 x 1: B N = 0, so rows (M N)ᵀ make S singular
    bad = np.vstack([(M @ N)[:, 0], PAPER_A[1]])
    text = "; ".join(" ".join(f"{x:.17g}" for x in row) for row in bad)
    out = evaluate(CUSTOM, text, t_end=0.2)
    assert not out.feasible and out.result is None
    assert out.verdict.startswith("infeasible: ") and "at t = 0" in out.verdict
    with pytest.raises(ValueError, match=r"unknown choice 'nope'"):
        evaluate("nope")


def test_enter_runs_the_text_as_custom_a_whatever_the_choice():
    """Typing runs nothing; Enter in the custom-A box (``enter()``, what the front end's submit
    message calls) chooses "custom A" and runs the text, from a preset too, text changed or not;
    the Apply button right after it runs nothing more."""
    panel = IderPanel()
    assert panel.preset.value == "no motor at joint 1" and panel.runs == 1
    panel.custom.value = "0 1 0; 0 0 1 "                 # typed while a preset is chosen
    assert panel.preset.value == "no motor at joint 1" and panel.runs == 1
    panel.enter()
    assert panel.preset.value == CUSTOM and panel.runs == 2
    assert panel.verdict.value.startswith("feasible:")
    panel.apply.click()
    assert panel.runs == 2                               # the same choice is not rerun
    panel.preset.value = "no motor at joint 2"
    panel.enter()                                        # the text unchanged: still runs it
    assert panel.preset.value == CUSTOM and panel.runs == 4
    panel.preset.value = "no motor at joint 3"
    panel.custom.value = "garbage"
    panel.enter()                                        # custom A with bad text: the message
    assert panel.preset.value == CUSTOM and panel.verdict.value.startswith("<b>input error:</b>")
    assert panel.last.verdict.startswith("infeasible: stopped")   # joint 3's run stays on show
    runs = panel.runs
    panel.reset()                                        # sets the text too, then runs once
    assert panel.preset.value == "no motor at joint 1" and panel.runs == runs + 1


def test_panel_callbacks_keep_the_last_good_state():
    """Driving the widgets from code: presets update the verdict, bad text keeps the last result."""
    panel = IderPanel()
    assert panel.last.feasible and panel.preset.value == "no motor at joint 1"
    assert sorted(panel.preset.options) == sorted(CHOICES)
    panel.duration.value = 0.5
    panel.preset.value = "no motor at joint 3"
    assert panel.verdict.value.startswith("infeasible: stopped at t = ")
    panel.preset.value = CUSTOM  # evaluates the text already in the box
    good = panel.last
    panel.custom.value = "garbage"
    panel.enter()
    assert panel.verdict.value.startswith("<b>input error:</b> A must be numbers")
    assert panel.last is good
    panel.custom.value = "1 1 1; 1 1 1"  # readable but rank-deficient: an infeasible verdict
    panel.enter()
    assert panel.verdict.value.startswith("infeasible: ") and "rank deficient" in panel.verdict.value
    panel.custom.value = "0 1 0; 0 0 1 "  # a new value (trailing space) with the paper's A
    panel.enter()
    assert panel.last is not good and panel.last.feasible
    assert panel.verdict.value.startswith("feasible: the tip follows the path for 0.5 s")
