"""Every `spudflow` subcommand given a missing, empty or wrong-kind input: exit 2, one line
`PATH…: what is wrong` naming the input, and no output.

The subcommands are enumerated from the argparse parser, so a new command is covered as soon as
it exists: the test fails until its input arguments are described in INPUT_KINDS below.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from spudflow.cli import build_parser
from spudflow.core.errors import EXIT_BAD_INPUT

MINI = Path(__file__).parent / "data" / "mini.conllu"

# Arguments that name outputs; every output goes below tmp/out, which must stay empty.
OUTPUTS = {"out", "out_dir", "conllu", "workdir"}

# What each input argument reads, by (command, dest) or by dest alone:
# treebank - an ingested or nonce treebank directory; parquet - a Parquet table; text - a text
# file or an ingested split; tsv/jsonl - dataset files; csv - a filled human-eval sheet;
# features - a probe feature file; shard - a `score --shard` output directory; model - a
# transformers model; url - a download.
INPUT_KINDS = {
    ("ingest", "src"): "conllu",
    ("fetch", "url"): "url",
    ("export", "dir"): "treebank",
    ("stats", "dir"): "treebank",
    ("training-share", "dir"): "treebank",
    ("nonce", "dir"): "treebank",
    ("items spud", "orig"): "treebank",
    ("items german-case", "templates"): "tsv",
    ("items japanese-transitivity", "lexicon"): "tsv",
    ("items count-verbs", "corpus"): "text",
    ("items count-verbs", "lexicon"): "tsv",
    ("items cola", "files"): "tsv",
    ("items blimp", "paths"): "jsonl",
    ("items blimp-acceptability", "paths"): "jsonl",
    ("control-train", "text"): "text",
    ("score", "input"): "parquet",
    ("score", "model"): "model",
    ("score-gather", "shard_dirs"): "shard",
    ("cache stats", "dir"): "cache", ("cache prune", "dir"): "cache",
    ("cache verify", "dir"): "cache", ("cache compact", "dir"): "cache",
    ("ngram-train", "inputs"): "text",
    ("probe features", "dirs"): "treebank",
    ("probe features", "model"): "model",
    ("probe gather", "shards"): "features",
    ("probe train", "train"): ("features", "treebank"),
    ("human-eval export", "orig"): "treebank",
    ("human-eval export", "spud"): "treebank",
    ("human-eval export", "posfree"): "treebank",
    ("human-eval tables", "sheets"): "csv",
    ("human-eval tables", "key"): "parquet",
    ("rehearse", "config"): "yaml",
    "inputs": "parquet", "items": "parquet", "scores": "parquet", "metrics": "parquet",
    "table": "parquet",
}
# Required arguments that are not inputs, with a valid value.
VALUES = {"lang": "en", "seed": "0", "fraction": "0.5", "treebank": "t", "split": "train",
          "variant": "base",
          "layers": "0", "dist_layer": "0", "label_layer": "0", "method": "ppl",
          ("probe features", "baselines"): "lm=0",
          ("control-train", "kind"): "causal", ("score", "kind"): "causal",
          ("probe train", "model"): "m", "keep_models": "m"}
# Inputs that argparse cannot mark required (append actions), added by hand.
EXTRA = {"probe train": lambda bad: ["--eval", "orig", *bad(("features", "treebank"))],
         # one of --templates and --sentences (a mutually exclusive group argparse requires)
         "items german-case": lambda bad: ["--templates", *bad("tsv")],
         "front-page": lambda bad: ["--table", f"blimp_overall={bad('parquet')[0]}"]}
# Commands for which no file is of the wrong kind (beyond being empty or missing).
ANY_KIND = {"fetch": "copies bytes without reading them"}

# File names of the bad inputs end as the real ones do (a score input is read by its suffix).
SUFFIXES = {"conllu": ".conllu", "tsv": ".tsv", "csv": ".csv", "jsonl": ".jsonl", "text": ".txt",
            "url": ".txt", "yaml": ".yaml", "parquet": ".parquet", "features": ".safetensors"}
TEXT_SUFFIXES = {".conllu", ".tsv", ".csv", ".jsonl", ".txt", ".yaml"}

CASES = ("missing", "empty", "garbage", "other_artifact")


def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(command words, parser) of every runnable subcommand, nested ones (`items spud`) too."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield prefix, parser
        return
    for name, sub in subparsers[0].choices.items():
        yield from leaf_commands(sub, prefix + (name,))


COMMANDS = {" ".join(words): parser for words, parser in leaf_commands(build_parser())}


def _lookup(table: dict, command: str, dest: str):
    return table.get((command, dest), table.get(dest))


def _is_path_argument(action: argparse.Action) -> bool:
    from spudflow.core.output_paths import shared_dir  # the score cache: read and written

    return action.type is Path or action.type is shared_dir


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> dict[str, Path]:
    """A real ingested treebank, whose two tables serve as Parquet files of the wrong kind."""
    from spudflow.cli import main

    root = tmp_path_factory.mktemp("artifacts")
    assert main(["ingest", str(MINI), "--out", str(root / "tb")]) == 0
    assert main(["ngram-train", str(root / "tb"), "--lang", "de", "--out",
                 str(root / "lm.parquet")]) == 0
    (root / "sentences.txt").write_text("Wir gehen zum Markt.\n", encoding="utf-8")
    (root / "in_domain_dev.tsv").write_text("t01\t1\t\tThe cat sat on the mat.\n"
                                           "t01\t0\t*\tThe cat sat the mat on.\n",
                                           encoding="utf-8")
    from aggregate_inputs import probe_metrics

    return {"probe_metrics": probe_metrics(root), "tokens": root / "tb" / "tokens.parquet",
            "cola": root / "in_domain_dev.tsv",
            "sentences": root / "tb" / "sentences.parquet", "treebank": root / "tb",
            "ngram": root / "lm.parquet", "text": root / "sentences.txt"}


class BadInputs:
    """Makes one bad input per argument, of the kind the argument reads, for one case."""

    def __init__(self, root: Path, case: str, artifacts: dict[str, Path]):
        self.root, self.case, self.artifacts = root, case, artifacts
        self.made: list[Path] = []

    def __call__(self, kinds) -> list[str]:
        if isinstance(kinds, tuple):
            return [self.one(kind) for kind in kinds]
        return [self.one(kinds)]

    def one(self, kind: str) -> str:
        path = self.root / f"bad{len(self.made)}{SUFFIXES.get(kind, '')}"
        self.made.append(path)
        if kind == "url":
            return self._file(path).as_uri() if self.case != "missing" else path.as_uri()
        if self.case == "missing":
            return str(path)
        if kind == "treebank":
            path.mkdir()
            self._file(path / "tokens.parquet", "sentences")
            self._file(path / "sentences.parquet", "tokens")
        elif kind == "shard":
            path.mkdir()
            self._file(path / "token_scores.parquet", "tokens")
            self._file(path / "item_scores.parquet", "sentences")
        elif kind == "model":
            path.mkdir()  # a directory that holds no model
            if self.case != "empty":
                self._file(path / "config.json", "tokens")
        else:
            self._file(path, "sentences")
        return str(path)

    def _file(self, path: Path, other: str = "tokens") -> Path:
        """An empty file, a file of the wrong format (CoNLL-U text where binary data is read,
        binary data where text is read), or a Parquet file of another artifact."""
        text_kind = path.suffix in TEXT_SUFFIXES
        if self.case == "empty":
            path.write_bytes(b"")
        elif self.case == "other_artifact" or (self.case == "garbage" and text_kind):
            path.write_bytes(self.artifacts[other].read_bytes())
        else:
            path.write_bytes(MINI.read_bytes())
        return path


def build_argv(command: str, bad: BadInputs, out: Path) -> list[str]:
    parser = COMMANDS[command]
    positional, optional = [], []
    # one option of a required choice (a table command's --out-dir or --out): the first
    chosen = {g._group_actions[0] for g in parser._mutually_exclusive_groups if g.required}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        input_kind = _lookup(INPUT_KINDS, command, action.dest)
        is_input = input_kind is not None
        assert is_input or action.dest in OUTPUTS or not _is_path_argument(action) \
            or not action.required, f"`{command}`: say what {action.dest} reads in INPUT_KINDS"
        if not (action.required or not action.option_strings or action in chosen):
            continue
        if action.dest in OUTPUTS:
            values = [str(out / action.dest)]
        elif is_input:
            values = bad(input_kind)
        else:
            value = _lookup(VALUES, command, action.dest)
            assert value is not None, f"`{command}`: give a value for {action.dest} in VALUES"
            values = [value]
        if action.option_strings:
            optional += [action.option_strings[0], *values]
        else:
            positional += values
    extra = EXTRA.get(command)
    return [*command.split(), *positional, *optional, *(extra(bad) if extra else [])]


def test_every_command_is_enumerated():
    """The enumeration reaches the nested commands (a bug here would hide them all)."""
    assert {"ingest", "export", "stats", "table-nonce-ratio", "items spud", "probe train",
            "score", "control-train", "figure-german-case-roc"} <= set(COMMANDS)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def bad_input_line(run_cli, argv) -> str:
    """The one line a command given bad input prints, after checking it exits 2."""
    code, _, err = run_cli(*argv)
    assert code == EXIT_BAD_INPUT, f"{argv}: exit {code}\n{err}"
    return one_line(err)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_input_exits_2_with_one_line(run_cli, tmp_path, artifacts, command, case):
    if case in ("garbage", "other_artifact") and command in ANY_KIND:
        pytest.skip(f"{command} {ANY_KIND[command]}")
    bad = BadInputs(tmp_path / "in", case, artifacts)
    (tmp_path / "in").mkdir()
    out = tmp_path / "out"
    argv = build_argv(command, bad, out)
    line = bad_input_line(run_cli, argv)
    named = [str(p) for p in bad.made] + [p.as_uri() for p in bad.made]
    assert any(line.startswith(f"{p}:") or line.startswith(f"{p}/") for p in named), line
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))


# Optional inputs, each tested with valid required arguments (which are read first).
OPTIONAL_INPUTS = {
    ("nonce", "--lexicon"): "tsv",
    ("nonce", "--pool"): "treebank",
    ("nonce", "--lexicon-from"): "treebank",
    ("score", "--unigram"): "parquet",
    ("items spud", "--nonce"): "treebank",
    ("probe features", "--sentences"): "treebank",
    # a training or selection split extracted by the probe job, and its share, read before
    # the model is loaded
    ("probe train", "--train-extract"): "treebank",
    ("probe train", "--dev-extract"): "treebank",
    ("probe train", "--train-sentences"): "treebank",
    ("probe train", "--dev-sentences"): "treebank",
    ("table-probe", "--layer-choice"): "parquet",
    ("table-probe", "--predictions"): "parquet",
    ("items cola", "--phenomena"): "tsv",
    ("items german-case", "--templates"): "tsv",
    ("items german-case", "--sentences"): ("text", "text"),
}
VALID_ARGV = {
    "nonce": lambda a: ["nonce", a["treebank"], "--lang", "de", "--seed", "1"],
    "items spud": lambda a: ["items", "spud", "--orig", a["treebank"], "--lang", "de"],
    # the share is read before the model is loaded
    "probe features": lambda a: ["probe", "features", a["treebank"], "--model", "not-loaded",
                                 "--baselines", "lm=0"],
    # every split extracted here: the option under test, given last, replaces its valid one
    "probe train": lambda a: ["probe", "train", "--train-extract", a["treebank"],
                              "--dev-extract", a["treebank"], "--eval-extract", "orig",
                              a["treebank"], "--encoder", "not-loaded", "--dist-layer", "0",
                              "--label-layer", "0", "--treebank", "t", "--model", "m"],
    "score": lambda a: ["score", a["text"], "--model", a["ngram"], "--kind", "ngram",
                        "--method", "kn", "--lang", "de"],
    "table-probe": lambda a: ["table-probe", a["probe_metrics"]],
    "items cola": lambda a: ["items", "cola", a["cola"]],
    "items german-case": lambda a: ["items", "german-case"],
}
# Optional inputs not run here, and why.
UNTESTED_OPTIONAL = {("probe train", "--train"): "the first of a required choice (--train or "
                     "--train-extract): build_argv gives it, tested as a required input",
                     ("probe train", "--dev"): "feature files of a real model; read by the "
                     "same readers as --train",
                     ("probe train", "--layer-choice"): "feature files of a real model; bad "
                     "choices in tests/test_probe_sweep.py",
                     ("score", "--cache"): "a folder the job creates when missing; a file in "
                     "its place and unreadable segments in tests/test_scoring_cache.py",
                     ("score", "--offload-folder"): "a scratch folder accelerate writes "
                     "offloaded weights into, created when missing (tests/test_device_map.py)",
                     ("probe features", "--offload-folder"): "as score's",
                     ("probe train", "--offload-folder"): "as score's",
                     ("probe train", "--sentences"): "read after feature files of a real "
                     "model, by the reader of probe features --sentences (tested here)"}


def test_every_optional_input_is_covered():
    optional = {(command, action.option_strings[0])
                for command, parser in COMMANDS.items() for action in parser._actions
                if _is_path_argument(action) and action.option_strings and not action.required
                and action.dest not in OUTPUTS}
    assert optional == set(OPTIONAL_INPUTS) | set(UNTESTED_OPTIONAL)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("command", "option"), sorted(OPTIONAL_INPUTS))
def test_bad_optional_input_exits_2_with_one_line(run_cli, tmp_path, artifacts, command, option,
                                                  case):
    (tmp_path / "in").mkdir()
    bad = BadInputs(tmp_path / "in", case, artifacts)
    out = tmp_path / "out"
    argv = [*VALID_ARGV[command](artifacts), "--out", out / "result", option,
            *bad(OPTIONAL_INPUTS[command, option])]
    line = bad_input_line(run_cli, argv)
    assert line.startswith(str(bad.made[0])), line
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))


@pytest.mark.parametrize("command", ["export", "stats", "table-nonce-ratio"])
def test_console_script_prints_one_line_and_exits_2(tmp_path, command):
    """The installed entry point, stderr and all (log lines included): the commands of the
    issue that ended with a traceback."""
    import subprocess
    import sys

    missing = tmp_path / "missing"
    argv = {"export": [missing, "--out", tmp_path / "out.conllu"],
            "stats": [missing, "--treebank", "t", "--split", "s", "--lang", "en",
                      "--out", tmp_path / "out.parquet"],
            "table-nonce-ratio": [missing, "--out", tmp_path / "out"]}[command]
    result = subprocess.run([sys.executable, "-m", "spudflow", command, *map(str, argv)],
                            capture_output=True, text=True)
    assert result.returncode == EXIT_BAD_INPUT, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"{missing}: no such")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# --- Inputs given twice and folders that are not score caches --------------------------------
# (kept apart from the cases above: the same shape, for what would count data twice or delete it)

def _list_input_calls(command: str) -> list[int]:
    """The positions, among build_argv's calls of its BadInputs, of the inputs that take a list
    of paths (nargs + or *)."""
    calls, positions = 0, []
    for action in COMMANDS[command]._actions:
        if isinstance(action, argparse._HelpAction) or action.dest in OUTPUTS:
            continue
        if _lookup(INPUT_KINDS, command, action.dest) is None or \
                not (action.required or not action.option_strings):
            continue
        if _is_path_argument(action) and action.nargs in ("+", "*"):
            positions.append(calls)
        calls += 1
    return positions


class GivenTwice(BadInputs):
    """Missing inputs, the one at build_argv's call TWICE given twice."""

    def __init__(self, root: Path, artifacts: dict[str, Path], twice: int):
        super().__init__(root, "missing", artifacts)
        self.calls, self.twice = 0, twice

    def __call__(self, kinds) -> list[str]:
        values = super().__call__(kinds)
        self.calls += 1
        return values * 2 if self.calls - 1 == self.twice else values


