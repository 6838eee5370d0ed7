"""Measure: how many tokens of UD English-EWT test get another pppl_l2r mask set under the
tokenizer's words (`--l2r-words tokenizer`, the default) than under the UD words (`items`).

Items are built as the items stage builds SPUD items: the sentence's `# text`, surface tokens
(multiword tokens as written, empty nodes left out) as its words. The tokenizers are trained
with `tokenizers` (30,000 pieces) on the vendored EWT dev and test text: a WordPiece one with
BERT's normaliser and pre-tokenizer, and a byte-level BPE one (GPT-2's, RoBERTa's). No model is
run: the mask sets depend on the tokens and words alone. One JSON line per tokenizer:

    .venv/bin/python bench/l2r_words_on_ewt.py [--ud resources/ud/UD_English-EWT]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import conllu
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from spudflow.items.spud import Surface, sentence_words
from spudflow.scoring.encoding import encode_with_tokenizer
from spudflow.scoring.items import Item
from spudflow.scoring.masked import l2r_masked_positions

ROOT = Path(__file__).resolve().parents[1]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def read_split(folder: Path, split: str) -> list[conllu.TokenList]:
    with gzip.open(folder / f"en_ewt-ud-{split}.conllu.gz", "rt", encoding="utf-8") as handle:
        return conllu.parse(handle.read())


def surface_tokens(sentence: conllu.TokenList) -> list[Surface]:
    out, covered_until = [], 0
    for token in sentence:
        ident = token["id"]
        space_after = (token["misc"] or {}).get("SpaceAfter") != "No"
        if isinstance(ident, tuple) and ident[1] == ".":  # an empty node
            continue
        if isinstance(ident, tuple):  # a multiword token
            out.append(Surface(token["form"], ident[0], ident[2], space_after))
            covered_until = ident[2]
        elif ident > covered_until:
            out.append(Surface(token["form"], ident, ident, space_after))
    return out


def items_of(sentences: list[conllu.TokenList]) -> list[Item]:
    items = []
    for index, sentence in enumerate(sentences):
        text, (forms, starts, ends), _ = sentence_words(sentence.metadata.get("text"),
                                                        surface_tokens(sentence))
        items.append(Item(str(index), text, tuple(forms), tuple(starts), tuple(ends), (), "en"))
    return items


def trained_tokenizer(kind: str, texts: list[str]) -> PreTrainedTokenizerFast:
    if kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=False)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=30_000, special_tokens=SPECIALS)
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(vocab_size=30_000, special_tokens=SPECIALS,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ud", type=Path, default=ROOT / "resources/ud/UD_English-EWT")
    args = parser.parse_args()
    test = read_split(args.ud, "test")
    items = items_of(test)
    texts = [s.metadata["text"] for s in read_split(args.ud, "dev") + test]
    for kind in ("wordpiece", "bytebpe"):
        encoded = encode_with_tokenizer(items, trained_tokenizer(kind, texts), template=True,
                                        max_length=None)
        changed, words, sentences = 0, set(), set()
        for sentence in encoded:
            for token in range(sentence.n_tokens):
                if (l2r_masked_positions(sentence, token)
                        != l2r_masked_positions(sentence, token, "items")):
                    changed += 1
                    words.add((sentence.item.item_id, sentence.word_index[token]))
                    sentences.add(sentence.item.item_id)
        print(json.dumps({
            "tokenizer": kind, "sentences": len(items),
            "ud_words": sum(len(i.words) for i in items),
            "tokens": sum(e.n_tokens for e in encoded), "tokens_changed": changed,
            "ud_words_changed": len(words), "sentences_changed": len(sentences)}), flush=True)


if __name__ == "__main__":
    main()
