"""`spudflow probe features|gather|train`: DepProbe structural probes (docs/probe.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from spudflow.core import device_map
from spudflow.core.artifacts import AUTO, LM_BASELINE
from spudflow.core.distinct_inputs import distinct_names
from spudflow.core.errors import InputError
from spudflow.core.option_types import finite_float, positive, seed
from spudflow.core.output_paths import output_dir, output_file, output_path
from spudflow.core.shards import WHOLE, Shard, parse_shard

if TYPE_CHECKING:
    from spudflow.probe.jobs import FeatureJob, ProbeJob

BASELINE_CHOICES = ("M0", "MR", "MRC")
FEATURE_BASELINES = ("lm", *BASELINE_CHOICES)  # lm: the model itself


def _layers(text: str) -> list[int]:
    try:
        return sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of layer numbers: {text!r}") from None


def _baseline_layers(text: str) -> tuple[str, list[int]]:
    """NAME=LAYERS: a baseline of `probe features` and the layers it extracts."""
    name, sep, layers = text.partition("=")
    if not sep or name not in FEATURE_BASELINES or not layers.strip():
        raise argparse.ArgumentTypeError(
            f"not NAME=LAYERS with NAME one of {', '.join(FEATURE_BASELINES)}: {text!r}")
    return name, _layers(layers)


def _layer(text: str) -> int | str:
    """A layer number, or `auto`: the layer a --layer-choice file chose."""
    if text == AUTO:
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a layer number or {AUTO!r}: {text!r}") from None


def _shard(text: str) -> Shard:
    try:
        return parse_shard(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(error.message) from None


def add_encoder_arguments(p: argparse.ArgumentParser, source: str) -> None:
    """How a command builds its encoder and reads the treebanks it runs it on: `probe
    features`, and `probe train` for the sets it extracts itself (--eval-extract,
    --train-extract, --dev-extract). One definition, so the two extract the same features."""
    p.add_argument(source, required=source == "--model", metavar="SOURCE",
                   help="local directory, hub id or pypi:PACKAGE[/SUBFOLDER] of the encoder")
    p.add_argument("--revision", default=None,
                   help="branch, tag or commit of a hub model (default: the hub's main); "
                   "written into the feature files")
    p.add_argument("--init-seed", type=seed, default=0, help="seed of MR/MRC weights")
    p.add_argument("--sentences", type=Path, default=None, metavar="SHARE_DIR",
                   help="keep only the sentences of this share of the split (a `training-share` "
                   "output: its sentences.parquet, by sent_index), before --sample")
    p.add_argument("--sample", type=int, default=None, metavar="N",
                   help="a seeded sample of N sentences (default: all)")
    p.add_argument("--sample-seed", type=seed, default=0)
    p.add_argument("--block-size", type=int, default=256,
                   help="sentences per block; shards are cut at block boundaries (default 256)")
    p.add_argument("--batch-tokens", type=int, default=4096, help="padded tokens per batch")
    p.add_argument("--max-length", type=int, default=None,
                   help="input tokens per sentence (default: the model's limit); longer "
                   "sentences are left out and counted")
    p.add_argument("--device", default="auto", help="auto (CUDA when present) | cpu | cuda[:N]")
    device_map.add_arguments(p)


def register(subparsers: argparse._SubParsersAction) -> None:
    probe = subparsers.add_parser(
        "probe", help="DepProbe structural probes: features, gather, train, select-layers",
        description="DepProbe (Müller-Eberstein et al. 2022) on frozen LM layers.")
    commands = probe.add_subparsers(dest="probe_command", metavar="STEP", required=True)

    p = commands.add_parser(
        "features", help="word features of a treebank split's eval sets, for each baseline",
        description="One vector per syntactic word and layer (mean of its subword vectors, "
        "aligned by character offsets; layer 0 = embeddings), written as a safetensors file "
        "per baseline and treebank directory (the original split and its nonce versions, its "
        "eval sets): OUT/{baseline}/{eval set}.safetensors. The baselines' encoders are built "
        "one after the other, one in memory at a time; each baseline's files are those of a "
        "call with that baseline alone. OUT is written under a temporary name and renamed "
        "when every file is written: a failure leaves no output.")
    p.add_argument("dirs", nargs="+", type=Path, metavar="DIR",
                   help="ingested or nonce treebank directory (one per eval set)")
    add_encoder_arguments(p, "--model")
    p.add_argument("--eval-sets", nargs="+", default=None, metavar="NAME",
                   help="the eval set of each DIR, in the same order: `orig` or METHOD/seedN "
                   "(default: `orig`, for a single DIR)")
    p.add_argument("--out", type=output_dir, required=True, metavar="OUT",
                   help="output directory: one folder per baseline (replaced if present)")
    p.add_argument("--baselines", nargs="+", type=_baseline_layers, required=True,
                   metavar="NAME=LAYERS",
                   help="each baseline to build and its layers, e.g. lm=0,3,4 M0=0 MR=3,4: "
                   "lm (the model itself), M0 (layer 0), MR (all weights random), MRC (random "
                   "but the embedding layer)")
    p.add_argument("--max-sentences", type=positive, default=None, metavar="N",
                   help="only the sentences `probe train --max-train-sentences N` (or "
                   "--max-dev-sentences N) trains or selects on: a seeded sample of at most N "
                   "of those with --min-words words or more that fit the model, drawn as the "
                   "probe draws it (one DIR; default: every sentence)")
    p.add_argument("--max-sentences-seed", type=seed, default=0,
                   help="seed of the --max-sentences sample (the probe's --max-sentences-seed)")
    p.add_argument("--min-words", type=int, default=4,
                   help="with --max-sentences: the probe's --min-words (default 4)")
    p.add_argument("--shard", type=_shard, default=WHOLE,
                   help="I/N: shard I (1-based) of N, a contiguous range of whole blocks")
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(handler=run_features)

    p = commands.add_parser("gather", help="concatenate feature shards",
                            description="Concatenate the shard files of `probe features "
                            "--shard I/N`, in order, into the unsharded file; or shard "
                            "directories (one file per baseline and eval set, the same in "
                            "each) into the unsharded directory, file by file.")
    p.add_argument("shards", nargs="+", type=Path, help="shard files, or shard directories")
    p.add_argument("--out", type=output_path, required=True, help="output file, or directory")
    p.set_defaults(handler=run_gather)

    p = commands.add_parser(
        "train", help="train a probe per seed, select on dev, evaluate on orig and nonce sets",
        description="Train DepProbe on FEATURES of a treebank split once per seed, select the "
        "best epoch on a dev split (or a held-out share of the training sentences), and write "
        "each seed's probe, training history, metrics.parquet and one predictions CoNLL-U per "
        "eval set into OUT/seed{S}/. The features are loaded once; each seed's folder is "
        "written under a temporary name and renamed when complete.")
    # a split's features are either stored or extracted here
    train = p.add_mutually_exclusive_group(required=True)
    train.add_argument("--train", nargs=2, type=Path, metavar=("FEATURES", "TREEBANK_DIR"),
                       help="the training split's stored features and its treebank")
    train.add_argument("--train-extract", type=Path, metavar="TREEBANK_DIR",
                       help="the training split, whose features this job extracts with "
                       "--encoder (held in memory, never written; the features `probe "
                       "features` would write with --max-sentences N the probe's "
                       "--max-train-sentences), instead of --train's stored ones")
    p.add_argument("--train-sentences", type=Path, metavar="SHARE_DIR",
                   help="with --train-extract: only the sentences of this share of the split")
    dev = p.add_mutually_exclusive_group()
    dev.add_argument("--dev", nargs=2, type=Path, metavar=("FEATURES", "TREEBANK_DIR"),
                     help="selection split (default: hold out --holdout of the training split)")
    dev.add_argument("--dev-extract", type=Path, metavar="TREEBANK_DIR",
                     help="the selection split, its features extracted here as "
                     "--train-extract's (capped by --max-dev-sentences), instead of --dev's "
                     "stored ones")
    p.add_argument("--dev-sentences", type=Path, metavar="SHARE_DIR",
                   help="with --dev-extract: only the sentences of this share of the split")
    p.add_argument("--holdout", type=finite_float, default=0.1,
                   help="fraction of the training sentences held out for selection without --dev")
    p.add_argument("--holdout-seed", type=seed, default=0)
    p.add_argument("--max-train-sentences", type=positive, default=None, metavar="N",
                   help="train on a seeded sample of at most N sentences of the training split "
                   "(after --min-words and the too-long ones; before --holdout), as the DepProbe "
                   "reference caps its splits at 20,000 (default: all)")
    p.add_argument("--max-dev-sentences", type=positive, default=None, metavar="N",
                   help="select on a seeded sample of at most N selection sentences (--dev, or "
                   "the held-out share) (default: all)")
    p.add_argument("--max-sentences-seed", type=seed, default=0,
                   help="seed of the --max-train-sentences and --max-dev-sentences samples")
    p.add_argument("--eval", nargs=3, action="append", default=[],
                   metavar=("NAME", "FEATURES", "TREEBANK_DIR"),
                   help="an eval set: `orig` or METHOD/seedN, its features and treebank")
    p.add_argument("--eval-extract", nargs=2, action="append", default=[],
                   metavar=("NAME", "TREEBANK_DIR"),
                   help="an eval set whose features this job extracts with --encoder (held in "
                   "memory, never written; the features `probe features` would write), instead "
                   "of --eval's stored ones")
    p.add_argument("--dist-layer", type=_layer, required=True,
                   help="layer of the distance probe, or `auto` (from --layer-choice)")
    p.add_argument("--label-layer", type=_layer, required=True,
                   help="layer of the label probe, or `auto` (from --layer-choice)")
    p.add_argument("--layer-choice", type=Path, default=None,
                   help="`probe select-layers` output: the layers `auto` stands for")
    p.add_argument("--seeds", type=seed, nargs="+", default=[1], metavar="SEED",
                   help="one probe run per seed, one after the other (default: 1)")
    p.add_argument("--out", type=output_dir, required=True,
                   help="output directory: one folder seed{S} per seed")
    p.add_argument("--treebank", required=True, help="treebank column of the metrics")
    p.add_argument("--model", required=True, help="model column of the metrics")
    p.add_argument("--baseline", choices=BASELINE_CHOICES, default=None)
    p.add_argument("--subtypes", action="store_true", help="labels keep subtypes (nmod:poss)")
    p.add_argument("--distance", choices=("squared", "l2"), default="l2",
                   help="predicted distance of two projected words: l2 (the paper, App. F.1 "
                   "Eq. 5; default) or squared (the DepProbe reference code)")
    p.add_argument("--no-punct", action="store_true", help="metrics leave out PUNCT words")
    p.add_argument("--acl-predicted-as-unk", action="store_true",
                   help="write a predicted `acl` as `UNK`, so it never counts as right (RelAcc, "
                   "LAS), as the DepProbe reference's predict.py does (it made the SPUD paper's "
                   "tables); default: predicted labels as predicted")
    p.add_argument("--batches", choices=("buckets", "reference"), default="buckets",
                   help="buckets: training batches of similar length, selection on the mean "
                   "loss per sentence (default); reference: uniformly drawn batches and the mean "
                   "of the selection batches' losses, as the DepProbe reference's train.py")
    p.add_argument("--min-words", type=int, default=4,
                   help="sentences with fewer words are left out of training, selection and "
                   "evaluation (default 4, as the paper, App. C)")
    p.add_argument("--rank", type=positive, default=128,
                   help="rank of the probes' projection, at least 1 (default: %(default)s)")
    p.add_argument("--lr", type=finite_float, default=1e-3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-epochs", type=int, default=30)
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    extraction = p.add_argument_group(
        "the encoder of --eval-extract, --train-extract and --dev-extract", "as `probe "
        "features` has them (--sentences: of the eval sets; --train-sentences and "
        "--dev-sentences for the splits); --baseline names the encoder's baseline, the layers "
        "are --dist-layer and --label-layer")
    add_encoder_arguments(extraction, "--encoder")
    extraction.add_argument(
        "--encoder-top", type=int, default=None, metavar="N",
        help="build the encoder as a model of layers 0..N, the highest layer `probe features` "
        "extracts for this baseline: the random weights of MR and MRC are drawn for the model "
        "built, so they equal the stored features' only so (default: the job's highest layer)")
    p.set_defaults(handler=run_train)

    p = commands.add_parser(
        "select-layers", help="choose the layers for `auto` from a layer sweep (App. F.6)",
        description="From the metrics of the layer-sweep runs of one treebank and model (the "
        "model itself, distance and label probe on the same layer, every layer and seed), "
        "choose the distance layer with the best mean selection-data UAS and the label layer "
        "with the best mean selection-data RelAcc (ties: the lower layer). Writes a "
        "probe_layer_choice Parquet file for `probe train --layer-choice`.")
    p.add_argument("metrics", nargs="+", type=Path, help="metrics.parquet of the sweep runs")
    p.add_argument("--out", type=output_file, required=True, help="output .parquet file")
    p.set_defaults(handler=run_select_layers)


def feature_job(args: argparse.Namespace) -> FeatureJob:
    """The FeatureJob `probe features`'s options describe, its eval set names and baselines
    checked."""
    from spudflow.probe.jobs import FeatureJob

    eval_sets = _eval_set_names(args.eval_sets, args.dirs)
    baselines = [name for name, _ in args.baselines]
    if len(set(baselines)) != len(baselines):
        raise InputError("--baselines", None, "names a baseline twice")
    if args.max_sentences is not None and len(args.dirs) > 1:
        raise InputError("--max-sentences", None, "caps a training or selection split: one "
                         "DIR, not a test split's eval sets")
    return FeatureJob(
        dirs=tuple(args.dirs), eval_sets=eval_sets,
        baselines=tuple((name, tuple(layers)) for name, layers in args.baselines),
        model=args.model, revision=args.revision, init_seed=args.init_seed,
        sentences=args.sentences, sample=args.sample, sample_seed=args.sample_seed,
        max_sentences=args.max_sentences, max_sentences_seed=args.max_sentences_seed,
        min_words=args.min_words, shard=args.shard, block_size=args.block_size,
        batch_tokens=args.batch_tokens, max_length=args.max_length, device=args.device,
        threads=args.threads, out=args.out,
        placement=device_map.placement_from_options(args.device_map, args.max_memory,
                                                    args.offload_folder))


def _eval_set_names(given: list[str] | None, dirs: list[Path]) -> tuple[str, ...]:
    """The eval set name of each DIR: given, or `orig` for a single one; each a relative path
    (its file is OUT/{baseline}/{name}.safetensors), named once."""
    names = given if given is not None else ["orig"]
    if len(names) != len(dirs):
        raise InputError("--eval-sets", None, f"{len(names)} name(s) for {len(dirs)} "
                         "treebank directories: one each, in the same order")
    for name in names:
        parts = Path(name).parts
        if not parts or Path(name).is_absolute() or ".." in parts or name.startswith("."):
            raise InputError("--eval-sets", None, f"not an eval set name: {name!r}")
    if len(set(names)) != len(names):
        raise InputError("--eval-sets", None, "names an eval set twice")
    return tuple(names)


def probe_job(args: argparse.Namespace) -> ProbeJob:
    """The ProbeJob `probe train`'s options describe: its seeds, eval sets and --holdout checked,
    `auto` layers resolved (bad input here writes nothing and loads no data)."""
    from spudflow.probe.jobs import ProbeInputs, ProbeJob, ProbeTraining

    seeds = _checked_seeds(args.seeds)
    _check_split_sources(args)
    if not args.eval and not args.eval_extract:
        raise InputError("--eval", None, "at least one eval set is needed (e.g. orig)")
    if args.eval and args.eval_extract:
        raise InputError("--eval-extract", None, "and --eval in one job: its eval sets are "
                         "either all stored or all extracted here")
    distinct_names([name for name, *_ in args.eval + args.eval_extract], "--eval")
    layers = _resolved_layers(args)
    if not (args.dev or args.dev_extract) and not 0 < args.holdout < 1:
        raise InputError("--holdout", None, "must be between 0 and 1 without --dev")
    baseline = args.baseline or LM_BASELINE
    _check_encoder(args, layers)
    train = tuple(args.train) if args.train else (None, args.train_extract)
    dev = tuple(args.dev) if args.dev else (None, args.dev_extract) if args.dev_extract else None
    inputs = ProbeInputs(
        train=train, train_extracted=_split_extraction(
            args, args.train_extract, args.train_sentences, args.max_train_sentences, baseline,
            layers),
        dev=dev, dev_extracted=_split_extraction(
            args, args.dev_extract, args.dev_sentences, args.max_dev_sentences, baseline,
            layers),
        evals=tuple(tuple(given) for given in args.eval),
        extracted=_eval_extraction(args, baseline, layers), holdout=args.holdout,
        holdout_seed=args.holdout_seed, max_train_sentences=args.max_train_sentences,
        max_dev_sentences=args.max_dev_sentences, max_sentences_seed=args.max_sentences_seed,
        min_words=args.min_words)
    training = ProbeTraining(
        seeds=seeds, subtypes=args.subtypes, squared=args.distance == "squared",
        rank=args.rank, lr=args.lr, batch_size=args.batch_size, max_epochs=args.max_epochs,
        patience=args.patience, acl_predicted_as_unk=args.acl_predicted_as_unk,
        punct=not args.no_punct, batches=args.batches)
    return ProbeJob(
        inputs=inputs, training=training, treebank=args.treebank, model=args.model,
        baseline=baseline, dist_layer=layers["dist"],
        label_layer=layers["label"], auto_layers=AUTO in (args.dist_layer, args.label_layer),
        out=args.out, threads=args.threads)


def _check_split_sources(args: argparse.Namespace) -> None:
    """A share only of a split extracted here (argparse's groups take one of --train and
    --train-extract, at most one of --dev and --dev-extract)."""
    for role in ("train", "dev"):
        if getattr(args, f"{role}_sentences") is not None and \
                getattr(args, f"{role}_extract") is None:
            raise InputError(f"--{role}-sentences", None, f"given, but no --{role}-extract")


def _check_encoder(args: argparse.Namespace, layers: dict[str, int]) -> None:
    """--encoder exactly when the job extracts features, and a model built up to the probed
    layers."""
    extracting = [f"--{sets}-extract" for sets in ("eval", "train", "dev")
                  if getattr(args, f"{sets}_extract")]
    if not extracting:
        if args.encoder is not None:
            raise InputError("--encoder", None, "given, but no --eval-extract, --train-extract "
                             "or --dev-extract")
        return
    if args.encoder is None:
        raise InputError("--encoder", None, f"needed for {extracting[0]}")
    if args.encoder_top is not None and args.encoder_top < max(layers.values()):
        raise InputError("--encoder-top", None, f"layer {args.encoder_top} is below the probed "
                         f"layer {max(layers.values())}")


def _extraction(args: argparse.Namespace, dirs: list[Path], names: list[str],
                sentences: Path | None, max_sentences: int | None, baseline: str,
                layers: dict[str, int]) -> FeatureJob:
    """`probe features` of `dirs` (eval sets `names`) with --encoder, for this job's baseline
    and its layers, kept in memory: the features a feature job with the same encoder options
    (the plan gives both the same) writes."""
    from spudflow.probe.jobs import FeatureJob

    return FeatureJob(
        dirs=tuple(dirs), eval_sets=_eval_set_names(names, dirs),
        baselines=((baseline, tuple(sorted(set(layers.values())))),),
        model=args.encoder, revision=args.revision, init_seed=args.init_seed,
        sentences=sentences, sample=args.sample, sample_seed=args.sample_seed,
        max_sentences=max_sentences, max_sentences_seed=args.max_sentences_seed,
        min_words=args.min_words, shard=WHOLE, block_size=args.block_size,
        batch_tokens=args.batch_tokens, max_length=args.max_length, device=args.device,
        threads=args.threads, out=None, encoder_top=args.encoder_top,
        placement=device_map.placement_from_options(args.device_map, args.max_memory,
                                                    args.offload_folder))


def _eval_extraction(args: argparse.Namespace, baseline: str,
                     layers: dict[str, int]) -> FeatureJob | None:
    """The extraction of the --eval-extract sets, uncapped (a probe is tested on every
    sentence), a test share's --sentences (None: no such set)."""
    if not args.eval_extract:
        return None
    dirs = [Path(directory) for _, directory in args.eval_extract]
    return _extraction(args, dirs, [name for name, _ in args.eval_extract], args.sentences,
                       None, baseline, layers)


