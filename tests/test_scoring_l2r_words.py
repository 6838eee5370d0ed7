"""pppl_l2r's words: by default the tokenizer's own, as Kauf & Ivanova's code and minicons group
the tokens (the fast tokenizer's `word_ids()` of the sentence text); `l2r_words="items"` the
items' words. On UD-tokenized sentences the two differ wherever a UD word holds punctuation or a
contraction (`U.S.`, `...`, `n't`, an e-mail address): BERT's and byte-level BPE's
pre-tokenizers split those into several words."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scoring_models import make_item, tiny_model_dir
from transformers import AutoModelForMaskedLM, AutoTokenizer

from spudflow.scoring.masked import l2r_masked, l2r_masked_positions
from spudflow.scoring.scorers import load_scorer

# Sentences as UD English-EWT writes them (`# text`), with EWT's surface tokens as the words.
UD_SENTENCES = [
    ("us", "The U.S. embassy said so...", ["The", "U.S.", "embassy", "said", "so", "..."]),
    ("dont", "I don't know what's up.", ["I", "do", "n't", "know", "what", "'s", "up", "."]),
    ("email", "Write to john.doe@example.com or call.",
     ["Write", "to", "john.doe@example.com", "or", "call", "."]),
    ("plain", "The cat sat on the mat.", ["The", "cat", "sat", "on", "the", "mat", "."]),
]


def ud_items():
    return [make_item(name, sentence, words) for name, sentence, words in UD_SENTENCES]


def row_of(ragged, r: int) -> list[int]:
    return ragged.values[ragged.offsets[r]:ragged.offsets[r + 1]].tolist()


def minicons_mask_sets(tokenizer, sentence: str) -> list[list[int]]:
    """minicons's `within_word_l2r` mask sets (MaskedLMScorer.prepare_text, 0.3.39): for each
    scored token, itself and every later scored token with the same `word_ids()` entry."""
    encoded = tokenizer([sentence])
    word_ids = encoded.word_ids(0)
    ids = encoded["input_ids"][0]
    specials = {tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id}
    targets = [i for i, t in enumerate(ids) if t not in specials]
    return [[p] + [j for j in range(p + 1, targets[-1] + 1) if word_ids[j] == word_ids[p]]
            if word_ids[p] is not None else [p] for p in targets]


@pytest.mark.parametrize("tokenizer_kind", ["wordpiece", "bytebpe"])
def test_default_mask_sets_are_minicons_within_word_l2r(tokenizer_kind):
    """Every token's mask set, by the per-token definition and by the batched one, is the one
    minicons masks for the same sentence; grouping by the items' words masks more."""
    scorer = load_scorer("masked", str(tiny_model_dir("masked", tokenizer_kind)), device="cpu")
    items = ud_items()
    encoded = scorer.encode(items)
    targets = [list(range(e.n_tokens)) for e in encoded]
    batched = l2r_masked(encoded, targets)
    by_items = l2r_masked(encoded, targets, "items")
    n, differ = 0, set()
    for item, sentence in zip(items, encoded, strict=True):
        expected = minicons_mask_sets(scorer.tokenizer, item.sentence)
        assert len(expected) == sentence.n_tokens, item.item_id
        for token, mask in enumerate(expected):
            assert l2r_masked_positions(sentence, token) == mask, (item.item_id, token)
            assert row_of(batched, n) == mask, (item.item_id, token)
            items_mask = l2r_masked_positions(sentence, token, "items")
            assert row_of(by_items, n) == items_mask
            if items_mask != mask:
                differ.add(item.item_id)
            n += 1
    # `U.S.`, `...`, `'s` and the address are several words to both pre-tokenizers; `don't` is
    # `don ' t` (`don 't`) to them and `do n't` to UD
    assert differ == {"us", "dont", "email"}


def test_us_masks_only_u_by_default_and_the_whole_ud_word_by_items():
    """BERT's pre-tokenizer splits `U.S.` into `U . S .`: the default scores `U` with only itself
    masked; by the items' words `. S .` are masked too."""
    scorer = load_scorer("masked", str(tiny_model_dir("masked", "wordpiece")), device="cpu")
    [sentence] = scorer.encode(ud_items()[:1])
    # `U` is `[UNK]` to the tiny vocabulary
    u = sentence.char_starts.index(sentence.item.sentence.index("U.S."))
    assert sentence.tokens[u + 1:u + 4] == [".", "S", "."]
    positions = sentence.positions
    assert l2r_masked_positions(sentence, u) == [positions[u]]
    assert l2r_masked_positions(sentence, u, "items") == positions[u:u + 4]


