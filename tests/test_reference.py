"""docs/REFERENCE.md: every citation in the repository resolves, and its new entries hold numerically.

Part 1 reads the repository as text:

* (a) every identity id cited in opalg/, tests/, notebooks/ (code and markdown cells), README.md,
  CONTRIBUTING.md, benchmarks/, tools/ and docs/ is a heading of docs/REFERENCE.md;
* (b) no file cites the notes outside the repository that the reference replaces;
* (c) every "§N" and "pitfall N" resolves to a section heading or to item N of the pitfall list.

Part 2 checks the entries of docs/REFERENCE.md that no other test covers (C6, C7, C9, E11, E12,
K2) against opalg, with independent routes (dense operators, complex step, 50-digit arithmetic).
"""

from __future__ import annotations

import json
import pathlib
import re

import mpmath
import numpy as np
import pytest

import opalg
from opalg.model.builders import random_inertia, random_rotation
from opalg.model.kinematics import joint_transform
from opalg.model.multibody import Inertia, Joint, Model
from opalg.spatial.vectors import crm, phi_free, skew

from helpers import EPS, Tol, assert_close, cond_tol, measured

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "REFERENCE.md"
THIS = pathlib.Path(__file__).resolve()

# ===========================================================================
# Part 1: citations
# ===========================================================================

#: Where citations are looked for (directories are searched recursively).
CITING = ["opalg", "tests", "notebooks", "benchmarks", "tools", "docs", "README.md", "CONTRIBUTING.md"]
TEXT_SUFFIXES = {".py", ".md", ".ipynb", ".cfg", ".sh", ".txt", ".toml", ".yml", ".yaml", ".json"}
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints"}

#: An identity id: a family letter A–K, a number, an optional lowercase variant letter (E6, E9c,
#: F4t).  It must stand as a word: not inside an identifier (H1_1, self.I6), not glued to a
#: quote (matplotlib colours "C0", "C3o"), not a call (Tz(H1) has H1 as the argument, which is
#: fine, but "E6(" is no citation).  Leading zeros (H01) never match.
ID_TOKEN = re.compile(r"(?<![\w.'\"\\])([A-K](?:[1-9][0-9]?|0)[a-z]?)(?![\w'\"(])")
#: A range of ids of one family, "A1-A7", "E2–E9": every id in between is cited.
ID_RANGE = re.compile(r"(?<![\w.'\"\\])([A-K])([1-9][0-9]?)\s*[-–]\s*\1([1-9][0-9]?)(?![\w'\"(])")

#: Tokens that look like ids but are not citations.  Each is checked not to be an id of
#: docs/REFERENCE.md (so that the list can never hide a real citation of a documented id).
NON_IDS = {
    "A0": "a test matrix in tests/test_constrained.py",
    "B0": "the root body of Huang, Huang & Zhu (1998), opalg.symbolic",
    "B5": "a body label of the deployment example, opalg.symbolic.examples",
    "C0": "a matplotlib colour and box label, opalg.symbolic.__main__",
    "F0": "a generalized-force vector in tests/test_oracle_kane.py",
    "G0": "the root's direction cosine matrix, opalg.symbolic",
    "K0": "the kinetic energy at the start of a run, notebook 08's work-energy check",
    "H13": "an Euler-angle coordinate (hinge 1, angle 3), notebook 09",
    "I6": "the 6n x 6n identity matrix, tests/helpers.py and notebook 05",
}

#: Ids that docs/REFERENCE.md must document (the identities of the package and the planned ones).
REQUIRED = (
    [f"A{i}" for i in range(1, 8)] + [f"B{i}" for i in range(1, 5)]
    + [f"C{i}" for i in range(1, 10)] + ["C1a", "C1b", "C2b"]
    + [f"D{i}" for i in range(1, 5)]
    + [f"E{i}" for i in range(1, 13)]
    + ["E2a", "E2b", "E2c", "E2d", "E4d", "E5b", "E7b", "E7c", "E9c", "E9d",
       "E10a", "E10b", "E10c", "E10d"]
    + [f"F{i}" for i in range(1, 7)] + ["F4a", "F4b", "F4t"]
    + ["G1", "G2", "H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9", "H10", "I0", "I1", "I2", "I3", "I4", "I5", "J1", "J2", "J3", "J4", "J5", "J6", "J7", "J8", "K1", "K2", "K8a", "K11", "K12", "K13"]
)
#: Entries of the second half: documented, but not implemented in opalg yet.
PLANNED: list = []

#: Citations of notes that live outside the repository (the notes the reference was written from,
#: and the others beside them).  The names are assembled from parts so that this file does not
#: itself cite them.
_OUT = "sha" + "red"
_NOTES = ("SOA_" + "REFERENCE", "SECOND_" + "HALF")
FORBIDDEN = re.compile("|".join(_NOTES) + rf"|\.\./{_OUT}|/work/{_OUT}|(?<![\w.-]){_OUT}/\w+\.md")


def _reference() -> str:
    return REFERENCE.read_text(encoding="utf-8")


