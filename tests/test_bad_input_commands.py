"""Every `spudflow` subcommand given a missing, empty or wrong-kind input: exit 2, one line
`PATH…: what is wrong` naming the input, and no output.

The subcommands are enumerated from the argparse parser, so a new command is covered as soon as
it exists: the test fails until its input arguments are described in INPUT_KINDS below.
"""

from __future__ import annotations

import argparse
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
    ("pairs spud", "orig"): "treebank",
    ("pairs german-case", "templates"): "tsv",
    ("pairs japanese-transitivity", "lexicon"): "tsv",
    ("pairs count-verbs", "corpus"): "text",
    ("pairs count-verbs", "lexicon"): "tsv",
    ("pairs cola", "files"): "tsv",
    ("pairs blimp", "paths"): "jsonl",
    ("train-control", "text"): "text",
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
          ("train-control", "kind"): "causal", ("score", "kind"): "causal",
          ("probe train", "model"): "m", "keep_models": "m"}
# Inputs that argparse cannot mark required (append actions), added by hand.
EXTRA = {"probe train": lambda bad: ["--eval", "orig", *bad(("features", "treebank"))],
         # one of --templates and --sentences (a mutually exclusive group argparse requires)
         "pairs german-case": lambda bad: ["--templates", *bad("tsv")],
         "front-page": lambda bad: ["--table", f"blimp_overall={bad('parquet')[0]}"]}
# Commands for which no file is of the wrong kind (beyond being empty or missing).
ANY_KIND = {"fetch": "copies bytes without reading them"}

# File names of the bad inputs end as the real ones do (a score input is read by its suffix).
SUFFIXES = {"conllu": ".conllu", "tsv": ".tsv", "csv": ".csv", "jsonl": ".jsonl", "text": ".txt",
            "url": ".txt", "yaml": ".yaml", "parquet": ".parquet", "features": ".safetensors"}
TEXT_SUFFIXES = {".conllu", ".tsv", ".csv", ".jsonl", ".txt", ".yaml"}

CASES = ("missing", "empty", "garbage", "other_artifact")


def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(command words, parser) of every runnable subcommand, nested ones (`pairs spud`) too."""
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
    return action.type is Path


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
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        input_kind = _lookup(INPUT_KINDS, command, action.dest)
        is_input = input_kind is not None
        assert is_input or action.dest in OUTPUTS or not _is_path_argument(action) \
            or not action.required, f"`{command}`: say what {action.dest} reads in INPUT_KINDS"
        if not (action.required or not action.option_strings):
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
    assert {"ingest", "export", "stats", "table-nonce-ratio", "pairs spud", "probe train",
            "score", "train-control", "figure-german-case-roc"} <= set(COMMANDS)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_input_exits_2_with_one_line(run_cli, tmp_path, artifacts, command, case):
    if case in ("garbage", "other_artifact") and command in ANY_KIND:
        pytest.skip(f"{command} {ANY_KIND[command]}")
    bad = BadInputs(tmp_path / "in", case, artifacts)
    (tmp_path / "in").mkdir()
    out = tmp_path / "out"
    argv = build_argv(command, bad, out)
    code, _, err = run_cli(*argv)
    lines = err.strip().splitlines()
    assert code == EXIT_BAD_INPUT, f"{argv}: exit {code}\n{err}"
    assert len(lines) == 1, err
    named = [str(p) for p in bad.made] + [p.as_uri() for p in bad.made]
    assert any(lines[0].startswith(f"{p}:") or lines[0].startswith(f"{p}/") for p in named), \
        lines[0]
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))


# Optional inputs, each tested with valid required arguments (which are read first).
OPTIONAL_INPUTS = {
    ("nonce", "--lexicon"): "tsv",
    ("nonce", "--pool"): "treebank",
    ("nonce", "--lexicon-from"): "treebank",
    ("score", "--unigram"): "parquet",
    ("pairs spud", "--nonce"): "treebank",
    ("probe features", "--sentences"): "treebank",
    ("table-probe", "--layer-choice"): "parquet",
    ("pairs cola", "--phenomena"): "tsv",
    ("pairs german-case", "--templates"): "tsv",
    ("pairs german-case", "--sentences"): ("text", "text"),
}
VALID_ARGV = {
    "nonce": lambda a: ["nonce", a["treebank"], "--lang", "de", "--seed", "1"],
    "pairs spud": lambda a: ["pairs", "spud", "--orig", a["treebank"], "--lang", "de"],
    # the share is read before the model is loaded
    "probe features": lambda a: ["probe", "features", a["treebank"], "--model", "not-loaded",
                                 "--baselines", "lm=0"],
    "score": lambda a: ["score", a["text"], "--model", a["ngram"], "--kind", "ngram",
                        "--method", "kn", "--lang", "de"],
    "table-probe": lambda a: ["table-probe", a["probe_metrics"]],
    "pairs cola": lambda a: ["pairs", "cola", a["cola"]],
    "pairs german-case": lambda a: ["pairs", "german-case"],
}
# Optional inputs not run here, and why.
UNTESTED_OPTIONAL = {("probe train", "--dev"): "feature files of a real model; read by the "
                     "same readers as --train",
                     ("probe train", "--layer-choice"): "feature files of a real model; bad "
                     "choices in tests/test_probe_sweep.py",
                     ("score", "--cache"): "a folder the job creates when missing; a file in "
                     "its place and unreadable segments in tests/test_scoring_cache.py"}


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
    code, _, err = run_cli(*argv)
    lines = err.strip().splitlines()
    assert code == EXIT_BAD_INPUT, f"{argv}: exit {code}\n{err}"
    assert len(lines) == 1, err
    assert lines[0].startswith(str(bad.made[0])), lines[0]
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
    code, _, err = run_cli(*argv)
    lines = err.strip().splitlines()
    assert code == EXIT_BAD_INPUT, f"{argv}: exit {code}\n{err}"
    assert len(lines) == 1, err
    assert any(lines[0] == f"{p}: given twice" for p in map(str, bad.made)), lines[0]
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
    code, _, err = run_cli(*argv)
    lines = err.strip().splitlines()
    assert code == EXIT_BAD_INPUT, err
    assert len(lines) == 1 and lines[0].startswith(f"{folder}: not a score cache"), err
    assert sorted(folder.rglob("*")) == before