def reference_l2r(directory, sentence: str, mask_sets: list[list[int]]) -> list[float]:
    """Each token's log probability with its mask set masked: one input at a time."""
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForMaskedLM.from_pretrained(directory).eval()
    ids = tokenizer(sentence)["input_ids"]
    scores = []
    for mask in mask_sets:
        masked = list(ids)
        for j in mask:
            masked[j] = tokenizer.mask_token_id
        with torch.no_grad():
            logprobs = model(torch.tensor([masked])).logits[0, mask[0]].log_softmax(-1)
        scores.append(logprobs[ids[mask[0]]].item())
    return scores


@pytest.mark.parametrize("tokenizer_kind", ["wordpiece", "bytebpe"])
def test_pppl_l2r_scores_are_those_of_minicons_masks(tokenizer_kind):
    directory = tiny_model_dir("masked", tokenizer_kind)
    items = ud_items()
    for l2r_words in ("tokenizer", "items"):
        scorer = load_scorer("masked", str(directory), device="cpu", batch_tokens=64,
                             l2r_words=l2r_words)
        encoded = scorer.encode(items)
        got = scorer.score(encoded, "pppl_l2r", [list(range(e.n_tokens)) for e in encoded])
        for item, sentence, scores in zip(items, encoded, got, strict=True):
            masks = (minicons_mask_sets(scorer.tokenizer, item.sentence)
                     if l2r_words == "tokenizer" else
                     [l2r_masked_positions(sentence, k, "items")
                      for k in range(sentence.n_tokens)])
            np.testing.assert_allclose(scores, reference_l2r(directory, item.sentence, masks),
                                       atol=2e-5, rtol=0, err_msg=f"{l2r_words} {item.item_id}")


@pytest.mark.parametrize("tokenizer_kind", ["wordpiece", "bytebpe", "metaspace"])
def test_japanese_words_are_what_the_tokenizer_splits(tokenizer_kind):
    """Without spaces the tokenizer's words are its pre-tokenizer's runs: byte-level BPE and
    Metaspace keep a run of letters together (so l2r masks most of the sentence to the right);
    BERT's normaliser and pre-tokenizer make each kanji and each run of kana a word."""
    scorer = load_scorer("masked", str(tiny_model_dir("masked", tokenizer_kind)), device="cpu")
    item = make_item("ja", "猫がマットの上に座った。",
                     ["猫", "が", "マット", "の", "上", "に", "座っ", "た", "。"], language="ja")
    [sentence] = scorer.encode([item])
    words = scorer.tokenizer(item.sentence).word_ids()
    assert sentence.tokenizer_word_index == [words[p] for p in sentence.positions]
    spans = {}
    for word, start, end in zip(sentence.tokenizer_word_index, sentence.char_starts,
                                sentence.char_ends, strict=True):
        first, last = spans.get(word, (start, end))
        spans[word] = (min(first, start), max(last, end))
    assert [item.sentence[a:b] for a, b in spans.values()] == {
        "wordpiece": ["猫", "がマットの", "上", "に", "座", "った", "。"],
        "bytebpe": ["猫がマットの上に座った", "。"],
        "metaspace": ["猫がマットの上に座った。"]}[tokenizer_kind]


def test_an_unknown_word_setting_is_refused():
    from spudflow.core.errors import InputError

    with pytest.raises(InputError):
        load_scorer("masked", str(tiny_model_dir("masked", "wordpiece")), device="cpu",
                    l2r_words="spaces")



@pytest.mark.slow
def test_the_config_setting_reaches_the_jobs_that_score_pppl_l2r(tmp_path):
    """`scoring.l2r_words` is passed to the scoring jobs of models with pppl_l2r (so that a
    change reruns them: their command changes) and to no other job."""
    from workflow_helpers import copy_checkout, default_config, plan

    config = default_config()
    config["models"]["bert_l2r"] = {"source": "org/bert", "kind": "masked",
                                    "methods": ["pppl", "pppl_l2r_region"],
                                    "datasets": ["german_case"]}
    config["models"]["bert"] = {"source": "org/bert", "kind": "masked", "methods": ["pppl"],
                                "datasets": ["german_case"]}
    for setting, root in ((None, "default"), ("items", "items")):
        if setting is not None:
            config["scoring"]["l2r_words"] = setting
        shells = {j: s for j, s in plan(copy_checkout(tmp_path / root, config),
                                        forceall=True).shell.items() if j[0] == "score"}
        l2r = [s for j, s in shells.items() if ("model", "bert_l2r") in j[1]]
        assert l2r and all(f"--l2r-words {setting or 'tokenizer'}" in s for s in l2r)
        others = [s for j, s in shells.items() if ("model", "bert_l2r") not in j[1]]
        assert any(("model", "bert") in j[1] for j in shells)
        assert others and not any("--l2r-words" in s for s in others)