TWICE_CASES = [(command, position) for command in sorted(COMMANDS)
               for position in _list_input_calls(command)]


def test_the_commands_taking_lists_of_inputs_are_enumerated():
    assert {"ingest", "table-treebank-stats", "table-spud-scores", "probe gather",
            "ngram-train", "score-gather"} <= {command for command, _ in TWICE_CASES}


@pytest.mark.parametrize(("command", "position"), TWICE_CASES)
def test_an_input_given_twice_exits_2_with_one_line(run_cli, tmp_path, artifacts, command,
                                                    position):
    (tmp_path / "in").mkdir()
    bad = GivenTwice(tmp_path / "in", artifacts, position)
    out = tmp_path / "out"
    argv = build_argv(command, bad, out)
    line = bad_input_line(run_cli, argv)
    assert any(line == f"{p}: given twice" for p in map(str, bad.made)), line
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))


CACHE_COMMANDS = sorted(command for command, parser in COMMANDS.items()
                        if any(_lookup(INPUT_KINDS, command, a.dest) == "cache"
                               for a in parser._actions))


def test_the_cache_commands_are_enumerated():
    assert {"cache stats", "cache prune", "cache verify", "cache compact"} <= set(CACHE_COMMANDS)


@pytest.mark.parametrize("command", CACHE_COMMANDS)
def test_a_folder_that_is_not_a_score_cache_exits_2_and_stays(run_cli, tmp_path, artifacts,
                                                              command):
    folder = tmp_path / "results"
    (folder / "tables" / "spud").mkdir(parents=True)
    (folder / "tables" / "spud" / "seg-1.parquet").write_bytes(artifacts["tokens"].read_bytes())
    before = sorted(folder.rglob("*"))
    argv = [*command.split(), folder]
    if command == "cache prune":
        argv += ["--keep-models", "m"]
    line = bad_input_line(run_cli, argv)
    assert line.startswith(f"{folder}: not a score cache"), line
    assert sorted(folder.rglob("*")) == before


