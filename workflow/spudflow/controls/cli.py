"""Commands of the controls stage: control-train."""

from __future__ import annotations

import argparse
from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.option_types import finite_float, seed
from spudflow.core.output_paths import PlannedFolder, output_dir
from spudflow.core.scoring_methods import methods_of

DESCRIPTION = """\
Train a small control language model from scratch on treebank text and write OUT, a
save_pretrained directory (model + fast tokenizer) that `spudflow score --model OUT` loads:
masked - a BERT masked LM ({masked}); causal - a GPT-2 ({causal}); electra - an
ELECTRA discriminator ({electra}), trained jointly with a generator half as wide. All three use a
byte-level BPE tokenizer trained on the same text. OUT also holds training_loss.parquet (the loss
of every step) and control.json (the training settings). The same inputs, seed and --threads
give identical weights. See docs/controls.md.""".format(
    **{kind: ", ".join(methods_of(kind)) for kind in ("masked", "causal", "electra")})


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "control-train", help="train a small BERT, GPT-2 or ELECTRA control model from scratch",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", required=True, help="masked | causal | electra")
    p.add_argument("--text", type=Path, action="append", required=True,
                   help="ingested treebank split directory (its sentences' text) or a text "
                        "file with one sentence per line (repeatable)")
    p.add_argument("--out", type=output_dir, required=True, help="model directory to write")
    p.add_argument("--seed", type=seed, default=0, help="seed of weights, masks and data order")
    p.add_argument("--vocab-size", type=int, default=8000, help="tokenizer vocabulary (8000)")
    p.add_argument("--layers", type=int, default=2, help="transformer layers (2)")
    p.add_argument("--hidden", type=int, default=128, help="hidden size (128)")
    p.add_argument("--heads", type=int, default=2, help="attention heads (2)")
    p.add_argument("--max-length", type=int, default=128,
                   help="longest input in tokens, special tokens included (128)")
    p.add_argument("--epochs", type=int, default=2, help="passes over the text (2)")
    p.add_argument("--batch-size", type=int, default=32, help="sentences per step (32)")
    p.add_argument("--learning-rate", type=finite_float, default=1e-3,
                   help="peak AdamW rate (0.001)")
    p.add_argument("--max-sentences", type=int,
                   help="train on a seeded sample of this many sentences (default: all)")
    p.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's)")
    p.set_defaults(handler=run_control_train, planned_outputs=control_outputs)


def control_outputs(args: argparse.Namespace) -> list[PlannedFolder]:
    """The folder `control-train` writes, checked against the write rule before training."""
    from spudflow.controls.save import is_control

    return [PlannedFolder(args.out, "a control model", is_control)]


def check_arguments(args: argparse.Namespace) -> None:
    from spudflow.controls.architectures import KINDS

    if args.kind not in KINDS:
        raise InputError("--kind", None, f"unknown kind {args.kind!r} ({', '.join(KINDS)})")
    for option in ("vocab_size", "layers", "hidden", "heads", "max_length", "epochs",
                   "batch_size", "max_sentences", "threads"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise InputError(f"--{option.replace('_', '-')}", None,
                             f"must be at least 1, not {value}")
    if args.hidden % args.heads:
        raise InputError("--heads", None, f"{args.heads} heads do not divide --hidden "
                                          f"{args.hidden}")
    if args.max_length < 4:
        raise InputError("--max-length", None, f"must be at least 4, not {args.max_length}")
    if args.learning_rate <= 0:
        raise InputError("--learning-rate", None, f"must be positive, not {args.learning_rate}")


def run_control_train(args: argparse.Namespace) -> None:
    check_arguments(args)
    from spudflow.core.training_text import training_texts

    texts = [t for source in args.text for t in training_texts(source) if t.strip()]
    if not texts:
        raise InputError(args.text[0], None, "no training sentences")

    import torch

    from spudflow.controls.architectures import Size
    from spudflow.controls.data import sample_sentences
    from spudflow.controls.save import save_control
    from spudflow.controls.tokenizer import train_tokenizer
    from spudflow.controls.train import Schedule, train

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = sample_sentences(texts, args.max_sentences, args.seed)
    tokenizer = train_tokenizer(args.kind, texts, args.vocab_size, args.max_length)
    size = Size(args.layers, args.hidden, args.heads, args.max_length)
    schedule = Schedule(args.epochs, args.batch_size, args.learning_rate, args.seed)
    trained = train(args.kind, texts, tokenizer, size, schedule)
    settings = {"kind": args.kind, "text": [str(p) for p in args.text], "seed": args.seed,
                "sentences": len(texts), "tokens": trained.n_tokens,
                "vocab_size": len(tokenizer), "layers": args.layers, "hidden": args.hidden,
                "heads": args.heads, "max_length": args.max_length, "epochs": args.epochs,
                "batch_size": args.batch_size, "learning_rate": args.learning_rate,
                "threads": torch.get_num_threads(), "steps": len(trained.losses),
                "final_loss": trained.losses[-1]["loss"] if trained.losses else None}
    save_control(args.out, trained, tokenizer, settings)
