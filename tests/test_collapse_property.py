"""An ERROR repeat never decides: collapsing, slice tables, comparisons and leaderboards
against a deliberately naive reference that tries every value the errored repeats could have had.

The reference works one row at a time: it grades the row under the rule once for each
assignment of PASS or FAIL to its errored repeats (``itertools.product``) and calls the row
PASS or FAIL only when every assignment agrees, UNDECIDED otherwise. It shares no code with
``goldenkit.stats`` (the rules, the error kinds and their order are written out here).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

from hypothesis import given, settings, strategies as st
from run_factory import FakeRun, manifest, outcomes

from goldenkit import leaderboard
from goldenkit.compare import compare_runs
from goldenkit.stats import OVERALL, collapse_repeats, slice_table

RULES = ["majority", "all", "any", "at_least:1", "at_least:2", "at_least:3", "at_least:5"]
VERDICT = st.sampled_from(["PASS", "FAIL", "ERROR", "SKIPPED"])
# the recorded kinds a run may hold: the six of the taxonomy, the old name, a missing and an unknown one
RECORDED_KIND = st.sampled_from(
    ["transient", "infrastructure", "refused", "agent", "grader", "simulator", "permanent", None, "weird"]
)
KIND_ORDER = ["transient", "infrastructure", "refused", "agent", "grader", "simulator"]
CANDIDATE_KINDS = {"refused", "agent"}


# --------------------------------------------------------------------------- the naive reference


def graded_verdict(repeats: Sequence[str], rule: str) -> str:
    """PASS or FAIL of a row whose every repeat in ``repeats`` was graded."""
    passes = sum(1 for v in repeats if v == "PASS")
    fails = len(repeats) - passes
    if rule == "majority":
        ok = passes > fails  # more than half of the repeats
    elif rule == "all":
        ok = fails == 0
    elif rule == "any":
        ok = passes > 0
    else:
        ok = passes >= int(rule.split(":")[1])
    return "PASS" if ok else "FAIL"


def naive_verdict(repeats: Sequence[str], rule: str) -> str:
    """PASS, FAIL, UNDECIDED, ERROR (every graded-or-errored repeat errored) or SKIPPED."""
    voting = [v for v in repeats if v != "SKIPPED"]  # SKIPPED repeats are not graded and not errors
    graded = [v for v in voting if v != "ERROR"]
    if not graded:
        return "ERROR" if voting else "SKIPPED"
    n_err = len(voting) - len(graded)
    seen = {graded_verdict(graded + list(fill), rule) for fill in itertools.product(["PASS", "FAIL"], repeat=n_err)}
    return seen.pop() if len(seen) == 1 else "UNDECIDED"


def as_collapsed(naive: str) -> str:
    """The collapsed table's verdict of a naive one: an undecided row is an error row."""
    return "ERROR" if naive == "UNDECIDED" else naive


def normal_kind(recorded: str | None) -> str:
    if recorded == "permanent":
        return "refused"
    return recorded if recorded in KIND_ORDER else "infrastructure"


def naive_error_kind(repeats: Sequence[str], kinds: Sequence[str | None], verdict: str) -> str | None:
    if verdict != "ERROR":
        return None
    errored = [normal_kind(k) for v, k in zip(repeats, kinds, strict=True) if v == "ERROR"]
    pool = [k for k in errored if k in CANDIDATE_KINDS] or errored
    counts = Counter(pool)
    return max(counts, key=lambda k: (counts[k], -KIND_ORDER.index(k)))


# --------------------------------------------------------------------------- generated runs

Row = tuple[str, str, list[str]]


@st.composite
def rows_of(draw: st.DrawFn, row_ids: Sequence[str] | None = None, repeats: int | None = None) -> list[Row]:
    """Rows of 1 to 6 repeats each (``repeats`` each when given), in three slices."""
    ids = row_ids or [f"r{i}" for i in range(draw(st.integers(1, 12)))]
    lo, hi = (repeats, repeats) if repeats else (1, 6)
    return [
        (rid, draw(st.sampled_from(["a", "b", "c"])), draw(st.lists(VERDICT, min_size=lo, max_size=hi))) for rid in ids
    ]


def with_slices_of(rows: list[Row], first: list[Row]) -> list[Row]:
    """``rows`` with the slice each row has in ``first`` (a row's slice is the same in every run)."""
    slice_of = {rid: s for rid, s, _ in first}
    return [(rid, slice_of[rid], vs) for rid, _, vs in rows]


# --------------------------------------------------------------------------- the properties


