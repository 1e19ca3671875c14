"""Stratified sampling, hash-based split assignment and the weekly seed."""

from __future__ import annotations

import hashlib
import json
import random
from datetime import date, datetime

import pandas as pd
import pytest

from goldenkit.dataset import Dataset, read_dataset
from goldenkit.errors import InputError
from goldenkit.sampling import assign_splits, holdout_score, sample_rank, stratified_sample, weekly_seed

SLICE_SIZES = {"refunds": 40, "shipping": 25, "billing": 3, "account": 10}


def make_rows() -> list[dict]:
    rows = []
    for name, size in SLICE_SIZES.items():
        for i in range(size):
            split = "holdout" if i % 4 == 0 else "dev"
            rows.append({"id": f"{name}-{i:04d}", "slice": name, "split": split, "case": {"prompt": str(i)}})
    return rows


def ids_of(sample) -> list[str]:
    if isinstance(sample, Dataset):
        return sample.ids
    if isinstance(sample, pd.DataFrame):
        return sample["id"].tolist()
    return [r["id"] for r in sample]


def independent_sample(rows: list[dict], per_slice: int, seed: int, split: str | None = None) -> list[str]:
    """The documented rule spelled out: per slice, ids ordered by the lowercase hex SHA-256 of
    the UTF-8 bytes of "{seed}:{slice}:{id}", ascending; the first per_slice are kept."""
    chosen = []
    by_slice: dict[str, list[str]] = {}
    for r in rows:
        if split is None or r["split"] == split:
            by_slice.setdefault(r["slice"], []).append(r["id"])
    for name, ids in by_slice.items():
        ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{name}:{i}".encode()).hexdigest())
        chosen += ranked[:per_slice]
    return sorted(chosen)


def test_matches_the_documented_algorithm():
    rows = make_rows()
    for seed in (0, 1, 202649):
        for split in (None, "dev", "holdout"):
            assert ids_of(stratified_sample(rows, 5, seed, split=split)) == independent_sample(rows, 5, seed, split)
    # a shell reproduces a rank: printf '3:refunds:refunds-000' | sha256sum
    assert sample_rank(3, "refunds", "refunds-000") == hashlib.sha256(b"3:refunds:refunds-000").hexdigest()


def test_the_rule_on_a_published_example() -> None:
    # the ranks come from coreutils' sha256sum (printf '7:s:a' | sha256sum), not from Python
    ranks = {i: subprocess_sha256(f"7:s:{i}") for i in "abcd"}
    expected = sorted(sorted(ranks, key=ranks.__getitem__)[:2])
    rows = [{"id": i, "slice": "s", "split": "dev"} for i in "dcba"]
    assert ids_of(stratified_sample(rows, 2, seed=7)) == expected


def subprocess_sha256(text: str) -> str:
    """SHA-256 by the coreutils tool, not Python: an independent implementation of the rule's hash."""
    import shutil
    import subprocess

    if shutil.which("sha256sum") is None:
        return hashlib.sha256(text.encode()).hexdigest()
    out = subprocess.run(["sha256sum"], input=text.encode(), capture_output=True, check=True).stdout
    return out.decode().split()[0]


def test_independent_of_input_order_for_every_input_type(tmp_path):
    rows = make_rows()
    expected = ids_of(stratified_sample(rows, 6, seed=11))
    for k in range(5):
        shuffled = rows[:]
        random.Random(k).shuffle(shuffled)
        assert ids_of(stratified_sample(shuffled, 6, seed=11)) == expected
        frame = pd.DataFrame(shuffled)
        assert ids_of(stratified_sample(frame, 6, seed=11)) == expected
        path = tmp_path / f"rows{k}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in shuffled))
        assert ids_of(stratified_sample(read_dataset(path), 6, seed=11)) == expected


def test_counts_per_slice_and_small_slices_give_all_rows():
    rows = make_rows()
    sample = stratified_sample(pd.DataFrame(rows), 12, seed=3)
    counts = sample["slice"].value_counts().to_dict()
    assert counts == {name: min(12, size) for name, size in SLICE_SIZES.items()}
    billing = sorted(r["id"] for r in rows if r["slice"] == "billing")
    assert sorted(sample.loc[sample["slice"] == "billing", "id"]) == billing
    assert len(stratified_sample(rows, 1000, seed=3)) == len(rows)


def test_same_seed_same_ids_other_seed_other_ids():
    rows = make_rows()
    a = ids_of(stratified_sample(rows, 5, seed=42))
    assert ids_of(stratified_sample(rows, 5, seed=42)) == a
    assert ids_of(stratified_sample(rows, 5, seed=43)) != a
    assert a == sorted(a)


def test_a_slice_choice_does_not_depend_on_other_slices():
    rows = make_rows()
    before = [i for i in ids_of(stratified_sample(rows, 5, seed=9)) if i.startswith("refunds")]
    more = rows + [{"id": f"new-{i}", "slice": "shipping", "split": "dev"} for i in range(30)]
    after = [i for i in ids_of(stratified_sample(more, 5, seed=9)) if i.startswith("refunds")]
    assert before == after


