"""Labelled stand-ins for the files a config asks the user to supply (text corpora such as
German Wikipedia or the BNC, the CoLA release), cut from the treebanks' text, and the text the
tiny models' tokenizers are built from."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

from spudflow.rehearse.conllu_blocks import block_text, read_blocks, write_if_changed
from spudflow.rehearse.mirror import source_files

# Sentences of a language the tokenizers and the corpus stand-ins take (plenty for tiny models).
TEXT_SENTENCES = 2000
# A CoLA stand-in's pairs (a sentence and its words shuffled) in a small rehearsal; a full one
# has the rows of the real file of that name (the public CoLA release, raw/*.tsv).
COLA_SENTENCES = 60
REAL_COLA_ROWS = {"in_domain_train.tsv": 8551, "in_domain_dev.tsv": 527,
                  "out_of_domain_dev.tsv": 516,
                  # the phenomenon sets (nyu-mll/CoLA-baselines acceptability_corpus/phenomena/)
                  "svo.tsv": 500, "wh_extraction.tsv": 520, "inchoative.tsv": 182,
                  "singular_pl.tsv": 676, "reflexive.tsv": 144}
# Fewer free sentences than this: the corpus stand-in is of shuffled words.
MIN_CORPUS_SENTENCES = 200
# What stands in for a user's German case templates: the project's own set.
GERMAN_TEMPLATES = "config/templates/german_case.tsv"


@dataclass(frozen=True)
class UserFile:
    path: str        # as the config names it (relative to the working directory)
    what: str        # the config key
    made: str        # what stands in


def language_text(repo: Path, lang: str) -> list[str]:
    """Sentences of `lang` from the stand-in treebanks' sources (English where none is)."""
    paths = source_files(repo, lang) or source_files(repo, "en")
    return [block_text(b) for p in paths for b in read_blocks(p)]


def config_languages(config: dict) -> list[str]:
    langs = {spec["lang"] for spec in config["treebanks"].values()}
    langs |= {spec["lang"] for spec in config.get("ngrams", {}).values()}
    for spec in config.get("models", {}).values():
        langs |= set(spec.get("languages", []))
    return sorted(langs)


def _text_files(config: dict):
    """(config key, path, language) of every text file an n-gram model or control trains on,
    and of the corpus the Japanese verb pairs are counted in."""
    for section in ("ngrams", "controls"):
        for name, spec in (config.get(section) or {}).items():
            entries = spec.get("text") or []
            for entry in entries:
                if entry.split("/", 1)[0] in config["treebanks"]:
                    continue  # treebank/split, not a file
                yield f"{section}.{name}.text", entry, spec.get("lang", "en")
    japanese = (config.get("pairs") or {}).get("japanese_transitivity") or {}
    corpus = japanese.get("corpus") if japanese.get("enabled") else None
    for entry in [corpus] if isinstance(corpus, str) else corpus or []:
        if not entry.startswith("workflow:"):
            yield "pairs.japanese_transitivity.corpus", entry, "ja"


def _lexicon_verbs(config: dict, repo: Path) -> list[str]:
    """Both verbs of every pair of the Japanese lexicon: the treebank text holds too few of them
    for the preset's pairs to be counted (n_verb_pairs of them, each at least min_count)."""
    entry = config["pairs"]["japanese_transitivity"].get("lexicon") or ""
    path = repo / entry.removeprefix("workflow:")
    if not entry or not path.is_file():
        return []  # a lexicon of the user's own: the treebank text alone
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    return [verb for row in rows[1:] for verb in row[:2]]


def _german_templates(config: dict, repo: Path) -> list[str]:
    """The German case templates file, where the config names one the user supplies (the
    paper's 50, config/papers/german_case.yaml), not a file of the workflow."""
    german = (config.get("pairs") or {}).get("german_case") or {}
    entry = german.get("templates") if german.get("enabled") else None
    if not entry or entry.startswith("workflow:") or (repo / entry).is_file():
        return []
    return [entry]


def _scrambled(sentence: str, rng: random.Random) -> str:
    words = sentence.split()
    shuffled = list(words)
    while len(words) > 1 and shuffled == words:
        rng.shuffle(shuffled)
    return " ".join(shuffled)


def _free(texts: list[str], taken: set[str], part: int) -> list[str]:
    """Half of the sentences (part 0 or 1), none in `taken`: corpus and CoLA stand-ins share no
    sentence with each other or with the treebanks, which the pipeline's training-overlap check
    (docs/controls.md) would refuse."""
    def side(text: str) -> int:  # by content, so a repeated sentence is on one side only
        return hashlib.sha256(" ".join(text.lower().split()).encode()).digest()[0] % 2

    return list(dict.fromkeys(t for t in texts if side(t) == part and t not in taken))[
        :TEXT_SENTENCES]


