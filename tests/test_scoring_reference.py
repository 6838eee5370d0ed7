"""Every scoring method against a slow, obviously correct reference: one input at a time, one
masked copy at a time, full logits, on tiny BERT / GPT-2 / ELECTRA models with WordPiece,
byte-level BPE and Metaspace tokenizers. pppl_l2r is checked with both its words: the
tokenizer's (`word_ids()`, the default) and the items' (`pppl_l2r items`)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from scoring_models import TOKENIZER_KINDS, edge_case_items, make_item, tiny_model_dir
from transformers import (
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForPreTraining,
    AutoTokenizer,
)

from spudflow.scoring.heads import HEAD_ROWS
from spudflow.scoring.scorers import load_scorer

METHODS = {"masked": ["pppl", "pppl_l2r", "pppl_l2r items", "unmasked"], "causal": ["ppl"],
           "electra": ["electra"]}
CASES = [(kind, tok, method) for kind, methods in METHODS.items() for tok in TOKENIZER_KINDS
         for method in methods]


def reference_word(sentence: str, start: int, end: int, item) -> int | None:
    """The word a token belongs to: most overlap with its non-space characters; a token of
    spaces only belongs to the word whose first character follows it."""
    chars = [c for c in range(start, end) if not sentence[c].isspace()]
    if not chars:
        following = [c for c in range(end, len(sentence)) if not sentence[c].isspace()]
        chars = following[:1]
    if not chars:
        return None
    lo, hi = chars[0], chars[-1] + 1
    overlaps = [max(0, min(hi, e) - max(lo, s))
                for s, e in zip(item.word_starts, item.word_ends, strict=True)]
    return int(np.argmax(overlaps)) if max(overlaps, default=0) > 0 else None


@functools.cache
def reference_model(kind: str, directory):
    auto = {"causal": AutoModelForCausalLM, "masked": AutoModelForMaskedLM,
            "electra": AutoModelForPreTraining}[kind]
    return AutoTokenizer.from_pretrained(directory), auto.from_pretrained(directory).eval()


def reference_scores(kind: str, method: str, directory, item) -> list[float]:
    tokenizer, model = reference_model(kind, directory)
    sentence = item.sentence
    if kind == "causal":
        first = tokenizer.bos_token_id if tokenizer.bos_token_id is not None \
            else tokenizer.eos_token_id
        ids = [first] + tokenizer(sentence, add_special_tokens=False,
                                  split_special_tokens=True)["input_ids"]
        with torch.no_grad():
            logprobs = model(torch.tensor([ids])).logits[0].log_softmax(-1)
        return [logprobs[i - 1, ids[i]].item() for i in range(1, len(ids))]

    encoding = tokenizer(sentence, return_offsets_mapping=True, return_special_tokens_mask=True,
                         split_special_tokens=True)
    ids = encoding["input_ids"]
    scored = [p for p, special in enumerate(encoding["special_tokens_mask"]) if not special]
    if kind == "electra":
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
        return [torch.nn.functional.logsigmoid(-logits[p]).item() for p in scored]

    if method == "unmasked":
        with torch.no_grad():
            logprobs = model(torch.tensor([ids])).logits[0].log_softmax(-1)
        return [logprobs[p, ids[p]].item() for p in scored]
    # pppl_l2r's words: the tokenizer's word_ids() (as minicons), or `items`: the items' words
    if method == "pppl_l2r items":
        words = [reference_word(sentence, *encoding["offset_mapping"][p], item) for p in scored]
    else:
        words = [encoding.word_ids()[p] for p in scored]
    scores = []
    for k, p in enumerate(scored):
        masked = list(ids)
        masked[p] = tokenizer.mask_token_id
        if method.startswith("pppl_l2r") and words[k] is not None:
            for j in range(k + 1, len(scored)):
                if words[j] == words[k]:
                    masked[scored[j]] = tokenizer.mask_token_id
        with torch.no_grad():
            logprobs = model(torch.tensor([masked])).logits[0, p].log_softmax(-1)
        scores.append(logprobs[ids[p]].item())
    return scores


def scorer_of(kind: str, tokenizer_kind: str, method: str, **options):
    """(scorer, method it scores) of a case's method: `pppl_l2r items` is pppl_l2r with the
    items' words (l2r_words="items")."""
    method, _, words = method.partition(" ")
    if words:
        options["l2r_words"] = words
    return load_scorer(kind, str(tiny_model_dir(kind, tokenizer_kind)), device="cpu",
                       **options), method


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "tokenizer_kind", "method"), CASES)
def test_every_method_equals_the_reference(kind, tokenizer_kind, method):
    directory = tiny_model_dir(kind, tokenizer_kind)
    items = edge_case_items()
    # A small token budget forces several batches, with padding, mixing sentences.
    scorer, scored_method = scorer_of(kind, tokenizer_kind, method, batch_tokens=64)
    encoded = scorer.encode(items)
    assert all(e.skipped is None for e in encoded)
    targets = [list(range(e.n_tokens)) for e in encoded]
    results = scorer.score(encoded, scored_method, targets)
    for item, got in zip(items, results, strict=True):
        expected = reference_scores(kind, method, directory, item)
        assert len(got) == len(expected), item.item_id
        np.testing.assert_allclose(got, expected, atol=2e-5, rtol=0, err_msg=item.item_id)


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer_kind", TOKENIZER_KINDS)
def test_pppl_l2r_differs_from_pppl_only_on_multi_token_words(tokenizer_kind):
    """l2r masks more than pppl exactly when a later token of the same word (the tokenizer's)
    exists."""
    scorer = load_scorer("masked", str(tiny_model_dir("masked", tokenizer_kind)), device="cpu")
    encoded = scorer.encode(edge_case_items())
    targets = [list(range(e.n_tokens)) for e in encoded]
    pppl = scorer.score(encoded, "pppl", targets)
    l2r = scorer.score(encoded, "pppl_l2r", targets)
    multi_token_word = 0
    for sentence, a, b in zip(encoded, pppl, l2r, strict=True):
        words = sentence.tokenizer_word_index
        # a token whose id is the mask id already (Metaspace's piece `[MASK]` of the typed
        # `[MASK]`) changes nothing when masked
        ids = [sentence.input_ids[p] for p in sentence.positions]
        for k in range(sentence.n_tokens):
            word = words[k]
            has_later = word is not None and any(
                words[j] == word and ids[j] != scorer.tokenizer.mask_token_id
                for j in range(k + 1, sentence.n_tokens))
            multi_token_word += has_later
            assert (abs(a[k] - b[k]) > 1e-6) == has_later or not has_later
            if not has_later:
                assert a[k] == pytest.approx(b[k], abs=1e-5)
    assert multi_token_word > 0