# ---------------------------------------------------------------------------------------------
# Bad arguments, checked before any work: outputs that cannot be written, values that
# config/schema.yaml refuses, argparse's own errors, models that cannot load, and inputs that
# would give nothing. Each exits 2 with one line, and nothing is written.
# ---------------------------------------------------------------------------------------------
from spudflow.core import option_types, output_paths  # noqa: E402

OUTPUT_TYPES = {output_paths.output_file, output_paths.output_dir, output_paths.output_stem,
                output_paths.output_path}
REQUIRED_OUTPUT = sorted(command for command, parser in COMMANDS.items()
                         if any(a.dest in OUTPUTS and a.required for a in parser._actions))
SEED_TYPES = {option_types.seed}
LANGUAGE_TYPES = {option_types.language, option_types.language_list}


def test_every_output_argument_is_checked_when_the_command_line_is_read():
    actions = [(command, action) for command, parser in COMMANDS.items()
               for action in parser._actions]
    assert [(c, a.dest) for c, a in actions if a.dest in OUTPUTS and a.type not in OUTPUT_TYPES
            ] == []
    assert [(c, a.dest) for c, a in actions if a.type in OUTPUT_TYPES
            and a.dest not in OUTPUTS] == []


@pytest.mark.parametrize("command", REQUIRED_OUTPUT)
def test_an_output_below_a_file_exits_2_before_the_inputs_are_read(run_cli, tmp_path, artifacts,
                                                                   command):
    (tmp_path / "in").mkdir()
    blocker = tmp_path / "a_file"
    blocker.write_text("kept\n", encoding="utf-8")
    argv = build_argv(command, BadInputs(tmp_path / "in", "missing", artifacts), blocker)
    line = bad_input_line(run_cli, argv)
    assert line.startswith(f"{blocker}/") and f"{blocker} is a file, not a directory" in line
    assert blocker.read_text(encoding="utf-8") == "kept\n"


