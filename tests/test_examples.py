"""aggregate/examples.py: the most confidently wrong items per scoring function, seeded and
byte-identical; the German template AUC against sklearn's."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import roc_auc_score

from spudflow.aggregate.examples import (
    blimp_examples,
    confidently_wrong_pairs,
    largest_ratios,
    top_k,
    worst_template_pairs,
)

KEYS = ["dataset", "model", "method"]


def _pairs(model="lm", n=40, seed=0):
    rng = np.random.default_rng(seed)
    good = np.round(rng.normal(-30, 2, n), 1)
    bad = np.round(good + rng.normal(-1, 2, n), 1)
    bad[:6] = good[:6] + 1.5  # six wrong pairs tied at the same margin
    bad[6] = good[6]          # a tie: counted wrong, margin 0
    return pl.DataFrame({
        "dataset": "blimp", "model": model, "method": "sum",
        "group_id": [f"g{i:03d}" for i in range(n)], "uid": [f"u{i % 3}" for i in range(n)],
        "logprob_good": good, "logprob_bad": bad, "scored": [i != 7 for i in range(n)]})


def _bytes(frame):
    return frame.write_ipc(None).getvalue()


def test_the_largest_margins_for_the_wrong_sentence_come_first():
    pairs = _pairs()
    top = confidently_wrong_pairs(pairs, KEYS, ["group_id"], "logprob_good", "logprob_bad",
                                  k=10, seed=0)
    margins = (pairs["logprob_bad"] - pairs["logprob_good"]).to_numpy()
    assert top["rank"].to_list() == list(range(1, 11))
    assert np.all(np.diff(top["margin"].to_numpy()) <= 0)
    assert top["margin"].to_list() == pytest.approx(sorted(margins[margins >= 0])[::-1][:10])
    assert (top["margin"] >= 0).all()


def test_ties_are_broken_by_a_seeded_hash_of_the_id_not_by_the_id():
    pairs = _pairs().with_columns(logprob_bad=pl.col("logprob_good") + 1.0)  # all tied
    orders = {seed: confidently_wrong_pairs(pairs, KEYS, ["group_id"], "logprob_good",
                                            "logprob_bad", k=5, seed=seed)["group_id"].to_list()
              for seed in range(4)}
    assert len({tuple(o) for o in orders.values()}) > 1  # the seed picks among the tied
    assert orders[0] != sorted(pairs["group_id"].to_list())[:5]
    again = confidently_wrong_pairs(pairs, KEYS, ["group_id"], "logprob_good", "logprob_bad",
                                    k=5, seed=0)
    assert again["group_id"].to_list() == orders[0]


def test_a_functions_examples_do_not_depend_on_other_functions_or_row_order():
    one = _pairs()
    both = pl.concat([_pairs(model="other", seed=5), one]).sample(fraction=1.0, shuffle=True,
                                                                  seed=3)
    args = (KEYS, ["group_id"], "logprob_good", "logprob_bad", 5, 1)
    alone = confidently_wrong_pairs(one, *args)
    mixed = confidently_wrong_pairs(both, *args).filter(pl.col("model") == "lm")
    assert alone.equals(mixed)


def test_blimp_examples_carry_both_sentences_and_skip_unscored_pairs():
    pairs = _pairs()
    items = pl.concat([
        pairs.select("dataset", "group_id", pl.lit(label).alias("label"),
                     pl.format("{} " + side, "group_id").alias("sentence"))
        for side, label in (("good", 1), ("bad", 0))])
    top = blimp_examples(pairs, items, k=8, seed=0)
    assert top.columns == [*KEYS, "rank", "uid", "group_id", "sentence_good", "sentence_bad",
                           "logprob_good", "logprob_bad", "margin"]
    assert "g007" not in top["group_id"].to_list()
    row = top.row(0, named=True)
    assert (row["sentence_good"], row["sentence_bad"]) == (f"{row['group_id']} good",
                                                           f"{row['group_id']} bad")
    assert _bytes(top) == _bytes(blimp_examples(pairs, items, k=8, seed=0))


def test_top_k_refuses_an_item_twice_and_k_below_one():
    frame = pl.DataFrame({"id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match="twice"):
        top_k(frame, [], "score", ["id"], 1, 0)
    with pytest.raises(ValueError, match="k = 0"):
        top_k(frame.head(1), [], "score", ["id"], 0, 0)


def _german(seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for template in range(6):
        for i in range(8):
            grammatical = i < 3
            rows.append({"dataset": "de", "model": "lm", "method": "sum",
                         "template": f"t{template}", "item_id": f"t{template}-{i}",
                         "sentence": f"sentence {template} {i}", "grammatical": grammatical,
                         "logprob_sum": float(np.round(rng.normal(-20 + grammatical
                                                                  * (template % 3), 1.5), 1))})
    return pl.DataFrame(rows)


def test_the_worst_template_is_the_lowest_auc_and_its_pairs_most_wrong_first():
    scored = _german()
    top = worst_template_pairs(scored, KEYS, k=4, seed=0)
    aucs = {t: roc_auc_score(g["grammatical"].to_numpy(), g["logprob_sum"].to_numpy())
            for (t,), g in scored.group_by("template")}
    template = top["template"][0]
    assert set(top["template"]) == {template}
    assert aucs[template] == min(aucs.values())
    assert top["template_auc"][0] == pytest.approx(aucs[template], abs=1e-12)
    assert np.all(np.diff(top["margin"].to_numpy()) <= 0)
    assert top["margin"].to_list() == pytest.approx(
        (top["logprob_sum_violation"] - top["logprob_sum_grammatical"]).to_list())
    assert _bytes(top) == _bytes(worst_template_pairs(scored, KEYS, k=4, seed=0))


def test_largest_spud_ratios():
    rng = np.random.default_rng(1)
    ratio = np.round(rng.lognormal(0, 1, 30), 2)
    ratio[[3, 9]] = ratio.max()
    pairs = pl.DataFrame({
        "dataset": "spud", "model": "lm", "method": "ppl", "nonce_seed": "1",
        "group_id": [f"o{i // 3}" for i in range(30)],
        "nonce_item_id": [f"n{i}" for i in range(30)], "orig_sentence": "o",
        "nonce_sentence": "n", "ppl_orig": 10.0, "ppl_nonce": 10.0 * ratio, "ratio": ratio})
    top = largest_ratios(pairs, KEYS, k=3, seed=0)
    assert set(top["nonce_item_id"][:2]) == {"n3", "n9"}
    assert top["ratio"].to_list() == sorted(ratio, reverse=True)[:3]
