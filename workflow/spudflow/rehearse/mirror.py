"""The rehearsal's treebank mirror: every treebank URL of a config answered by a stand-in
treebank of the same language under the URL's file name, and the `fetch.mirror` entries
(URL prefix -> folder) that point the fetch rule at it."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from spudflow.core.split_files import is_url, split_locations
from spudflow.rehearse.conllu_blocks import block_text, read_blocks, renamed, write_if_changed

# Sentences per split of a small rehearsal: enough to train a probe for an epoch and to give
# every nonce method candidates, few enough that a whole preset runs in minutes.
SMALL_SENTENCES = {"train": 24, "dev": 12, "test": 12}
SMALL_OTHER = 12

# --size full: the real splits' sentence counts (UD 2.10 stats.xml; the SPUD paper's Table 6
# treebanks). HDT's and SynTagRus's training files are estimated as a quarter and a third of
# their training sets (the release splits them into four and three files): every file has its
# entry, or a full rehearsal would grow only the first and leave a split at a fraction of its
# size.
REAL_SENTENCES = {
    "ar_padt-ud-train.conllu": 6075, "ar_padt-ud-dev.conllu": 909,
    "ar_padt-ud-test.conllu": 680,
    "de_hdt-ud-train-a-1.conllu": 38259, "de_hdt-ud-train-a-2.conllu": 38259,
    "de_hdt-ud-train-b-1.conllu": 38259, "de_hdt-ud-train-b-2.conllu": 38258,
    "de_hdt-ud-dev.conllu": 18434, "de_hdt-ud-test.conllu": 18459,
    "en_ewt-ud-train.conllu": 12543, "en_ewt-ud-dev.conllu": 2001,
    "en_ewt-ud-test.conllu": 2077,
    "fr_gsd-ud-train.conllu": 14450, "fr_gsd-ud-dev.conllu": 1476,
    "fr_gsd-ud-test.conllu": 416,
    "ru_syntagrus-ud-train-a.conllu": 16271, "ru_syntagrus-ud-train-b.conllu": 16271,
    "ru_syntagrus-ud-train-c.conllu": 16271, "ru_syntagrus-ud-dev.conllu": 6584,
    "ru_syntagrus-ud-test.conllu": 6491,
}


@dataclass(frozen=True)
class StandIn:
    treebank: str
    split: str
    url: str
    file: Path          # in the mirror
    sources: tuple[str, ...]
    sentences: int
    real: int | None    # the real split's sentences, where known
    note: str


def source_files(repo: Path, lang: str) -> list[Path]:
    """The treebanks a stand-in of `lang` is cut from: the vendored ones, and ../shared/data's
    when present (more sentences)."""
    found = sorted((repo / "resources" / "ud").glob(f"*/{lang}_*.conllu*"))
    shared = repo.parent / "shared" / "data" / "ud"
    if shared.is_dir():
        found += sorted(shared.glob(f"*/{lang}_*.conllu*"))
    return found


def mirror_location(mirror: Path, url: str) -> tuple[str, Path]:
    """(URL prefix, the file in the mirror): the prefix is the URL up to its file name."""
    parts = urlsplit(url)
    prefix = url.rsplit("/", 1)[0] + "/"
    folder = mirror / parts.netloc / parts.path.lstrip("/").rsplit("/", 1)[0]
    return prefix, folder / url.rsplit("/", 1)[1]


def unique_blocks(paths: list[Path]) -> list[str]:
    """Every sentence of `paths` once, under a sent_id of its own: a vendored treebank is a
    subset of ../shared's copy, so the same block is read twice; a block that only shares its
    sent_id with another treebank's is renamed."""
    seen: dict[str, str] = {}
    unique: list[str] = []
    for path in paths:
        for block in read_blocks(path):
            sent_id = _sent_id(block)
            if sent_id in seen:
                if seen[sent_id] == block:
                    continue
                block = renamed(block, f"-{path.name.split('.')[0]}")
                sent_id = _sent_id(block)
                if sent_id in seen:
                    continue
            seen[sent_id] = block
            unique.append(block)
    return unique


def _sent_id(block: str) -> str:
    for line in block.splitlines():
        if line.startswith("# sent_id ="):
            return line.split("=", 1)[1].strip()
    return block  # no sent_id: the block itself is what must not repeat


def _cut(blocks: list[str], size: str, name: str, index: int, split: str) -> tuple[list[str], str]:
    """The sentences of one stand-in split: small, a seeded slice of its own (splits of a
    treebank do not share sentences); full, every sentence repeated under new sent_ids up to the
    real split's count."""
    order = list(blocks)
    random.Random(f"rehearse:{name}").shuffle(order)
    if size == "small":
        n = SMALL_SENTENCES.get(split, SMALL_OTHER)
        start = (index * n) % max(len(order) - n, 1)
        return order[start:start + n], f"{n} sampled sentences"
    target = REAL_SENTENCES.get(name.removesuffix(".gz"))
    if target is None:
        return order, f"all {len(order)} sentences (real size unknown)"
    grown = [order[i % len(order)] if i < len(order)
             else renamed(order[i % len(order)], f"-r{i // len(order)}") for i in range(target)]
    return grown, f"grown to the real {target} sentences by repeating"


def fill_mirror(config: dict, repo: Path, mirror: Path,
                size: str) -> tuple[dict, list[StandIn], set[str]]:
    """Stand-in treebanks for every URL split of `config`; returns the `fetch.mirror` mapping,
    what stands in for what and the text of every sentence the treebanks hold."""
    prefixes, stand_ins = {}, []
    taken: set[str] = set()
    manifest = mirror / "rehearsal-mirror.json"
    last = json.loads(manifest.read_text()) if manifest.is_file() else {}
    written: dict[str, str] = {}

    def _edited(file: Path, text: str) -> bool:
        """A file whose content is not what the last rehearsal wrote, while the rehearsal would
        write the same again: the user edited the stand-in, which a rehearsal keeps (only what
        depends on it reruns)."""
        if not file.is_file() or last.get(str(file)) != _digest(text):
            return False
        return _digest(_plain(file)) != _digest(text)

    for treebank, spec in config["treebanks"].items():
        lang = spec["lang"]
        sources, note = source_files(repo, lang), ""
        if not sources:
            sources, note = source_files(repo, "en"), f"no {lang} treebank at hand: English; "
        blocks = unique_blocks(sources)
        locations = [(split, part, url) for split in spec["splits"]
                     for part, url in enumerate(split_locations(config, treebank, split))]
        for index, (split, part, url) in enumerate(locations):
            if not is_url(url):
                local = repo / url
                if local.is_file():
                    taken.update(block_text(b) for b in read_blocks(local))
                continue
            prefix, file = mirror_location(mirror, url)
            prefixes[prefix] = str(file.parent)
            chosen, how = _cut(blocks, size, file.name, index, split)
            if part:  # the parts of a split given as a list are one split: sent_ids unique
                chosen = [renamed(block, f"-part{part + 1}") for block in chosen]
            text = "".join(b + "\n\n" for b in chosen)
            if _edited(file, text):
                how = "edited in the mirror by hand (kept)"
            else:
                write_if_changed(file, text)
            written[str(file)] = _digest(text)
            taken.update(block_text(b) for b in chosen)
            stand_ins.append(StandIn(treebank, split, url, file,
                                     tuple(os.path.relpath(p, repo) for p in sources),
                                     len(chosen), REAL_SENTENCES.get(file.name), note + how))
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps(written, indent=2, sort_keys=True) + "\n")
    return prefixes, stand_ins, taken


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