@pytest.fixture(scope="module")
def work_inputs(artifacts, tmp_path_factory) -> dict[str, Path]:
    """Valid inputs that make real work: an items file of SPUD pairs and the same with no
    rows, a GGUF file of random bytes and one cut after its header, a model whose config.json
    asks for its own Python code."""
    import json
    import shutil

    import pyarrow.parquet as pq
    from scoring_models import tiny_model_dir

    from spudflow.cli import main

    root = tmp_path_factory.mktemp("work_inputs")
    items = root / "items.parquet"
    assert main(["items", "spud", "--orig", str(artifacts["treebank"]), "--lang", "de",
                 "--min-words", "1", "--out", str(items)]) == 0
    pq.write_table(pq.read_table(items).slice(0, 0), root / "no_items.parquet")
    (root / "random.gguf").write_bytes(bytes(range(256)) * 8)
    (root / "cut.gguf").write_bytes(b"GGUF\x03\x00\x00\x00\x01")
    remote = shutil.copytree(tiny_model_dir("causal", "bytebpe"), root / "custom_code_model")
    config = json.loads((remote / "config.json").read_text(encoding="utf-8"))
    config.update(model_type="spudflow_custom", auto_map={
        "AutoConfig": "configuration_custom.CustomConfig",
        "AutoModelForCausalLM": "modeling_custom.CustomModel"})
    (remote / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return {**artifacts, "items": items, "no_items": root / "no_items.parquet",
            "random.gguf": root / "random.gguf", "cut.gguf": root / "cut.gguf",
            "custom_code_model": remote}


# (command with valid inputs and the output OUT; the output argument)
WORK_BEFORE_OUTPUT = {
    "ingest": (lambda a: ["ingest", MINI, "--out", "OUT"], "--out"),
    "score": (lambda a: ["score", a["text"], "--model", a["ngram"], "--kind", "ngram",
                         "--method", "kn", "--lang", "de", "--out", "OUT"], "--out"),
    "ngram-train": (lambda a: ["ngram-train", a["treebank"], "--lang", "de", "--out", "OUT"],
                    "--out"),
    "nonce --conllu": (lambda a: ["nonce", a["treebank"], "--lang", "de", "--seed", "1",
                                  "--out", "NONCE", "--conllu", "OUT"], "--conllu"),
    "score --cache": (lambda a: ["score", a["text"], "--model", a["ngram"], "--kind", "ngram",
                                 "--method", "kn", "--lang", "de", "--out", "NONCE", "--cache",
                                 "OUT"], "--cache"),
    "training-share": (lambda a: ["training-share", a["treebank"], "--fraction", "0.5",
                                  "--out", "OUT"], "--out"),
}


@pytest.mark.parametrize("where", ["below a file", "a file"])
@pytest.mark.parametrize("command", sorted(WORK_BEFORE_OUTPUT))
def test_an_unwritable_output_of_real_work_exits_2(run_cli, tmp_path, work_inputs, command,
                                                   where):
    """The commands that wrote (or scored) first and then died with a traceback: ingest, score
    (after loading the model), ngram-train, nonce --conllu."""
    build, option = WORK_BEFORE_OUTPUT[command]
    blocker = tmp_path / "a_file"
    blocker.write_text("kept\n", encoding="utf-8")
    out = blocker / "result" if where == "below a file" else blocker
    if where == "a file" and (option == "--conllu" or command == "ngram-train"):
        pytest.skip("an output file in place of a file is the previous output it replaces")
    if where == "a file" and option == "--cache":
        pytest.skip("a file in place of the score cache: tests/test_scoring_cache.py")
    argv = [str(out if a == "OUT" else tmp_path / "nonce" if a == "NONCE" else a)
            for a in build(work_inputs)]
    line = bad_input_line(run_cli, argv)
    assert line.startswith(f"{out}: "), line
    assert blocker.read_text(encoding="utf-8") == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_an_output_in_a_folder_without_write_permission_exits_2(run_cli, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, _, err = run_cli("ingest", MINI, "--out", locked / "tb")
    finally:
        locked.chmod(0o755)
    assert code == EXIT_BAD_INPUT
    assert one_line(err) == f"{locked / 'tb'}: cannot be written: no permission to write in " \
        f"{locked}"


def test_fetch_of_something_that_is_not_a_url_exits_2(run_cli, tmp_path):
    code, _, err = run_cli("fetch", "not a url", "--out", tmp_path / "split.conllu")
    assert code == EXIT_BAD_INPUT
    assert one_line(err).startswith("not a url: not a URL")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("model", ["random.gguf", "cut.gguf", "custom_code_model"])
def test_a_model_that_cannot_load_exits_2_naming_it(run_cli, tmp_path, work_inputs, model):
    code, _, err = run_cli("score", work_inputs["text"], "--model", work_inputs[model],
                           "--kind", "causal", "--method", "ppl", "--lang", "de", "--device",
                           "cpu", "--out", tmp_path / "scores")
    assert code == EXIT_BAD_INPUT
    line = one_line(err)
    assert line.startswith(f"{work_inputs[model]}: "), line
    if model == "custom_code_model":  # which flag (and which config key) would allow it
        assert "its own Python code" in line and "--trust-remote-code" in line
        assert "trust_remote_code: true" in line
    else:
        assert "not a readable GGUF model file" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_argparse_error_is_one_line_and_exit_2(capsys, command):
    from spudflow.cli import main

    with pytest.raises(SystemExit) as stop:
        main([*command.split(), "--no-such-option"])
    assert stop.value.code == EXIT_BAD_INPUT
    # an old name (an alias) reports the command's name
    assert one_line(capsys.readouterr().err).startswith(f"{COMMANDS[command].prog}: ")


def test_seeds_and_languages_are_checked_as_the_config_checks_them():
    """Every seed and language option has the type that checks config/schema.yaml's
    constraints (tests/test_config_defaults.py compares them with the schema)."""
    options = [(command, action.dest, action.type) for command, parser in COMMANDS.items()
               for action in parser._actions if action.option_strings]
    seeds = [(c, d) for c, d, t in options if d.endswith(("seed", "seeds"))]
    languages = [(c, d) for c, d, t in options if d in ("lang", "languages")]
    assert len(seeds) >= 15 and len(languages) >= 6
    assert [(c, d) for c, d, t in options if (c, d) in seeds and t not in SEED_TYPES] == []
    assert [(c, d) for c, d, t in options if (c, d) in languages and t not in LANGUAGE_TYPES
            ] == []


# (argv with valid inputs, what the one line starts with: an option or an input)
BOUNDS = {
    "n-gram order 11": (lambda a: ["ngram-train", a["treebank"], "--lang", "de", "--order",
                                   "11"], "spudflow ngram-train: argument --order: 11 is "
                        "greater than the maximum of 10"),
    "n-gram order 3000": (lambda a: ["ngram-train", a["treebank"], "--lang", "de", "--order",
                                     "3000"], "spudflow ngram-train: argument --order: 3000"),
    "seed -1": (lambda a: ["nonce", a["treebank"], "--lang", "de", "--seed", "-1"],
                "spudflow nonce: argument --seed: -1 is less than the minimum of 0"),
    "share seed -1": (lambda a: ["training-share", a["treebank"], "--fraction", "0.5",
                                 "--seed", "-1"], "spudflow training-share: argument --seed"),
    "language EN/../x": (lambda a: ["ngram-train", a["treebank"], "--lang", "EN/../x"],
                         "spudflow ngram-train: argument --lang: 'EN/../x' does not match"),
    "languages en,EN/../x": (lambda a: ["score", a["text"], "--model", a["ngram"], "--kind",
                                        "ngram", "--method", "kn", "--languages", "en,EN/../x"],
                             "spudflow score: argument --languages: 'EN/../x' does not match"),
    "empty share": (lambda a: ["training-share", a["treebank"], "--fraction", "1e-300"],
                    "--fraction: 1e-300 of the 2 sentences"),
    "empty rest": (lambda a: ["training-share", a["treebank"], "--fraction", "0.999",
                              "--rest"], "--fraction: 0.999 of the 2 sentences"),
    "min words 100000": (lambda a: ["items", "spud", "--orig", a["treebank"], "--lang", "de",
                                    "--min-words", "100000"], "TREEBANK: no items"),
    "items file of no rows": (lambda a: ["score", a["no_items"], "--model", a["ngram"],
                                         "--kind", "ngram", "--method", "kn"],
                              "NO_ITEMS: holds no items to score"),
}


@pytest.mark.parametrize("case", sorted(BOUNDS))
def test_a_value_out_of_bounds_exits_2_with_one_line(capsys, tmp_path, work_inputs, case):
    """Bounds the schema sets and the commands did not (an n-gram order of 3000 took 3 GB),
    values the schema refuses, and settings that would write a share or items file of
    nothing, or score one to empty tables, with exit 0."""
    from spudflow.cli import main

    build, start = BOUNDS[case]
    argv = [str(a) for a in build(work_inputs)] + ["--out", str(tmp_path / "out")]
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's errors
        code = stop.code
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT, f"{argv}: exit {code}\n{err}"
    start = start.replace("TREEBANK", str(work_inputs["treebank"])).replace(
        "NO_ITEMS", str(work_inputs["no_items"]))
    assert one_line(err).startswith(start), err
    assert list(tmp_path.iterdir()) == []
