"""How often the DepProbe reference's `reduce()` (models/embedding.py) puts a vector on the wrong
word under a byte-level BPE tokenizer, against the probe stage's mean of each word's tokens.

    python bench/bench_probe_reduce.py [--vocab 30000]

The reference tokenizes pre-split words with `add_prefix_space=True` and walks the tokens by
their offsets, closing a word when the next token's offset starts at 0. A word whose first token
is a lone `Ġ` (offset (0, 1) of a word whose next token starts at 0 again) is closed after that
`Ġ`: the word gets the vector of `Ġ`, and every later word of the sentence the tokens of the
word before it, until a word's tokens realign. GPT-2's own vocabulary is not here (no
downloads): the stand-in is a byte-level BPE trained on EWT train as written (`# text`, so that
punctuation mostly follows a word without a space, as in web text). Prints, over EWT test's
sentences of 4 or more words: those with a word whose first token is a lone `Ġ`, and those (and
their words) whose reference vectors differ from ours. Needs ../shared/data (EWT).
"""

from __future__ import annotations

import argparse
import gzip

import conllu
import transformers as tf
from bench_probe import EWT
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

END = "<|endoftext|>"


def read(split: str):
    with gzip.open(EWT / f"en_ewt-ud-{split}.conllu.gz", "rt", encoding="utf-8") as f:
        yield from conllu.parse_incr(f)


def stand_in(vocab: int):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator((s.metadata["text"] for s in read("train")),
                            trainer=trainers.BpeTrainer(
                                vocab_size=vocab, special_tokens=[END], show_progress=False,
                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)  # as the reference loads
    return tf.GPT2TokenizerFast(tokenizer_object=tok, add_prefix_space=True, bos_token=END,
                                eos_token=END, unk_token=END)


def reference_reduce(words, offsets, special) -> list[list[int]] | None:
    """The token indices reduce() averages for each word (None: it raises TokenizationError and
    the reference skips the batch)."""
    out, tidx = [], -1
    for word in words:
        got, coverage = [], 0
        while coverage < len(word):
            tidx += 1
            if tidx >= len(offsets):
                return None
            if special[tidx]:
                continue
            got.append(tidx)
            coverage = offsets[tidx][1]
            if tidx < len(offsets) - 1 and offsets[tidx + 1][0] == 0:
                break
        out.append(got)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=int, default=30_000, help="stand-in vocabulary size")
    args = parser.parse_args()
    fast = stand_in(args.vocab)
    n = lone = differ = skipped = moved = total = 0
    for sentence in read("test"):
        words = [t["form"] for t in sentence if isinstance(t["id"], int)]
        if len(words) < 4:
            continue
        n += 1
        enc = fast(words, is_split_into_words=True, return_offsets_mapping=True,
                   return_special_tokens_mask=True)
        tokens = fast.convert_ids_to_tokens(enc["input_ids"])
        ids = enc.word_ids()
        ours = [[i for i, w in enumerate(ids) if w == k] for k in range(len(words))]
        lone += any(o and tokens[o[0]] == "Ġ" for o in ours)
        ref = reference_reduce(words, enc["offset_mapping"], enc["special_tokens_mask"])
        if ref is None:
            skipped += 1
            continue
        wrong = sum(r != o for r, o in zip(ref, ours, strict=True))
        moved, total, differ = moved + wrong, total + len(words), differ + (wrong > 0)
    print(f"vocab {args.vocab}: {n} EWT test sentences of 4+ words; {lone} with a word whose "
          f"first token is a lone Ġ; reference vectors differ from ours in {differ} sentences "
          f"({moved} of {total} words); {skipped} raise TokenizationError")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
