"""One nonce treebank from an ingested one: word tables -> lexicon -> candidate index ->
seeded replacement -> text."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.treebank import read_treebank, refuse_nonce_treebank
from spudflow.nonce import DEFAULT_UPOS
from spudflow.nonce.candidates import FORMS, WEIGHTS, build_index
from spudflow.nonce.context import HOOK_FREE_METHODS, NONCE_METHODS, with_context
from spudflow.nonce.feats_match import EXACT, FEATS_MATCHES, REFERENCE, matching_levels
from spudflow.nonce.languages import get_hooks
from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.lexicon import build_lexicon, check_external, read_lexicon_tsv
from spudflow.nonce.replace import CASES, KEEP, MATCH, MWT_MODES, SPLIT, Replacer
from spudflow.nonce.stats import replacement_statistics
from spudflow.nonce.surface import with_texts
from spudflow.nonce.words import detect_mode, word_frame

log = get_logger(__name__)



@dataclass
class NonceSettings:
    lang: str
    seed: int
    method: str = "spud"
    upos: tuple[str, ...] = DEFAULT_UPOS
    pools: list[Path] = field(default_factory=list)         # extra candidate pools
    lexicon_from: list[Path] = field(default_factory=list)  # extra lexicon treebanks
    lexicons: list[Path] = field(default_factory=list)      # external TSV lexicons
    options: dict[str, str] = field(default_factory=dict)   # language options
    case: str = MATCH                # replacements' capitals: MATCH or REFERENCE (surface.py)
    multiword_tokens: str = KEEP     # KEEP their surface or SPLIT them into words (surface.py)
    candidate_weights: str = FORMS   # a unit's chance: its FORMS in the context, or UNIFORM
    feats_match: str = EXACT         # a form's FEATS: EXACT, or REFERENCE (feats_match.py)
    treebank: str = ""
    split: str = ""


def _read(directory: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    for name in ("tokens.parquet", "sentences.parquet"):
        if not (directory / name).is_file():
            raise InputError(directory / name, None, "no such file (not an ingested treebank?)")
    tokens, sentences = read_treebank(directory)
    # A nonce version of a nonce version would pass for one of the original sentences.
    refuse_nonce_treebank(directory, tokens, "spudflow nonce makes nonce versions of an "
                          "ingested treebank")
    return tokens.sort("sent_index", "token_index"), sentences.sort("sent_index")


def _others(directory: Path, extra: list[Path]) -> list[Path]:
    """EXTRA without DIRECTORY itself and without repeats (the input is always included)."""
    seen = {directory.resolve()}
    out = []
    for path in extra:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            out.append(path)
    return out


def _without_mwts(tokens: pl.DataFrame, sentences: pl.DataFrame
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The treebank in syntactic words, as the reference's preprocessing left it: no
    multiword-token lines (their words become surface tokens), token_index renumbered."""
    tokens = (tokens.filter(pl.col("token_type") != "mwt")
              .with_columns(token_index=pl.int_range(pl.len(), dtype=pl.Int32)
                            .over("sent_index")))
    return tokens, sentences.with_columns(n_tokens=pl.col("n_words"))