def corpus_sentences(repo: Path, lang: str, taken: set[str]) -> tuple[list[str], str]:
    """A text corpus stand-in: the language's treebank sentences no treebank of the config
    holds; where the config reads every one (German: PUD is the only vendored treebank), the
    words of each shuffled, which keeps the vocabulary and repeats no treebank sentence."""
    texts = language_text(repo, lang)
    free = _free(texts, taken, 0)
    if len(free) >= MIN_CORPUS_SENTENCES:
        return free, "treebank sentences"
    rng = random.Random(f"rehearse:corpus:{lang}")
    shuffled = [_scrambled(t, rng) for t in texts]
    return _free(free + shuffled, taken, 0), "treebank sentences, words shuffled (the config " \
        "reads every treebank sentence at hand)"


def cola_row_count(name: str, size: str) -> int:
    """The rows of a CoLA stand-in: a small rehearsal's, or with `--size full` the real file's
    of that name."""
    small = 2 * COLA_SENTENCES
    return REAL_COLA_ROWS.get(name, small) if size == "full" else small


def cola_rows(repo: Path, name: str, taken: set[str], n_rows: int,
              source: str = "standin") -> tuple[str, str]:
    """CoLA's raw TSV (source, label, original mark, sentence) of `n_rows` rows: treebank
    sentences labelled 1, each followed by its words shuffled labelled 0 (mark `*`); and what
    stands in. Where the free sentences are too few for the rows, they are used again (with
    other shuffles), and the label says so. A phenomenon set's source column is empty
    (`source` "")."""
    rng = random.Random(f"rehearse:cola:{name}")
    sentences = [s for s in _free(language_text(repo, "en"), taken, 1)
                 if 3 <= len(s.split()) <= 20]
    rng.shuffle(sentences)
    if not sentences:
        raise ValueError(f"{name}: no English treebank sentence is free for a CoLA stand-in")
    pairs = (n_rows + 1) // 2
    rows = []
    for k in range(pairs):
        sentence = sentences[k % len(sentences)]
        rows.append(f"{source}\t1\t\t{sentence}")
        rows.append(f"{source}\t0\t*\t{_scrambled(sentence, rng)}")
    made = (f"{n_rows} rows: English treebank sentences (label 1) and their words shuffled "
            "(label 0)")
    if pairs > len(sentences):
        made += f", each of the {len(sentences)} sentences used up to " \
                f"{-(-pairs // len(sentences))} times"
    return "".join(row + "\n" for row in rows[:n_rows]), made


def make_user_files(config: dict, repo: Path, workdir: Path, taken: set[str],
                    size: str = "small") -> list[UserFile]:
    """Write a stand-in for every user-supplied file of `config` (also where the checkout has
    the real one: a rehearsal never reads a corpus), at the place the config names, relative to
    the rehearsal's working directory. `taken`: the treebanks' sentences, which no stand-in
    repeats. `size` full: a CoLA file has the real file's rows (REAL_COLA_ROWS; a file of
    another name, the small stand-in's)."""
    made = []
    for key, entry, lang in _text_files(config):
        sentences, how = corpus_sentences(repo, lang, taken)
        if key == "pairs.japanese_transitivity.corpus":
            verbs = _lexicon_verbs(config, repo)
            sentences = sentences + [f"{verb}。" for verb in verbs]
            how += f", and each of the lexicon's {len(verbs)} verbs on a line of its own"
        write_if_changed(_target(workdir, entry), "".join(s + "\n" for s in sentences))
        made.append(UserFile(entry, key, f"{len(sentences)} {lang} {how}"))
    for entry in _german_templates(config, repo):
        own = repo / GERMAN_TEMPLATES
        write_if_changed(_target(workdir, entry), own.read_text(encoding="utf-8"))
        made.append(UserFile(entry, "pairs.german_case.templates", f"the project's own templates "
                             f"({GERMAN_TEMPLATES}, the same format; not the paper's 50)"))
    cola = (config.get("pairs") or {}).get("cola") or {}
    if cola.get("enabled"):
        for entry in cola.get("files", []):
            name = Path(entry).name
            rows, what = cola_rows(repo, name, taken, cola_row_count(name, size))
            write_if_changed(_target(workdir, entry), rows)
            made.append(UserFile(entry, "pairs.cola.files", what))
    return made


def check_user_files(config: dict) -> None:
    """Refuse, before anything is written, a user-supplied file no stand-in can be made for."""
    cola = (config.get("pairs") or {}).get("cola") or {}
    entries = [entry for _, entry, _ in _text_files(config)]
    entries += cola.get("files", []) if cola.get("enabled") else []
    for entry in entries:
        _relative(entry)


def _relative(entry: str) -> str:
    if Path(entry).is_absolute():
        raise ValueError(f"{entry}: missing, and a stand-in is only made for a path relative to "
                         "the working directory")
    return entry


def _target(workdir: Path, entry: str) -> Path:
    return workdir / _relative(entry)