def _headings(text: str) -> list[tuple[int, str]]:
    """(level, title) of every Markdown heading outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"(#{1,6})\s+(.*\S)", line)
        if m and not fenced:
            out.append((len(m.group(1)), m.group(2)))
    return out


def _id_headings(text: str) -> list[str]:
    """Ids that head an entry: '### E6 — innovations factorization' gives 'E6'."""
    return [m.group(1) for lvl, t in _headings(text) if lvl >= 3
            for m in [re.match(r"([A-K](?:[1-9][0-9]?|0)[a-z]?)\s+—\s+\S", t)] if m]


def _sections(text: str) -> dict[int, str]:
    """Section number -> body text of every '## N. Title' section."""
    parts = re.split(r"^## (\d+)\. .*$", text, flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def _pitfalls(text: str) -> list[int]:
    """Numbers of the items of the pitfall list (§14), in order."""
    sec = next(body for num, body in _sections(text).items()
               if re.search(rf"^## {num}\. Pitfalls", text, re.M))
    return [int(n) for n in re.findall(r"^(\d+)\. \*\*", sec, re.M)]


def _files(entries=CITING):
    for entry in entries:
        path = ROOT / entry
        paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in paths:
            if SKIP_PARTS & set(p.parts) or p.suffix not in TEXT_SUFFIXES or p.resolve() == THIS:
                continue
            yield p


def _citing_texts():
    """(where, text) for every source text that may cite the reference.

    Notebooks contribute the source of every cell (code and markdown), not their outputs.
    """
    for p in _files():
        rel = p.relative_to(ROOT)
        if p.suffix == ".ipynb":
            for i, cell in enumerate(json.loads(p.read_text(encoding="utf-8"))["cells"]):
                yield f"{rel} cell {i} ({cell['cell_type']})", "".join(cell["source"])
        else:
            yield str(rel), p.read_text(encoding="utf-8")


def cited_ids(text: str) -> set[str]:
    """Identity ids cited in ``text``, ranges expanded, allow-listed non-ids removed."""
    ids = {m.group(1) for m in ID_TOKEN.finditer(text)}
    for m in ID_RANGE.finditer(text):
        lo, hi = int(m.group(2)), int(m.group(3))
        if lo < hi <= lo + 20:
            ids |= {f"{m.group(1)}{i}" for i in range(lo, hi + 1)}
    return ids - set(NON_IDS)


#: "§7", "§5–6", "§9–§13"; not "§1.3" (sections of the papers that opalg.symbolic follows).
SECTION = re.compile(r"§\s?(\d+)(?![.,]?\d)(?:\s*[-–]\s*§?(\d+)(?![.,]?\d))?")
#: "docs/REFERENCE.md sections 3-8", "`docs/REFERENCE.md` (sections 7–8)".
REF_SECTIONS = re.compile(r"REFERENCE(?:\.md)?`?\s*\(?sections?\s+(\d+)(?:\s*[-–]\s*(\d+))?")
#: "pitfall 3", "Pitfall 14", "pitfall14" (a test name).
PITFALL = re.compile(r"[Pp]itfall\s?(\d+)")


def cited_sections(text: str) -> set[int]:
    out = set()
    for rx in (SECTION, REF_SECTIONS):
        for m in rx.finditer(text):
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            out |= set(range(lo, hi + 1))
    return out


def test_citation_patterns_recognise_citations_and_nothing_else():
    """The scanners on a sample of real citation forms and of look-alikes from this repository."""
    cites = ('(E6) [E7b, derived] E9c/E9d: "E3: tau^2 = tau" **A3** id E2a, (SOA ids A1-A7, '
             'E2–E9) `ops.L` (E6, E7) \\text{(F4a)} C2 / pitfall 14')
    assert cited_ids(cites) == {"E6", "E7b", "E9c", "E9d", "E3", "A3", "E2a", "A1", "A2", "A3",
                                "A4", "A5", "A6", "A7", "E2", "E4", "E5", "E6", "E7", "E8", "E9",
                                "E7", "F4a", "C2"}
    look_alikes = ('ax.plot(x, "C3o") color="C0" self.I6 = np.eye(6) "H1_1": Tz(H01) x.E6 '
                   'labels = {"H2_1": "inner panel H21"} fn_E6(1) H01, H02')
    assert cited_ids(look_alikes) == set()
    assert cited_ids("G0 = Tz(H01); the outer panel B5; I6 = eye") == set()   # allow-listed
    assert cited_sections("(SOA §5, [C2]) §7–8 §1 Huang §1.3–1.7 (paper §1.5) §9–§13.") \
        == {5, 7, 8, 1, 9, 10, 11, 12, 13}
    assert cited_sections(f"{_NOTES[0]} sections 3-8; `docs/REFERENCE.md` (sections 7–8)") \
        == {3, 4, 5, 6, 7, 8}
    assert [int(n) for n in PITFALL.findall("(pitfall 3) ## 5. Pitfall 14 test_C2_pitfall14")] \
        == [3, 14, 14]
    outside = (f"(see ``{_OUT}/NOTEBOOKS.md``) `../{_OUT}/{_NOTES[0]}.md` {_NOTES[1]}.md "
               f"/work/{_OUT}/x")
    assert len(FORBIDDEN.findall(outside)) == 5
    assert not FORBIDDEN.search(f"docs/REFERENCE.md; the {_OUT}/ folder; np.shares_memory; {_OUT}_dir/a.md")


def test_reference_documents_every_required_id_once():
    """Each id of the package (and of the planned second half) heads exactly one entry."""
    ids = _id_headings(_reference())
    missing = [i for i in REQUIRED if i not in ids]
    assert not missing, f"docs/REFERENCE.md lacks entries for {missing}"
    lowered = [i.lower() for i in ids]   # Markdown anchors are lower case: F4t and F4T would clash
    dup = sorted({i for i in ids if lowered.count(i.lower()) > 1})
    assert not dup, f"ids with more than one heading: {dup}"
    assert not set(NON_IDS) & set(ids), "an allow-listed non-id is also a documented id"


def _entries(text: str) -> dict[str, str]:
    """Id -> text of its entry, up to the next heading of the same or a higher level."""
    lines, out = text.splitlines(), {}
    heads = [(i, len(m.group(1)), m.group(2)) for i, line in enumerate(lines)
             for m in [re.match(r"(#{2,6})\s+([A-K](?:[1-9][0-9]?|0)[a-z]?)\s+—", line)] if m]
    for i, level, ident in heads:
        end = next((j for j in range(i + 1, len(lines))
                    if (m := re.match(r"(#{1,6})\s", lines[j])) and len(m.group(1)) <= level), len(lines))
        out[ident] = "\n".join(lines[i:end])
    return out


def test_every_entry_has_a_statement_and_a_status():
    """Every ### entry states its formula (a text block or a table) and a status and how it was
    checked; the planned ones say that opalg does not implement them yet."""
    entries = _entries(_reference())
    for ident, body in entries.items():
        if not re.match(r"###\s", body):
            continue                      # #### variants sit inside an entry that has both
        assert "```text" in body or "\n|" in body, f"{ident}: no statement block"
        assert "**Status" in body, f"{ident}: no status"
        assert "**Checked by" in body or "Checked by" in body, f"{ident}: does not say how it was checked"
    for ident in PLANNED:
        assert "Not yet implemented in opalg" in entries[ident], f"{ident}: not marked as planned"


def test_sources_cited_in_entries_are_listed():
    """Every source key [XYZ] used in the text has a bibliographic entry in the Sources section."""
    text = _reference()
    sections = _sections(text)
    last = max(sections)
    assert re.search(rf"^## {last}\. Sources$", text, re.M), "Sources is not the last section"
    listed = set(re.findall(r"\*\*\[([A-Z][A-Za-z0-9]*)\]\*\*", sections[last]))
    body = "".join(sections[n] for n in sections if n != last)
    key = r"[A-Z][A-Za-z]*[A-Z0-9][a-z0-9]*|[A-Z][a-z]+[0-9]+[a-z]?"   # RK92, SV2, JBook, Jain11a
    used = set()
    for group in re.findall(r"\[([^\[\]]+)\]", body):
        # "[RK92]", "[SB: Simbody's ...]", "[Fij94; FF13]", "[GVL for ...]": a key opens each
        # ';'-separated part of the bracket
        for part in group.split(";"):
            m = re.match(rf"\s*({key})(?=[:,\s]|$)", part)
            used |= {m.group(1)} if m else set()
    used -= set(_id_headings(text))       # "[E7b, derived]"-style id references are not sources
    assert used, "no source keys found: the pattern is broken"
    assert not used - listed, f"source keys without an entry in Sources: {sorted(used - listed)}"
    assert not listed - used, f"Sources entries that no entry cites: {sorted(listed - used)}"
    assert not re.search(r"https?://|www\.", text), "Sources are bibliographic entries, not URLs"


def test_every_cited_identity_id_is_a_heading():
    """(a) Ids cited anywhere in the repository exist as headings of docs/REFERENCE.md."""
    documented = set(_id_headings(_reference()))
    missing = {}
    for where, text in _citing_texts():
        for ident in cited_ids(text) - documented:
            missing.setdefault(ident, where)
    assert not missing, "ids cited but not documented in docs/REFERENCE.md: " + ", ".join(
        f"{i} (first in {w})" for i, w in sorted(missing.items()))


def test_no_citation_points_outside_the_repository():
    """(b) The notes that docs/REFERENCE.md replaces live outside the repository: cite none."""
    offenders = []
    for p in [*_files(), THIS]:     # this file too: it spells the names only in parts
        text = p.read_text(encoding="utf-8", errors="replace")
        offenders += [f"{p.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
                      for m in FORBIDDEN.finditer(text)]
    assert not offenders, (f"{len(offenders)} citations point outside the repository "
                           "(cite docs/REFERENCE.md instead):\n" + "\n".join(offenders))


def test_reference_file_is_cited_by_its_repository_path():
    """A mention of REFERENCE.md names its path docs/REFERENCE.md, so that the citation resolves."""
    bad = []
    for where, text in _citing_texts():
        bad += [f"{where}: ...{text[max(0, m.start() - 20):m.end()]}"
                for m in re.finditer(r"REFERENCE\.md", text)
                if not text[:m.start()].endswith("docs/") and not where.startswith("docs")]
    assert not bad, "\n".join(bad)


def test_every_cited_section_and_pitfall_resolves():
    """(c) "§N" and "pitfall N" name a '## N.' section and item N of the pitfall list."""
    text = _reference()
    sections, pitfalls = set(_sections(text)), _pitfalls(text)
    assert pitfalls == list(range(1, len(pitfalls) + 1)) and len(pitfalls) >= 14, \
        f"pitfalls must be numbered 1, 2, ... without gaps (and keep items 1-14), got {pitfalls}"
    assert sorted(sections) == list(range(1, max(sections) + 1)), f"section numbers {sorted(sections)}"
    bad = []
    for where, body in _citing_texts():
        bad += [f"{where}: §{n}" for n in sorted(cited_sections(body) - sections)]
        bad += [f"{where}: pitfall {n}" for n in sorted({int(n) for n in PITFALL.findall(body)})
                if n not in pitfalls]
    assert not bad, "citations that docs/REFERENCE.md does not resolve:\n" + "\n".join(bad)


# ===========================================================================
# Part 2: the entries that no other test checks
# ===========================================================================
#
# Tolerances: a route through a solve or an inverse is bounded by k·cond·ε with cond computed in
# the test; products and complex-step derivatives (h ≤ 1e-30: exact to rounding) by bounds
# measured over random models and states (throwaway scripts in /tmp, not committed: these tests at
# OVER) under three OpenBLAS/numpy kernels (default; Sandybridge and Prescott with numpy's AVX2
# dispatch off), each with >= 10x margin; the k of the cond-based bounds were measured the same way.
OVER = "200 random seeds of each test (models, states, rotations, inertias) under 3 kernels"
#: Dense operator products, frame changes and O(n) recursions of 6–7 bodies (C6, C7, C9): no solve.
TOL_PRODUCT = measured(1e-12, 8.9e-15, OVER)
#: k of k·cond(ℳ)·ε for aba against crba/bias (C7, C9; the worst, 2.0, is C9's residual).
K_ABA = measured(100, 2.0, "err/(cond(ℳ)·ε), " + OVER)
#: D(k) = S*PS from the factors vs formed densely (E11): a product.
TOL_D = measured(1e-12, 2.0e-16, OVER)
#: k of k·cond(D(k))·ε for D⁻¹, G, τ̄, P⁺ and the pivots from the one-axis-at-a-time factors against
#: the block forms with a dense inverse of D(k) (E11); the worst, 4.5, is P⁺.
K_PIVOT = measured(100, 4.5, "err/(cond(D(k))·ε), " + OVER)
#: P⁺ from the sequential downdate against 50-digit arithmetic near gimbal lock (E11), for the
#: test's body: accurate to rounding whatever cond(D), so the bound does not grow with cond.
#: Measured over random states near its lock (q₀, q₂ uniform, δ = 10^U(−6, −3)).  Not a property of
#: every inertia: for about 3 in 10 random_inertia draws the downdate's P⁺ error is ≈ 0.085
#: cond(D)·ε, like the block form's (seen over 200 draws; the tiny pivot d₀ carries it).
TOL_DOWNDATE = measured(1e-12, 2.8e-16, "200 random states near this body's gimbal lock under 3 kernels")
#: k of k·κ·ε for D_ii/s_i after a change of units (E12), κ the largest condition number of a
#: unit-diagonal-scaled D(j) over the joints (unit-free, as the criteria are): rescaling is not exact
#: in binary, and P(k) carries the children's Schur complements, accurate to κ·ε.  Worst 7.2 (an
#: absolute 1e-12 was exceeded: 2.5e-11 at κ ≈ 4e3, default kernel).
K_UNITS = measured(100, 7.2, "err/(κ·ε), " + OVER)
#: The pivot ratios d_i/D_ii after a change of units, absolute (they lie in (0, 1]).
TOL_PIVOT_RATIO = measured(1e-12, 2.4e-15, OVER)
#: Complex-step derivatives of axis sequences and the joint transforms (K2): 12,000 random sequences.
TOL_K2 = measured(1e-12, 1.8e-15, OVER)


def rel(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b))
                 / max(np.linalg.norm(a), np.linalg.norm(b), 1e-300))


@pytest.mark.verifies("C6", route="frame-free operator form (world axes, dense φ) vs body-frame rnea")
@pytest.mark.parametrize("seed", [0, 3])
def test_C6_frame_free_rnea_equals_body_frame_rnea(seed):
    """C6: world axes, φ = lever arms, RJK's a and b (with the H*_lin term) give rnea's T, while
    the accelerations differ from the body-frame ones."""
    m = opalg.random_model(6, "tree", seed=seed, joints="single")
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.normal(size=(3, m.ndof))
    ops = opalg.operators(m, q, qd, gravity=False)
    Rs, ps = opalg.body_poses(m, q)
    Qk = [np.kron(np.eye(2), R) for R in Rs]
    Vb = ops.V.reshape(m.n, 6)
    V = [Qk[k] @ Vb[k] for k in range(m.n)]
    S = [Qk[k] @ ops.kin.S[k] for k in range(m.n)]
    M = [Qk[k] @ m.I_spatial[k] @ Qk[k].T for k in range(m.n)]
    n = m.n
    E = np.zeros((6 * n, 6 * n))
    a, b = np.zeros(6 * n), np.zeros(6 * n)
    for k in range(n):
        p = m.parents[k]
        if p != -1:
            E[6 * p:6 * p + 6, 6 * k:6 * k + 6] = phi_free(ps[k] - ps[p])
        w, v = V[k][:3], V[k][3:]
        wp, vp = (np.zeros(3), np.zeros(3)) if p == -1 else (V[p][:3], V[p][3:])
        H_lin = S[k][3:] @ qd[m.dof_slice[k]]
        a[6 * k:6 * k + 6] = np.r_[np.cross(wp, w), np.cross(wp, v - vp + H_lin)]
        mass = M[k][5, 5]
        mp = M[k][:3, 3:] / mass                      # p~ (top-right block is m p~)
        pc = np.array([mp[2, 1], mp[0, 2], mp[1, 0]])
        assert_close(skew(pc), mp, TOL_PRODUCT, "C6: top-right block of M is m p~")
        b[6 * k:6 * k + 6] = np.r_[np.cross(w, M[k][:3, :3] @ w), mass * np.cross(w, np.cross(w, pc))]
    phi = np.linalg.inv(np.eye(6 * n) - E)
    H = np.zeros((m.ndof, 6 * n))
    for k in range(n):
        H[m.dof_slice[k], 6 * k:6 * k + 6] = S[k].T
    Mb = np.zeros((6 * n, 6 * n))
    for k in range(n):
        Mb[6 * k:6 * k + 6, 6 * k:6 * k + 6] = M[k]
    assert_close(phi.T @ H.T @ qd, np.concatenate(V), TOL_PRODUCT, "C6: V = phi* H* qd in world axes")
    alpha = phi.T @ (H.T @ qdd + a)
    T = H @ phi @ (Mb @ alpha + b)
    assert_close(T, opalg.rnea(m, q, qd, qdd, gravity=False), TOL_PRODUCT, "C6: frame-free T = rnea")
    alpha_body = (ops.phi.T @ (ops.H.T @ qdd + ops.a)).reshape(n, 6)
    alpha_world_of_body = np.concatenate([Qk[k] @ alpha_body[k] for k in range(n)])
    assert rel(alpha, alpha_world_of_body) > 1e-3, "C6: the two conventions have different α"


def _rotated_body_frames(m: Model, rng) -> tuple[Model, list]:
    """The same mechanism with every body frame turned by a constant rotation R_c(k) (columns:
    new axes in old body coordinates): joint axes R_cᵀ a, placement (R_c(℘)ᵀ R_T R_c(k),
    R_c(℘)ᵀ r_T), mass centre R_cᵀ c, inertia R_cᵀ J R_c."""
    Rc = [random_rotation(rng) for _ in range(m.n)]
    joints, places, inert = [], [], []
    for k in range(m.n):
        j, p = m.joints[k], m.parents[k]
        joints.append(Joint(list(j.kinds), (Rc[k].T @ np.asarray(j.axes).T).T, j.name))
        R_T, r_T = m.placements[k]
        Rp = np.eye(3) if p == -1 else Rc[p]
        places.append((Rp.T @ R_T @ Rc[k], Rp.T @ r_T))
        i = m.inertias[k]
        inert.append(Inertia(i.mass, Rc[k].T @ np.asarray(i.com), Rc[k].T @ np.asarray(i.I_com) @ Rc[k]))
    return Model(m.parents, joints, places, inert, m.gravity), Rc


@pytest.mark.verifies("C7", route="crba, bias, aba and V of a model with rotated body frames vs the original's")
def test_C7_mass_matrix_invariant_under_body_frame_rotations():
    """C7: re-expressing every body in a rotated frame changes V(k) by the rotation and leaves ℳ,
    the bias and the ABA unchanged."""
    rng = np.random.default_rng(7)
    m = opalg.random_model(7, "tree", seed=2)
    m2, Rc = _rotated_body_frames(m, rng)
    q, qd, tau = rng.normal(size=(3, m.ndof))
    M = opalg.crba(m, q)
    assert_close(opalg.crba(m2, q), M, TOL_PRODUCT, "C7: mass matrix")
    assert_close(opalg.bias(m2, q, qd), opalg.bias(m, q, qd), TOL_PRODUCT, "C7: bias")
    assert_close(opalg.aba(m2, q, qd, tau), opalg.aba(m, q, qd, tau), cond_tol(np.linalg.cond(M), K_ABA), "C7: aba")
    V, V2 = (opalg.operators(x, q, qd).V.reshape(m.n, 6) for x in (m, m2))
    for k in range(m.n):
        assert_close(V2[k], np.kron(np.eye(2), Rc[k].T) @ V[k], TOL_PRODUCT, f"C7: V({k}) rotated")
    assert rel(V2, V) > 1e-2, "C7: the frames really changed"


@pytest.mark.verifies("C9", route="operator form with b − f_ext and Σ J_k* f_ext vs rnea and aba with f_ext")
@pytest.mark.parametrize("seed", [1, 4])
def test_C9_external_forces(seed):
    """C9: b → b − f_ext in the operator form equals rnea − Σ J_k* f_ext(k), and ℳθ̈ + C = T + ΣJ*f."""
    m = opalg.random_model(7, "tree", seed=seed)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.normal(size=(3, m.ndof))
    f_ext = rng.normal(size=(m.n, 6))
    ops = opalg.operators(m, q, qd)
    phi, H, M = ops.phi.dense(), ops.H.dense(), ops.M.dense()
    T_ext = H @ phi @ (M @ phi.T @ (H.T @ qdd + ops.a) + ops.b - f_ext.reshape(-1))
    J = [opalg.frame_jacobian(m, q, (k, [0.0, 0.0, 0.0])) for k in range(m.n)]
    JtF = sum(J[k].T @ f_ext[k] for k in range(m.n))
    assert_close(H @ phi @ f_ext.reshape(-1), JtF, TOL_PRODUCT, "C9: H phi f_ext = sum J_k* f_ext(k)")
    assert_close(T_ext, opalg.rnea(m, q, qd, qdd) - JtF, TOL_PRODUCT, "C9: rnea with f_ext")
    # forward dynamics: the acceleration produced by T under f_ext solves ℳθ̈ + C = T + ΣJ*f
    T = rng.normal(size=m.ndof)
    qdd_ext = opalg.aba(m, q, qd, T + JtF)
    M = opalg.crba(m, q)
    assert_close(M @ qdd_ext + opalg.bias(m, q, qd), T + JtF, cond_tol(np.linalg.cond(M), K_ABA), "C9: forward")


def _model_with_multi_axis_joints(rng) -> Model:
    parents = [-1, 0, 1, 1, 3]
    joints = [Joint("R", [0, 0, 1.0]), Joint.spherical(), Joint("P", [1.0, 0, 0]),
              Joint(("R", "P", "R"), np.array([[0, 1.0, 0], [0, 0, 1.0], [1.0, 0, 0]])),
              Joint("R", [0, 1.0, 0])]
    places = [(random_rotation(rng), rng.uniform(-0.5, 0.5, 3)) for _ in parents]
    return Model(parents, joints, places, [random_inertia(rng) for _ in parents])


@pytest.mark.verifies("E11", route="one-axis-at-a-time factors of articulated vs the block forms with a dense "
                                   "inverse of D(k), and vs the LDL* pivots of D(k)")
def test_E11_sequential_pivot_equals_block_forms():
    """E11: the one-axis-at-a-time factors of `articulated` reproduce the block quantities
    D = S*PS, G = PSD⁻¹, τ̄ = I − GH, P⁺ = P − PSD⁻¹S*P (formed here with a dense inverse of D),
    and the pivots are those of the LDL* of D in reverse axis order."""
    rng = np.random.default_rng(3)
    m = _model_with_multi_axis_joints(rng)
    for _ in range(2):
        q, qd, T = rng.normal(size=(3, m.ndof))
        art = opalg.articulated(m, q)
        for k in range(m.n):
            S, P = art.kin.S[k], art.P[k]
            D = S.T @ P @ S
            Dinv = np.linalg.inv(D)
            tol = cond_tol(np.linalg.cond(D), K_PIVOT, "D(k)")
            assert_close(art.D[k], D, TOL_D, f"E11: D({k})")
            assert_close(art.Dinv[k], Dinv, tol, f"E11: D^-1({k}) from the pivots")
            assert_close(art.G[k], P @ S @ Dinv, tol, f"E11: G({k})")
            assert_close(art.tau_bar[k], np.eye(6) - P @ S @ Dinv @ S.T, tol, f"E11: tau_bar({k})")
            assert_close(art.P_plus[k], P - P @ S @ Dinv @ S.T @ P, tol, f"E11: P+({k})")
            # LDL* of D eliminating the last axis first: the Schur-complement pivots
            nk, piv, A = S.shape[1], [], D.copy()
            for i in reversed(range(nk)):
                piv.insert(0, A[i, i])
                A = A - np.outer(A[:, i], A[i, :]) / A[i, i]
            assert_close(np.array([d[0, 0] for d in art.d[k]]), np.array(piv), tol,
                         f"E11: pivots d_i({k}) = LDL* pivots of D")


@pytest.mark.verifies("E11", route="sequential downdate near gimbal lock vs 50-digit arithmetic (mpmath)")
def test_E11_downdate_stays_accurate_near_gimbal_lock():
    """E11, why: near a gimbal lock the one-axis-at-a-time downdate of `articulated` keeps P⁺
    accurate to rounding (for this body: TOL_DOWNDATE) and exactly symmetric, while the plain block
    form P − G S* P loses about cond(D)·ε (reference: 50-digit arithmetic)."""
    mpmath.mp.dps = 50
    rng = np.random.default_rng(11)
    inertia = random_inertia(rng)
    m = Model([-1], [Joint.spherical()], [(np.eye(3), np.zeros(3))], [inertia])
    P = m.I_spatial[0]
    Pm = mpmath.matrix(P.tolist())
    for delta in (1e-3, 1e-5, 1e-6, 1e-7):
        q1 = np.array([0.3, np.pi / 2 - delta, -0.2])
        art = opalg.articulated(m, q1)
        S = art.kin.S[0]
        Sm = mpmath.matrix(S.tolist())
        exact = np.array((Pm - Pm * Sm * (Sm.T * Pm * Sm) ** -1 * Sm.T * Pm).tolist(), dtype=float)
        Pp = art.P_plus[0]
        assert_close(Pp, exact, TOL_DOWNDATE, f"E11: P+ at delta = {delta} vs 50 digits")
        assert np.array_equal(Pp, Pp.T), "E11: the downdate is exactly symmetric"   # exact: outer products
        if delta == 1e-6:
            D = S.T @ P @ S
            assert np.linalg.cond(D) > 1e10
            plain = P - (P @ S @ np.linalg.inv(D)) @ (S.T @ P)
            # measured at δ = 1e-6 over the random states of TOL_DOWNDATE: the ratio is >= 9e10
            assert rel(plain, exact) > 1e3 * rel(Pp, exact)


def _singularity_criteria(S, P, d):
    """E12: (D_ii / s_i for every axis, smallest pivot ratio d_i / D_ii of the LDL* of D)."""
    s = (np.sum(S[:3] ** 2, 0) * np.trace(P[:3, :3]) + np.sum(S[3:] ** 2, 0) * np.trace(P[3:, 3:])) / 3
    D = S.T @ P @ S
    return np.diag(D) / s, float(np.min(np.asarray(d) / np.diag(D)))


def _in_units(m: Model, lam: float, mu: float) -> Model:
    """m with lengths multiplied by lam and masses by mu (prismatic coordinates scale by lam)."""
    return Model(m.parents, m.joints, [(R, lam * np.asarray(r)) for R, r in m.placements],
                 [Inertia(mu * i.mass, lam * np.asarray(i.com), mu * lam ** 2 * np.asarray(i.I_com))
                  for i in m.inertias], lam * np.asarray(m.gravity))


def _scaled_cond(D) -> float:
    """cond of D scaled to a unit diagonal, diag(D)^-1/2 D diag(D)^-1/2: unchanged by units (E12)."""
    w = 1 / np.sqrt(np.diag(D))
    return float(np.linalg.cond(D * np.outer(w, w)))


def _ldl_pivots_reverse(D):
    """Pivots of the LDL* of D eliminating the last index first (independent of opalg)."""
    A, piv = np.array(D, dtype=float), []
    for i in reversed(range(A.shape[0])):
        piv.insert(0, A[i, i])
        A = A - np.outer(A[:, i], A[i, :]) / A[i, i]
    return np.array(piv)


@pytest.mark.verifies("E12", route="singularity criteria under changes of length and mass units, and the "
                                   "pivot test vs SingularConfigurationError near gimbal lock")
def test_E12_singularity_tests_are_unit_free():
    """E12: D_ii/s_i and the pivot ratios d_i/D_ii do not change with the units of length and
    mass (D does), and near gimbal lock the pivot test flags the dependent axes while each axis
    moves mass — and `articulated` raises SingularConfigurationError exactly then."""
    rng = np.random.default_rng(5)
    m = _model_with_multi_axis_joints(rng)
    q = rng.normal(size=m.ndof)
    prismatic = np.concatenate([[kind == "P" for kind in j.kinds] for j in m.joints])
    ref = None
    for lam, mu in [(1.0, 1.0), (1e-3, 1e-3), (1e3, 1.0), (1e-2, 1e3)]:
        mu_model = _in_units(m, lam, mu)
        art = opalg.articulated(mu_model, np.where(prismatic, lam * q, q))
        crit = [_singularity_criteria(art.kin.S[k], art.P[k], [d[0, 0] for d in art.d[k]])
                for k in range(m.n)]
        if ref is None:
            ref, D_ref = crit, art.D[1]
            kappa = max(_scaled_cond(D) for D in art.D)
            units_tol = Tol(K_UNITS * kappa * EPS, f"{K_UNITS:g}·κ·ε, κ = {kappa:.1e} (unit-diagonal D(j))")
            continue
        for k in range(m.n):
            assert_close(crit[k][0], ref[k][0], units_tol, f"E12: D_ii/s_i of joint {k}, units ({lam}, {mu})")
            # the ratio lies in (0, 1]: scale 1 makes this the absolute difference
            assert_close(crit[k][1], ref[k][1], TOL_PIVOT_RATIO, f"E12: pivot ratio of joint {k}", scale=1.0)
        assert rel(art.D[1], D_ref) > 0.5, "E12: the pivots themselves did change"
    # gimbal lock of the spherical joint (body 1): P(1) depends only on the bodies outboard of it
    art = opalg.articulated(m, q)
    # The verdicts against c·ε = 7e-15 (the library's threshold): measured over 300 random models
    # under 3 kernels, the pivot ratio is ≤ 0.94 ε at δ = 1e-9 and ≥ 3.7e-8 at δ = 1e-3, and
    # every D_ii/s_i ≥ 0.07: >= 30x from the threshold on either side.
    eps, c = np.finfo(float).eps, 32
    for delta, dependent in [(1e-3, False), (1e-9, True)]:
        q1 = np.array([0.3, np.pi / 2 - delta, -0.2])
        S = joint_transform(m.joints[1], q1)[1]
        D = S.T @ art.P[1] @ S
        ratios, pivot_ratio = _singularity_criteria(S, art.P[1], _ldl_pivots_reverse(D))
        assert np.all(ratios > c * eps), "E12: every axis still moves mass"
        assert (pivot_ratio <= c * eps) == dependent, f"E12: pivot test at delta = {delta}"
        qq = q.copy()
        qq[m.dof_slice[1]] = q1
        if dependent:
            with pytest.raises(opalg.SingularConfigurationError, match="joint1: singular configuration"):
                opalg.articulated(m, qq)
        else:
            opalg.articulated(m, qq)


# -- K2: an independent implementation of axis sequences (complex-step safe) -----------------
def _rot(a, t):
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]], dtype=complex)
    return np.eye(3) + np.sin(t) * K + (1 - np.cos(t)) * K @ K


def _mt(E, r):
    rx = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]], dtype=complex)
    X = np.zeros((6, 6), dtype=complex)
    X[:3, :3] = X[3:, 3:] = E
    X[3:, :3] = -E @ rx
    return X


def _primitive(kind, a, h, t):
    """(X_i(t), s_i) of one axis: revolute, prismatic or helical with pitch h."""
    if kind == "R":
        return _mt(_rot(a, t).T, np.zeros(3)), np.r_[a, 0 * a]
    if kind == "P":
        return _mt(np.eye(3), t * a), np.r_[0 * a, a]
    return _mt(_rot(a, t).T, h * t * a), np.r_[a, h * a]


def _axis_sequence(kinds, axes, pitches, q):
    """X_J = X_m ⋯ X_1 and S with S_i = X_m ⋯ X_{i+1} s_i (K2)."""
    Xs, ss = zip(*[_primitive(*args) for args in zip(kinds, axes, pitches, q)])
    S, T = np.zeros((6, len(q)), dtype=complex), np.eye(6, dtype=complex)
    for i in reversed(range(len(q))):
        S[:, i] = T @ ss[i]
        T = T @ Xs[i]
    return T, S


def _c_J(S, qd):
    cols = [S[:, i] * qd[i] for i in range(S.shape[1])]
    return sum((crm(cols[i]) @ cols[j] for i in range(len(cols)) for j in range(i + 1, len(cols))),
               np.zeros(6))


@pytest.mark.verifies("K2", route="dX_J/dt and Ṡq̇ by complex step of an independent axis-sequence "
                                  "implementation vs −crm(Sq̇)X_J and c_J")
def test_K2_joint_velocity_product_by_complex_step():
    """K2: for random sequences of revolute, prismatic and helical axes, d/dt X_J = −crm(S q̇) X_J
    and Ṡ q̇ = c_J = Σ_{i<j} crm(S_i q̇_i) S_j q̇_j, both by complex step along q̇."""
    rng = np.random.default_rng(2)
    h = 1e-30
    for _ in range(60):
        m = int(rng.integers(1, 5))
        kinds = list(rng.choice(list("RPH"), size=m))
        axes = [v / np.linalg.norm(v) for v in rng.normal(size=(m, 3))]
        pitches = rng.normal(size=m)
        q, qd = rng.normal(size=(2, m))
        X, S = _axis_sequence(kinds, axes, pitches, q)
        Xc, Sc = _axis_sequence(kinds, axes, pitches, q + 1j * h * qd)
        X, S = X.real, S.real
        assert_close(Xc.imag / h, -crm(S @ qd) @ X, TOL_K2, f"K2: dX_J/dt, kinds {kinds}")
        assert_close((Sc.imag / h) @ qd, _c_J(S, qd), TOL_K2, f"K2: S' qd = c_J, kinds {kinds}",
                     scale=np.linalg.norm(S) ** 2 * np.linalg.norm(qd) ** 2)


@pytest.mark.verifies("K2", route="joint_transform and the root's Coriolis term vs the independent axis sequence")
def test_K2_convention_is_opalgs():
    """K2 as opalg implements it (R and P axes): joint_transform gives the X_J and S of the
    documented sequence, and the Coriolis term of a root without gravity is exactly c_J."""
    rng = np.random.default_rng(4)
    m = _model_with_multi_axis_joints(rng)
    for k in (1, 3):
        joint = m.joints[k]
        qk, qdk = rng.normal(size=(2, joint.ndof))
        X, S = _axis_sequence(joint.kinds, np.asarray(joint.axes), [0.0] * joint.ndof, qk)
        X_o, S_o = joint_transform(joint, qk)
        assert_close(X_o, X.real, TOL_K2, f"K2: X_J of joint {k}")
        assert_close(S_o, S.real, TOL_K2, f"K2: S of joint {k}")
    root = Model([-1], [m.joints[3]], [m.placements[3]], [m.inertias[3]])
    q, qd = rng.normal(size=(2, root.ndof))
    kin = opalg.model.kinematics.body_kinematics(root, q, qd, gravity=False)
    cJ = _c_J(kin.S[0], qd)
    assert np.linalg.norm(cJ) > 1e-3
    assert_close(kin.a[0], cJ, TOL_K2, "K2: a(root) = crm(vJ) vJ + c_J = c_J")