def _split_extraction(args: argparse.Namespace, directory: Path | None, sentences: Path | None,
                      max_sentences: int | None, baseline: str,
                      layers: dict[str, int]) -> FeatureJob | None:
    """The extraction of a training or selection split (--train-extract, --dev-extract): its
    share's sentences, the probe's own cap of it, as its feature job would store it (None: its
    features are stored)."""
    if directory is None:
        return None
    return _extraction(args, [directory], ["orig"], sentences, max_sentences, baseline, layers)


def _checked_seeds(seeds: list[int]) -> tuple[int, ...]:
    twice = sorted({seed for seed in seeds if seeds.count(seed) > 1})
    if twice:
        raise InputError("--seeds", None, f"names seed {twice[0]} twice")
    return tuple(seeds)


def _resolved_layers(args: argparse.Namespace) -> dict[str, int]:
    """dist and label layers, `auto` replaced by the layer sweep's choice (--layer-choice)."""
    from spudflow.probe.layer_choice import chosen_layer

    layers = {"dist": args.dist_layer, "label": args.label_layer}
    if AUTO not in layers.values():
        if args.layer_choice is not None:
            raise InputError("--layer-choice", None, "given, but no layer is `auto`")
        return layers
    if args.layer_choice is None:
        raise InputError("--layer-choice", None, "needed for a layer `auto`")
    return {part: chosen_layer(args.layer_choice, args.treebank, args.model, part)
            if layer == AUTO else layer for part, layer in layers.items()}


def run_features(args: argparse.Namespace) -> int:
    from spudflow.probe.run import features_command

    return features_command(feature_job(args))


def run_gather(args: argparse.Namespace) -> int:
    from spudflow.probe.run import gather_command

    return gather_command(args.shards, args.out)


def run_train(args: argparse.Namespace) -> int:
    from spudflow.probe.seed_runs import train_command

    return train_command(probe_job(args))


def run_select_layers(args: argparse.Namespace) -> int:
    from spudflow.probe.layer_choice import choose_layers, read_sweep, write_choice

    write_choice(args.out, choose_layers(read_sweep(args.metrics)))
    return 0
