"""A scoring job: items in blocks of `block_size`, every method per block, both output tables
at the end.

Each finished block is written under OUT/.partial-<run key>/ (the key hashes the input file, the
model and the methods), so a job that is interrupted and started again skips the blocks it has;
the final tables are assembled from the blocks and renamed into place together, after which the
partial folder is removed. (Shards across jobs, `--shard I/N`, are whole blocks: shards.py.)
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spudflow.core.alignment import words_in_span
from spudflow.core.artifacts import ITEM_SCORES, TOKEN_SCORES
from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import write_artifact, write_parquet
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress_bar
from spudflow.core.text_hash import text_hash
from spudflow.scoring.cache import ScoreCache, item_key
from spudflow.scoring.encoding import EncodedItem
from spudflow.scoring.items import Item
from spudflow.scoring.methods import base_method, is_region_method
from spudflow.scoring.outputs import (
    ITEM_SCORES_FILE,
    ITEM_SCORES_SCHEMA,
    TOKEN_SCORES_FILE,
    TOKEN_SCORES_SCHEMA,
    empty_columns,
    table,
)
from spudflow.scoring.reductions import Unigram, item_statistics, lau_statistics

log = get_logger(__name__)


@dataclass
class Job:
    scorer: object                # CausalScorer, MaskedScorer, ElectraScorer or NgramScorer
    model_name: str
    methods: Sequence[str]
    unigram_for: Callable[[str | None], Unigram | None]   # item language -> unigram or None
    out_dir: Path
    run_key: str
    block_size: int
    # Schema metadata of the final tables (a `--shard` job's mark, shards.py); None: none.
    metadata: dict[bytes, bytes] | None = None
    cache: ScoreCache | None = None
    # words: SLOR, NormLP and Word-LP Min-1 over the words with `unigram_for`'s model; lau:
    # Lau et al.'s, with `</s>` and the n-gram model's own order-1 distribution (reductions.py).
    measures: str = "words"


def run_job(job: Job, items: Sequence[Item]) -> None:
    partial = job.out_dir / f".partial-{job.run_key}"
    blocks = [items[i:i + job.block_size] for i in range(0, len(items), job.block_size)] or [[]]
    paths = []
    for index, block in enumerate(blocks):
        token_path = partial / f"block-{index:05d}.{TOKEN_SCORES_FILE}"
        item_path = partial / f"block-{index:05d}.{ITEM_SCORES_FILE}"
        paths.append((token_path, item_path))
        if token_path.is_file() and item_path.is_file():
            log.info("block %d/%d: already done, reusing it", index + 1, len(blocks))
            continue
        token_table, item_table = score_block(job, block, f"block {index + 1}/{len(blocks)}")
        with atomic_outputs() as out:
            write_parquet(token_table, out.path(token_path))
            write_parquet(item_table, out.path(item_path))
    with atomic_outputs() as out:
        for name, index, artifact in ((TOKEN_SCORES_FILE, 0, TOKEN_SCORES),
                                      (ITEM_SCORES_FILE, 1, ITEM_SCORES)):
            gathered = pa.concat_tables(pq.read_table(p[index]) for p in paths)
            write_artifact(gathered.replace_schema_metadata(job.metadata),
                           out.path(job.out_dir / name), artifact)
    for stale in job.out_dir.glob(".partial-*"):  # this job's, and any left by other settings
        shutil.rmtree(stale, ignore_errors=True)
    if job.cache is not None:
        log.info("cache: %d hits, %d computed", job.cache.hits, job.cache.computed)


def write_empty(out_dir: Path, metadata: dict[bytes, bytes] | None = None) -> None:
    """Both tables with no rows (nothing to score), with `metadata` as in Job."""
    with atomic_outputs() as out:
        for name, artifact in ((TOKEN_SCORES_FILE, TOKEN_SCORES), (ITEM_SCORES_FILE, ITEM_SCORES)):
            schema = artifact.schema()
            write_artifact(table(empty_columns(schema), schema).replace_schema_metadata(metadata),
                           out.path(out_dir / name), artifact)


def score_block(job: Job, block: Sequence[Item], label: str) -> tuple[pa.Table, pa.Table]:
    encoded = job.scorer.encode(block)
    scorable = [e for e in encoded if e.skipped is None]
    left_out = Counter(e.skipped for e in encoded if e.skipped)
    for e in encoded:
        if e.skipped:
            log.warning("item %s left out (%s): %d input tokens, model maximum %s",
                        e.item.item_id, e.skipped, len(e.input_ids),
                        getattr(job.scorer, "max_length", None))
    if left_out:
        log.warning("%s: %d of %d items left out (%s); their item_scores rows have null "
                    "figures and the reason in `skipped`", label, sum(left_out.values()),
                    len(encoded), ", ".join(f"{k}: {v}" for k, v in sorted(left_out.items())))
    tokens, rows = empty_columns(TOKEN_SCORES_SCHEMA), empty_columns(ITEM_SCORES_SCHEMA)
    for method in job.methods:
        region_only = is_region_method(method)
        targets = [e.tokens_in_any_region() if region_only else list(range(e.n_tokens))
                   for e in scorable]
        runner = getattr(job.scorer, "runner", None)
        before = dataclasses.replace(runner.stats) if runner else None
        started = time.perf_counter()
        scores = _scores(job, scorable, method, targets, label)
        seconds = time.perf_counter() - started
        n_tokens = sum(len(t) for t in targets)
        log.info("%s %s: %d items, %d tokens in %.1f s (%.1f items/s, %.0f tokens/s)", label,
                 method, len(scorable), n_tokens, seconds, len(scorable) / max(seconds, 1e-9),
                 n_tokens / max(seconds, 1e-9))
        if runner:
            log.info("%s %s: %s", label, method, runner.stats.since(before).describe())
        by_item = {id(e): (t, s) for e, t, s in zip(scorable, targets, scores, strict=True)}
        for sentence in encoded:
            if sentence.skipped:
                _add_skipped_rows(rows, job, method, sentence, region_only)
                continue
            wanted, values = by_item[id(sentence)]
            unseen = _unseen(job, sentence)
            _add_token_rows(tokens, job, method, sentence, wanted, values, unseen)
            _add_item_rows(rows, job, method, sentence, dict(zip(wanted, values, strict=True)),
                           region_only, unseen)
    return table(tokens, TOKEN_SCORES_SCHEMA), table(rows, ITEM_SCORES_SCHEMA)


def _scores(job: Job, scorable: Sequence[EncodedItem], method: str,
            targets: Sequence[Sequence[int]], label: str) -> list[np.ndarray]:
    """Each item's wanted token scores: from the cache where it has them, else computed (and
    then added to it)."""
    found, keys = {}, []
    if job.cache is not None:
        # with any setting of the scorer that changes the method's scores (pppl_l2r's words)
        keys = [item_key(job.scorer.method_key(method), e.item) for e in scorable]
        found = job.cache.lookup(keys)
    # An entry is used when it has one score per wanted token; anything else is scored.
    todo = [i for i in range(len(scorable))
            if not keys or keys[i] not in found or len(found[keys[i]]) != len(targets[i])]
    bar = progress_bar(sum(1 for i in todo if targets[i]), f"{job.model_name} {method} {label}",
                       unit="item")
    computed = job.scorer.score([scorable[i] for i in todo], base_method(method),
                                [targets[i] for i in todo], bar)
    bar.close()
    if job.cache is None:
        return computed
    new = {keys[i]: np.asarray(values, dtype=np.float64)
           for i, values in zip(todo, computed, strict=True)}
    job.cache.store(new)
    job.cache.hits += len(scorable) - len(todo)
    job.cache.computed += len(todo)
    return [new.get(key, found.get(key)) for key in keys]


def _unseen(job: Job, sentence: EncodedItem) -> list[bool] | None:
    """Per token, whether the model never saw its word in training (n-gram models); None for
    models without a training vocabulary of words (transformers: their subword vocabulary
    covers every word)."""
    unseen = getattr(job.scorer, "unseen", None)
    return None if unseen is None else unseen(sentence)


def _add_token_rows(columns: dict, job: Job, method: str, sentence: EncodedItem,
                    wanted: Sequence[int], values: Sequence[float],
                    unseen: list[bool] | None) -> None:
    for token, value in zip(wanted, values, strict=True):
        columns["item_id"].append(sentence.item.item_id)
        columns["model"].append(job.model_name)
        columns["method"].append(method)
        columns["token_index"].append(token)
        columns["token"].append(sentence.tokens[token])
        columns["char_start"].append(sentence.char_starts[token])
        columns["char_end"].append(sentence.char_ends[token])
        columns["word_index"].append(sentence.word_index[token])
        columns["logprob"].append(float(value))
        columns["unseen"].append(None if unseen is None else unseen[token])


def _row_spans(sentence: EncodedItem, region_only: bool):
    """(region name or None, token indices, word indices) of each item_scores row of an item:
    the whole sentence (unless a region method), then each named region."""
    item = sentence.item
    spans = [] if region_only else [(None, list(range(sentence.n_tokens)),
                                     list(range(len(item.words))))]
    # A region is named: spans sharing a name (every replaced word of a nonce sentence is a
    # `replaced` span) form one region, scored as one row, in order of first appearance.
    by_name: dict[str, tuple[set[int], set[int]]] = {}
    for r in item.regions:
        tokens, words = by_name.setdefault(r.name, (set(), set()))
        tokens.update(sentence.region_tokens(r))
        words.update(words_in_span(r.start, r.end, item.word_starts, item.word_ends))
    spans += [(name, sorted(tokens), sorted(words)) for name, (tokens, words) in by_name.items()]
    return spans


def _add_item_rows(columns: dict, job: Job, method: str, sentence: EncodedItem,
                   logprob_of: dict[int, float], region_only: bool,
                   unseen: list[bool] | None) -> None:
    item = sentence.item
    lau = job.measures == "lau"
    unigram = None if lau else job.unigram_for(item.language)
    for region, token_set, word_set in _row_spans(sentence, region_only):
        logprobs = [logprob_of[t] for t in token_set]
        if lau and region is None:
            order1 = job.scorer.order1_logprobs(sentence, base_method(method))
            row = lau_statistics(logprobs, order1, job.scorer.padded_length(sentence),
                                 len(word_set))
        else:  # with lau, a region row: Lau et al.'s measures are of whole sentences (none here)
            row = item_statistics(logprobs, [sentence.word_index[t] for t in token_set],
                                  item.words, word_set, unigram,
                                  [sentence.words_of_token(t) for t in token_set])
        row["n_unseen"] = None if unseen is None else sum(unseen[t] for t in token_set)
        _append_row(columns, item, job.model_name, method, region, row, None)


def _add_skipped_rows(columns: dict, job: Job, method: str, sentence: EncodedItem,
                      region_only: bool) -> None:
    """A left-out item keeps the rows it would have had, with null statistics and the reason."""
    for region, token_set, word_set in _row_spans(sentence, region_only):
        row = {"logprob_sum": None, "n_tokens": len(token_set), "n_words": len(word_set),
               "ppl": None, "mean_logprob": None, "slor": None, "word_lp_min1": None,
               "normlp": None, "n_unseen": None}
        _append_row(columns, sentence.item, job.model_name, method, region, row,
                    sentence.skipped)


def _append_row(columns: dict, item: Item, model: str, method: str, region: str | None,
                row: dict, skipped: str | None) -> None:
    columns["item_id"].append(item.item_id)
    columns["text_hash"].append(text_hash(item.sentence))
    columns["model"].append(model)
    columns["method"].append(method)
    columns["region"].append(region)
    for name, value in row.items():
        columns[name].append(value)
    columns["skipped"].append(skipped)