def test_lm_head_runs_only_at_masked_positions():
    """PPPL computes vocabulary logits at one position per masked copy, not at every position."""
    scorer = load_scorer("masked", str(tiny_model_dir("masked", "wordpiece")), device="cpu",
                         batch_tokens=10_000)
    encoded = scorer.encode(edge_case_items()[:3])
    copies = sum(e.n_tokens for e in encoded)
    seen = []
    decoder = scorer.model.get_output_embeddings()
    handle = decoder.register_forward_hook(lambda m, args, out: seen.append(tuple(out.shape)))
    try:
        scorer.score(encoded, "pppl", [list(range(e.n_tokens)) for e in encoded])
    finally:
        handle.remove()
    # One vocabulary row per masked copy, over however many batches, each batch's rows padded
    # to a multiple of HEAD_ROWS (heads.py: a one-row product would take another kernel).
    assert {(rows, vocab) for rows, _, vocab in seen} == {(1, len(scorer.tokenizer))}
    assert all(n % HEAD_ROWS == 0 for _, n, _ in seen)
    assert copies <= sum(n for _, n, _ in seen) < copies + HEAD_ROWS * len(seen)


@pytest.mark.slow
def test_bfloat16_model_is_close_to_fp32_reference():
    directory = tiny_model_dir("masked", "bytebpe")
    items = edge_case_items()[:2]
    scorer = load_scorer("masked", str(directory), device="cpu", dtype="bfloat16")
    assert scorer.model.dtype == torch.bfloat16
    encoded = scorer.encode(items)
    results = scorer.score(encoded, "pppl", [list(range(e.n_tokens)) for e in encoded])
    for item, got in zip(items, results, strict=True):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, reference_scores("masked", "pppl", directory, item),
                                   atol=0.25)


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "tokenizer_kind", "method"), CASES)
def test_region_variant_equals_the_full_method_on_region_tokens(kind, tokenizer_kind, method):
    """M_region scores only region tokens (masking only those, or stopping a causal input after
    the region) and gets the same values as M for them."""
    items = [
        make_item("verb", "The dogs were barking loudly.", ["The", "dogs", "were", "barking",
                                                            "loudly", "."],
                  regions=[("verb", "were barking")]),
        make_item("first", "Supercalifragilistic postmen!", ["Supercalifragilistic", "postmen",
                                                             "!"], regions=[("noun", "Super")]),
        make_item("none", "A", ["A"]),
    ]
    scorer, method = scorer_of(kind, tokenizer_kind, method, batch_tokens=64)
    encoded = scorer.encode(items)
    full = scorer.score(encoded, method, [list(range(e.n_tokens)) for e in encoded])
    wanted = [e.tokens_in_any_region() for e in encoded]
    assert wanted[0] and wanted[1] and not wanted[2]
    region = scorer.score(encoded, method, wanted)
    for all_scores, tokens, region_scores in zip(full, wanted, region, strict=True):
        np.testing.assert_allclose(region_scores, all_scores[tokens], atol=2e-5, rtol=0)
