"""Small CoNLL-U treebanks written inline for the nonce tests, and a way to run the stage on them.

A sentence is written one word per line as `ID FORM LEMMA UPOS FEATS HEAD DEPREL [MISC]`
(whitespace-separated, `_` for empty); a multiword token as `3-4 du`. XPOS defaults to `_`
(or give `xpos=TAG` in MISC position 9 via `words()`), DEPS is `_`; sent_id and text are added.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.cli import main


def _text(rows: list[list[str]]) -> str:
    pieces = []
    covered = 0
    for row in rows:
        ident, form, misc = row[0], row[1], row[9]
        if "-" in ident:
            covered = int(ident.split("-")[1])
        elif int(ident) <= covered:
            continue
        pieces.append(form + ("" if "SpaceAfter=No" in misc.split("|") else " "))
    return "".join(pieces).strip()


def conllu(*sentences: str, xpos: bool = False) -> str:
    """Sentences in the short form -> CoNLL-U. With XPOS, the 5th field is XPOS and FEATS the
    6th (`ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL [MISC]`)."""
    out = []
    for number, sentence in enumerate(sentences, 1):
        rows = []
        for line in sentence.strip().splitlines():
            fields = line.split()
            if "-" in fields[0]:
                rows.append([fields[0], fields[1]] + ["_"] * 7 + [fields[2] if len(fields) > 2
                                                                   else "_"])
                continue
            if not xpos:
                fields.insert(4, "_")
            ident, form, lemma, upos, tag, feats, head, deprel = fields[:8]
            misc = fields[8] if len(fields) > 8 else "_"
            rows.append([ident, form, lemma, upos, tag, feats, head, deprel, "_", misc])
        out.append(f"# sent_id = s{number}")
        out.append(f"# text = {_text(rows)}")
        out += ["\t".join(row) for row in rows]
        out.append("")
    return "\n".join(out) + "\n"


def ingest(tmp_path: Path, text: str, name: str = "tb") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / f"{name}.conllu"
    source.write_text(text, encoding="utf-8")
    directory = tmp_path / "ingest" / name
    assert main(["ingest", str(source), "--out", str(directory)]) == 0
    return directory


def nonce(directory: Path, lang: str, *args: str, seed: int = 1, method: str = "spud",
          out: Path | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    out = out or directory.parent.parent / "nonce" / f"{directory.name}-{lang}-{method}-{seed}"
    code = main(["nonce", str(directory), "--lang", lang, "--seed", str(seed), "--method", method,
                 "--out", str(out), "--conllu", str(out / "nonce.conllu"), *args])
    assert code == 0
    return pl.read_parquet(out / "tokens.parquet"), pl.read_parquet(out / "sentences.parquet")


def texts(sentences: pl.DataFrame) -> list[str]:
    return sentences.sort("sent_index").get_column("text").to_list()


def run_texts(tmp_path: Path, lang: str, *sentences: str, seed: int = 1, method: str = "spud",
              args: tuple[str, ...] = ()) -> list[str]:
    """Ingest SENTENCES, make the nonce version, return its sentence texts."""
    directory = ingest(tmp_path, conllu(*sentences))
    return texts(nonce(directory, lang, *args, seed=seed, method=method)[1])