def make_nonce(directory: Path, settings: NonceSettings
               ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(tokens, sentences, statistics) of the nonce version of the ingested treebank DIRECTORY."""
    if settings.method not in NONCE_METHODS:
        raise InputError("--method", None, f"unknown method {settings.method!r}")
    if settings.case not in CASES:
        raise InputError("--case", None, f"unknown case {settings.case!r}")
    if settings.multiword_tokens not in MWT_MODES:
        raise InputError("--multiword-tokens", None,
                         f"unknown mode {settings.multiword_tokens!r}")
    if settings.candidate_weights not in WEIGHTS:
        raise InputError("--candidate-weights", None,
                         f"unknown weights {settings.candidate_weights!r}")
    if settings.feats_match not in FEATS_MATCHES:
        raise InputError("--feats-match", None, f"unknown match {settings.feats_match!r}")
    started = time.perf_counter()
    hooks = get_hooks(settings.lang, settings.options)  # options are checked either way
    if settings.method in HOOK_FREE_METHODS:
        hooks = LanguageHooks()  # the language-independent algorithm, no hook of LANG
    hooks.words_apart = settings.multiword_tokens == SPLIT
    upos = list(settings.upos)
    tokens, sentences = _read(directory)
    mode = detect_mode(tokens, upos, str(directory))
    own = word_frame(tokens, hooks, mode, str(directory))

    frames: dict[Path, pl.DataFrame] = {}

    def words_of(path: Path) -> pl.DataFrame:
        if path not in frames:
            frames[path] = word_frame(_read(path)[0], hooks, mode, str(path))
        return frames[path]

    # Pool treebanks are of the language too: their words also feed the lexicon.
    lexicon_frames = [own] + [words_of(p) for p in
                              _others(directory, settings.pools + settings.lexicon_from)]
    external = [read_lexicon_tsv(p, hooks, mode) for p in check_external(mode, settings.lexicons)]
    match = None
    if settings.feats_match == REFERENCE and mode.morph == "feats":
        morphs = pl.concat([f.select("upos", "morph") for f in lexicon_frames + external])
        match = matching_levels(morphs.filter(pl.col("upos").is_in(upos)),
                                own.filter(pl.col("upos").is_in(upos)).select("upos", "morph"),
                                hooks.feats_levels)
    lexicon = build_lexicon(lexicon_frames, upos, external,
                            class_fallback=hooks.form_class_fallback, match=match)

    # Contexts need every word (dependents of any UPOS); only targets of the UPOS list remain.
    # Protected words (French `ne`) are neither replaced nor candidates.
    protected = hooks.protected()
    protected = pl.lit(False) if protected is None else protected.fill_null(False)

    def candidates_of(words: pl.DataFrame) -> pl.DataFrame:
        return (with_context(words, settings.method, hooks)
                .filter(pl.col("upos").is_in(upos))
                .with_columns(protected=protected))

    targets = candidates_of(own)
    pool = [candidates_of(words) for words in
            [own] + [words_of(p) for p in _others(directory, settings.pools)]]
    pool = [words.filter(~pl.col("protected")) for words in pool]
    index = build_index(targets, pool, lexicon, settings.candidate_weights)
    log.info("%s: %d words, %d targets, lexicon %d entries, %d candidate groups (%.2f s)",
             directory, own.height, targets.height, lexicon.height, len(index.groups),
             time.perf_counter() - started)

    replacer = Replacer(tokens, index, hooks, settings.seed, case=settings.case,
                        multiword_tokens=settings.multiword_tokens)
    keys = {i: (s if s is not None else f"#{i}") for i, s in zip(
        sentences.get_column("sent_index").to_list(), sentences.get_column("sent_id").to_list(),
        strict=True)}
    replacer.run(keys)
    nonce_tokens = replacer.tokens(tokens)
    nonce_sentences = with_texts(sentences, replacer.new_text)
    labels = {"treebank": settings.treebank or directory.parent.name,
              "split": settings.split or directory.name, "language": settings.lang,
              "method": settings.method, "seed": settings.seed}
    stats = replacement_statistics(nonce_tokens, replacer.outcomes(), upos, labels)
    if settings.multiword_tokens == SPLIT:
        nonce_tokens, nonce_sentences = _without_mwts(nonce_tokens, nonce_sentences)
    total = stats.filter(pl.col("upos") == "ALL").row(0, named=True)
    log.info("%s: replaced %d of %d words (%.1f%%) in %.2f s", directory, total["replaced"],
             total["words"], 100 * total["replacement_ratio"], time.perf_counter() - started)
    return nonce_tokens, nonce_sentences, stats
