"""Known hub ids -> the model family a tiny stand-in imitates: the architecture class, the
tokenizer type and the real model's shape (for the rehearsal's estimate of the real run)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    name: str
    architecture: str   # tiny_models.ARCHITECTURES key
    tokenizer: str      # tiny_models.TOKENIZERS key
    layers: int         # of the real model (a stand-in has the probe's: cli.stand_in_layers)
    hidden: int         # of the real model: probe feature bytes in the estimate
    parameters: float   # of the real model, in millions


FAMILIES = {f.name: f for f in (
    Family("bert", "bert", "wordpiece", 12, 768, 110),
    Family("bert-multilingual", "bert", "wordpiece", 12, 768, 178),
    Family("bert-japanese", "bert", "wordpiece-ja", 12, 768, 111),
    Family("bert-japanese-char", "bert", "char", 12, 768, 90),
    Family("roberta", "roberta", "bytebpe", 12, 768, 125),
    Family("xlm-roberta", "xlm-roberta", "unigram", 12, 768, 278),
    Family("electra", "electra", "wordpiece", 12, 768, 110),
    Family("electra-japanese", "electra", "wordpiece-ja", 12, 768, 110),
    Family("gpt2", "gpt2", "bytebpe", 12, 768, 124),
    Family("gpt2-medium-sentencepiece", "gpt2", "unigram", 24, 1024, 336),
    Family("mgpt", "gpt2", "bytebpe", 24, 2048, 1417),
    Family("gpt-neo", "gpt-neo", "bytebpe", 24, 2048, 1316),
)}

# Every preset's hub models and common ones.
KNOWN_IDS = {
    "bert-base-cased": "bert",
    "bert-base-uncased": "bert",
    "bert-large-cased": "bert",
    "bert-base-multilingual-cased": "bert-multilingual",
    "bert-base-multilingual-uncased": "bert-multilingual",
    "aubmindlab/bert-base-arabertv2": "bert",
    "dbmdz/bert-base-german-cased": "bert",
    "cl-tohoku/bert-base-japanese": "bert-japanese",
    "cl-tohoku/bert-base-japanese-whole-word-masking": "bert-japanese",
    "cl-tohoku/bert-base-japanese-char": "bert-japanese-char",
    "roberta-base": "roberta",
    "roberta-large": "roberta",
    "FacebookAI/roberta-base": "roberta",
    "xlm-roberta-base": "xlm-roberta",
    "xlm-roberta-large": "xlm-roberta",
    "FacebookAI/xlm-roberta-base": "xlm-roberta",
    "google/electra-base-discriminator": "electra",
    "google/electra-small-discriminator": "electra",
    "izumi-lab/electra-base-japanese-discriminator": "electra-japanese",
    "gpt2": "gpt2",
    "openai-community/gpt2": "gpt2",
    "distilgpt2": "gpt2",
    "aubmindlab/aragpt2-base": "gpt2",
    "ClassCat/gpt2-base-japanese-v2": "gpt2",
    "rinna/japanese-gpt2-medium": "gpt2-medium-sentencepiece",
    "ai-forever/mGPT": "mgpt",
    "yellowback/gpt-neo-japanese-1.3B": "gpt-neo",
    "EleutherAI/gpt-neo-125m": "gpt-neo",
}

# A model kind's generic family, for an id neither the table nor the overlay knows.
GENERIC = {"masked": "bert", "causal": "gpt2", "electra": "electra"}


@dataclass(frozen=True)
class Choice:
    family: Family
    how: str   # "known id", "overlay" or "generic for kind X (unknown id)"


def choose_family(hub_id: str, kind: str, overlay_family: str | None = None) -> Choice:
    """The family of a hub model: the overlay's `family`, else the table's, else the kind's
    generic one (said so in rehearsal.md, never a silent skip)."""
    if overlay_family is not None:
        if overlay_family not in FAMILIES:
            raise ValueError(f"unknown family {overlay_family!r} for {hub_id} "
                             f"(known: {', '.join(sorted(FAMILIES))})")
        return Choice(FAMILIES[overlay_family], "overlay")
    if hub_id in KNOWN_IDS:
        return Choice(FAMILIES[KNOWN_IDS[hub_id]], "known id")
    return Choice(FAMILIES[GENERIC[kind]], f"generic for kind {kind} (unknown id)")