@settings(max_examples=300, deadline=None)
@given(rows=rows_of(), rule=st.sampled_from(RULES), data=st.data())
def test_collapse_equals_the_enumeration_of_every_errored_repeat(
    rows: list[Row], rule: str, data: st.DataObject
) -> None:
    frame = outcomes(rows)
    kinds = data.draw(st.lists(RECORDED_KIND, min_size=len(frame), max_size=len(frame)))
    frame["error_kind"] = [k if v == "ERROR" else None for k, v in zip(kinds, frame["verdict"], strict=True)]
    c = collapse_repeats(frame, rule).set_index("row_id")
    at = 0
    for rid, _, vs in rows:
        row_kinds = frame["error_kind"].iloc[at : at + len(vs)].tolist()
        at += len(vs)
        naive = naive_verdict(vs, rule)
        line = c.loc[rid]
        assert (str(line["verdict"]), bool(line["undecided"])) == (as_collapsed(naive), naive == "UNDECIDED"), vs
        errored = [normal_kind(k) for v, k in zip(vs, row_kinds, strict=True) if v == "ERROR"]
        n_candidate = sum(1 for k in errored if k in CANDIDATE_KINDS)
        assert int(line["n_candidate_errors"]) == int(line["n_permanent"]) == n_candidate
        assert line["error_kind"] == naive_error_kind(vs, row_kinds, as_collapsed(naive)), (vs, row_kinds)


@settings(max_examples=150, deadline=None)
@given(rows=rows_of(), rule=st.sampled_from(RULES))
def test_slice_table_counts_only_decided_rows(rows: list[Row], rule: str) -> None:
    t = slice_table(outcomes(rows), rule=rule).set_index("slice")
    for label in [*sorted({s for _, s, _ in rows}), OVERALL]:
        verdicts = [naive_verdict(vs, rule) for _, s, vs in rows if label in (s, OVERALL)]
        n = sum(1 for v in verdicts if v in ("PASS", "FAIL"))
        k = verdicts.count("PASS")
        errors = sum(1 for v in verdicts if v in ("ERROR", "UNDECIDED"))
        line = t.loc[label]
        assert (int(line["n"]), int(line["k"]), int(line["error_rows"])) == (n, k, errors), (label, verdicts)
        assert int(line["skipped_rows"]) == verdicts.count("SKIPPED")


def naive_discordant(base: list[Row], cand: list[Row], rule: str, slice_: str) -> tuple[int, int, int]:
    """(b, c, paired rows) of one slice (or OVERALL): rows decided on both sides, broke and fixed."""
    verdict_b = {rid: naive_verdict(vs, rule) for rid, s, vs in base if slice_ in (s, OVERALL)}
    verdict_c = {rid: naive_verdict(vs, rule) for rid, _, vs in cand}
    pairs = [(verdict_b[rid], verdict_c[rid]) for rid in verdict_b]
    b = pairs.count(("PASS", "FAIL"))
    c = pairs.count(("FAIL", "PASS"))
    paired = sum(1 for x, y in pairs if {x, y} <= {"PASS", "FAIL"})
    return b, c, paired


@settings(max_examples=100, deadline=None)
@given(base=rows_of(), rule=st.sampled_from(RULES), data=st.data())
def test_comparison_pairs_only_rows_decided_on_both_sides(base: list[Row], rule: str, data: st.DataObject) -> None:
    cand = with_slices_of(data.draw(rows_of([rid for rid, _, _ in base])), base)
    cmp = compare_runs(FakeRun(manifest("b"), outcomes(base)), FakeRun(manifest("c"), outcomes(cand)), rule=rule)
    rows = cmp.rows.set_index("row_id")
    for side, side_rows in (("base", base), ("cand", cand)):
        got = rows[f"{side}_verdict"].astype(str).to_dict()
        assert got == {rid: as_collapsed(naive_verdict(vs, rule)) for rid, _, vs in side_rows}
    t = cmp.table.set_index("slice")
    for label in [*sorted({s for _, s, _ in base}), OVERALL]:
        line = t.loc[label]
        got_counts = (int(line["b"]), int(line["c"]), int(line["n_paired"]))
        assert got_counts == naive_discordant(base, cand, rule, label), label


@settings(max_examples=60, deadline=None)
@given(repeats=st.integers(1, 5), rule=st.sampled_from(RULES), data=st.data())
def test_leaderboard_counts_only_decided_rows(repeats: int, rule: str, data: st.DataObject) -> None:
    first = data.draw(rows_of(repeats=repeats))  # runs of one leaderboard have the same repeats
    ids = [rid for rid, _, _ in first]
    runs = {"m0": first, **{f"m{i}": with_slices_of(data.draw(rows_of(ids, repeats)), first) for i in (1, 2)}}
    lb = leaderboard({name: outcomes(rows) for name, rows in runs.items()}, rule=rule)
    verdicts = {name: {rid: naive_verdict(vs, rule) for rid, _, vs in rows} for name, rows in runs.items()}
    for line in lb.table.to_dict("records"):
        mine = list(verdicts[line["run_id"]].values())
        n = sum(1 for v in mine if v in ("PASS", "FAIL"))
        errors = sum(1 for v in mine if v in ("ERROR", "UNDECIDED"))
        assert (line["n"], line["k"], line["errors"]) == (n, mine.count("PASS"), errors), line["run_id"]
    for pair in lb.pairs.to_dict("records"):
        va, vb = verdicts[pair["a"]], verdicts[pair["b"]]
        both = [(va[rid], vb[rid]) for rid in ids]
        assert pair["b_count"] == both.count(("PASS", "FAIL")) and pair["c_count"] == both.count(("FAIL", "PASS"))
        assert pair["n_paired"] == sum(1 for x, y in both if {x, y} <= {"PASS", "FAIL"})