def test_split_filter():
    rows = make_rows()
    holdout = stratified_sample(pd.DataFrame(rows), 100, seed=1, split="holdout")
    assert set(holdout["split"]) == {"holdout"}
    assert len(holdout) == sum(1 for r in rows if r["split"] == "holdout")


def test_returns_the_input_type(tmp_path):
    rows = make_rows()
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = read_dataset(path)
    sample = stratified_sample(ds, 2, seed=5)
    assert isinstance(sample, Dataset)
    assert sample.sha256 == ds.sha256 and len(sample) == 2 * len(SLICE_SIZES)
    assert sample.case(sample.ids[0]).prompt == ds.raw_case(sample.ids[0])["prompt"]
    frame = pd.DataFrame(rows)
    out = stratified_sample(frame, 2, seed=5)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(frame.columns)
    listed = stratified_sample(rows, 2, seed=5)
    assert isinstance(listed, list) and all(r in rows for r in listed)
    assert ids_of(sample) == ids_of(out) == ids_of(listed)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"per_slice": 0, "seed": 1}, "per_slice must be a positive integer"),
        ({"per_slice": 2.5, "seed": 1}, "per_slice must be a positive integer"),
        ({"per_slice": 2, "seed": "x"}, "seed must be an integer"),
        ({"per_slice": 2, "seed": 1, "split": "test"}, 'split must be "dev" or "holdout"'),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(InputError, match=message):
        stratified_sample(make_rows(), **kwargs)


def test_bad_rows():
    with pytest.raises(InputError, match='duplicate id "a"'):
        stratified_sample([{"id": "a", "slice": "s"}, {"id": "a", "slice": "t"}], 1, seed=1)
    with pytest.raises(InputError, match="no slice"):
        stratified_sample([{"id": "a"}], 1, seed=1)
    with pytest.raises(InputError, match="expected a Dataset"):
        stratified_sample("rows.jsonl", 1, seed=1)


# --------------------------------------------------------------------------- splits


def test_assign_splits_by_hash_of_salt_and_id():
    rows = [{"id": f"row-{i}", "slice": "s"} for i in range(200)]
    out = assign_splits(rows, 0.25, salt="v1")
    for r, o in zip(rows, out, strict=True):
        score = int.from_bytes(hashlib.sha256(b"v1\0" + r["id"].encode() + b"\0").digest()[:8], "big") / 2**64
        assert o["split"] == ("holdout" if score < 0.25 else "dev")
        assert holdout_score(r["id"], "v1") == score
    assert "split" not in rows[0]  # the input is not modified


def test_assign_splits_adding_rows_never_moves_a_row():
    rows = pd.DataFrame({"id": [f"row-{i}" for i in range(500)], "slice": "s"})
    before = assign_splits(rows, 0.2, salt="s")
    more = pd.concat([rows, pd.DataFrame({"id": [f"new-{i}" for i in range(500)], "slice": "t"})])
    shuffled = more.sample(frac=1.0, random_state=4)
    after = assign_splits(shuffled, 0.2, salt="s").set_index("id")["split"]
    assert (after.loc[before["id"]].to_numpy() == before["split"].to_numpy()).all()


def test_assign_splits_fraction_is_right_in_expectation():
    rows = pd.DataFrame({"id": [f"id-{i}" for i in range(20000)], "slice": "s"})
    share = (assign_splits(rows, 0.2, salt="x")["split"] == "holdout").mean()
    # Binomial(20000, 0.2): sd = sqrt(0.2*0.8/20000) = 0.00283; allow 5 sd.
    assert abs(share - 0.2) < 5 * 0.00283
    assert set(assign_splits(rows.head(50), 0.0, salt="x")["split"]) == {"dev"}
    assert set(assign_splits(rows.head(50), 1.0, salt="x")["split"]) == {"holdout"}
    other = assign_splits(rows.head(2000), 0.2, salt="y")["split"]
    assert (other != assign_splits(rows.head(2000), 0.2, salt="x")["split"]).any()


@pytest.mark.parametrize("fraction", [-0.1, 1.5, "0.2", True])
def test_assign_splits_bad_fraction(fraction):
    with pytest.raises(InputError, match="holdout_fraction"):
        assign_splits([{"id": "a"}], fraction, salt="s")


# --------------------------------------------------------------------------- weekly seed


@pytest.mark.parametrize(
    ("day", "seed"),
    [
        (date(2026, 11, 30), 202649),  # a Monday
        (date(2026, 12, 6), 202649),  # the Sunday of the same ISO week
        (date(2026, 12, 7), 202650),
        (date(2021, 1, 3), 202053),  # early January in the last ISO week of the year before
        (date(2024, 12, 30), 202501),  # late December in week 1 of the next ISO year
        (datetime(2026, 1, 1, 23, 59), 202601),
        ("2027-01-01", 202653),
    ],
)
def test_weekly_seed(day, seed):
    assert weekly_seed(day) == seed


def test_weekly_seed_today_and_bad_input():
    assert 200001 <= weekly_seed() <= 999953
    with pytest.raises(InputError):
        weekly_seed("next week")
