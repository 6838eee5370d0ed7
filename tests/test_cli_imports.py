"""Each `spudflow` job starts a fresh Python: a command imports only the libraries it uses, so
that a job's start-up costs what it needs. Building the parser imports no analysis or model
library, and a figure or a light table command does not load sklearn, scipy or numba, which take
seconds and which it never calls.

Each check runs the command in a fresh process (the test process has them all loaded) on real
small tables and reads the child's sys.modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from spudflow.cli import main
from spudflow.core.contract import write_artifact
from spudflow.core.table_artifacts import TABLES

from aggregate_inputs import blimp_inputs, german_case_inputs, probe_metrics, spud_inputs

MODELS = ("torch", "transformers", "tokenizers", "spacy")
ANALYSIS = ("sklearn", "scipy", "statsmodels", "numba")
PLOTS = ("matplotlib", "networkx")
HEAVY = (*MODELS, *ANALYSIS, *PLOTS)


# Libraries every command may import, none of them HEAVY: a base process imports them once and
# each check runs in a fork of it, a fresh Python as far as HEAVY goes (the base has none of
# them, checked) without paying their import again for each of a dozen checks.
LIGHT = ("numpy", "polars", "pyarrow", "pyarrow.parquet", "yaml")
FORKING_BASE = """
import json, os, sys, tempfile, traceback
from importlib import import_module
HEAVY, LIGHT = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name in LIGHT:
    import_module(name)
loaded = sorted({m.split('.')[0] for m in sys.modules} & set(HEAVY))
print(json.dumps({"base_heavy": loaded}), flush=True)
for line in sys.stdin:
    output = tempfile.TemporaryFile()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(output.fileno(), 1)
        os.dup2(output.fileno(), 2)
        try:
            namespace = {}
            exec(json.loads(line), namespace)
            heavy = sorted({m.split('.')[0] for m in sys.modules} & set(HEAVY))
            reply = {"result": namespace["result"], "heavy": heavy}
        except BaseException:
            reply = {"error": traceback.format_exc()}
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(write, json.dumps(reply).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        reply = json.loads(pipe.read() or b'{"error": "the check died"}')
    os.waitpid(pid, 0)
    output.seek(0)
    reply["output"] = output.read().decode(errors="replace")[-3000:]
    print(json.dumps(reply), flush=True)
"""
_BASE: list[subprocess.Popen] = []


@pytest.fixture(scope="module", autouse=True)
def forking_base():
    """The base process of _loaded's checks, for this module's tests."""
    base = subprocess.Popen([sys.executable, "-c", FORKING_BASE, json.dumps(HEAVY),
                             json.dumps(LIGHT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert json.loads(base.stdout.readline()) == {"base_heavy": []}
        _BASE.append(base)
        yield
    finally:
        _BASE.clear()
        base.stdin.close()
        base.wait()


def _loaded(code: str) -> tuple[object, list[str]]:
    """Run `code` (which sets `result`) in a fresh Python (a fork of the forking base): (result,
    the HEAVY top-level packages it left in sys.modules)."""
    (base,) = _BASE
    base.stdin.write(json.dumps(code) + "\n")
    base.stdin.flush()
    reply = json.loads(base.stdout.readline() or '{"error": "the forking base died"}')
    assert "error" not in reply, f"{reply['error']}\n{reply.get('output', '')}"
    return reply["result"], reply["heavy"]


def _command(*args) -> tuple[int, list[str]]:
    return _loaded(f"from spudflow.cli import main\nresult = main({[str(a) for a in args]!r})")


def test_building_the_parser_imports_no_heavy_library():
    result, heavy = _loaded("from spudflow.cli import build_parser\n"
                            "result = len(build_parser()._actions)")
    assert result > 0
    assert heavy == []


def test_help_imports_no_heavy_library():
    result, heavy = _loaded("from spudflow.cli import main\n"
                            "try:\n    main(['--help'])\nexcept SystemExit as e:\n"
                            "    result = e.code")
    assert result == 0
    assert heavy == []


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> Path:
    """Real tables of the BLiMP, SPUD, German case and probe commands, and a Japanese agreement
    table by hand (table-japanese fits glmnet: seconds)."""
    root = tmp_path_factory.mktemp("imports")
    out = root / "tables"
    for command, inputs in (("table-blimp", blimp_inputs), ("table-spud-scores", spud_inputs),
                            ("table-german-case", german_case_inputs)):
        items, scores = inputs(root / command)
        assert main([command, "--items", str(items), "--scores", *map(str, scores),
                     "--out-dir", str(out)]) == 0
    assert main(["table-probe", str(probe_metrics(root)), "--out-dir", str(out)]) == 0
    modes = ("bert/pppl", "gpt/ppl", "bert/pppl@verb")
    agreement = pl.DataFrame(
        [("ja", a, b, "perplexity", 10, 1.0 if a == b else 0.7, None, None, None, None)
         for a in modes
         for b in modes], schema=TABLES["japanese_agreement"].polars_schema(), orient="row")
    write_artifact(agreement, out / "japanese_agreement.parquet", TABLES["japanese_agreement"])
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("figure", "table", "allowed"), [
    ("figure-blimp-field", "blimp_field", ("matplotlib",)),
    ("figure-spud-log-ratios", "spud_ratios", ("matplotlib",)),
    ("figure-german-case-order-auc", "german_case_order_auc", ("matplotlib",)),
    ("figure-german-case-roc", "german_case_roc", ("matplotlib",)),
    ("figure-probe-layers", "probe_layers", ("matplotlib",)),
    ("figure-japanese-agreement-graph", "japanese_agreement", ("matplotlib", "networkx")),
])
def test_a_figure_imports_only_its_plotting_libraries(tables, tmp_path, figure, table, allowed):
    """A figure needs matplotlib (and the graph networkx), never the statistics its table was
    computed with: once every figure loaded sklearn, scipy.stats and numba through
    the analysis modules figures.py imported for a constant or a helper."""
    code, heavy = _command(figure, tables / f"{table}.parquet", "--out", tmp_path / table)
    assert code == 0
    assert (tmp_path / f"{table}.svg").stat().st_size > 0
    assert heavy == sorted(allowed)


@pytest.mark.slow
@pytest.mark.parametrize(("command", "options", "allowed"), [
    # the intervals over sentences: a bootstrap, its BCa interval computed as scipy's with numpy
    # and the standard library's normal distribution (aggregate/resampling.py): no scipy
    ("table-probe", ["--resamples", "0"], []),
    ("table-probe", [], []),
    # Wilson intervals need no library; the paradigm mean's bootstrap of 0/1 outcomes draws
    # binomial counts with numpy (aggregate/resampling.py): no scipy either
    ("table-blimp", ["--resamples", "0"], []),
    ("table-blimp", [], []),
])
def test_a_counting_table_imports_no_statistics_library(tmp_path, command, options, allowed):
    if command == "table-probe":
        args = [probe_metrics(tmp_path)]
    else:
        items, scores = blimp_inputs(tmp_path)
        args = ["--items", items, "--scores", *scores]
    code, heavy = _command(command, *args, *options, "--out-dir", tmp_path / "out")
    assert code == 0
    assert list((tmp_path / "out").glob("*.parquet"))
    assert heavy == allowed


def test_gathering_probe_feature_shards_imports_no_torch(tmp_path):
    """`probe gather` concatenates safetensors files with numpy: a gather job starts no torch."""
    import numpy as np

    from spudflow.probe.feature_file import Features, eval_set_file, read_features, write_features

    shards = []
    for i, n_words in enumerate((3, 2)):
        shard = tmp_path / f"test.shard{i + 1}"
        features = Features(layers={0: np.full((n_words, 4), i, dtype=np.float16)},
                            sent_index=np.array([i]), word_offsets=np.array([0, n_words]),
                            info={"model": "tiny", "baseline": "lm"})
        write_features(eval_set_file(shard / "lm", "orig"), features)
        shards.append(shard)
    code, heavy = _command("probe", "gather", *shards, "--out", tmp_path / "test")
    assert code == 0
    gathered = read_features(eval_set_file(tmp_path / "test" / "lm", "orig"))
    assert gathered.sent_index.tolist() == [0, 1]
    assert gathered.layers[0].shape == (5, 4)
    assert heavy == []


@pytest.mark.slow
def test_training_a_probe_imports_no_transformers(tmp_path):
    """`probe train` reads features and trains with torch alone: transformers, whose import
    took 0.8 s of a 4 s job, only seeded it (probe/train.py seed_everything)."""
    from probe_support import probe_inputs, train_args

    probe_inputs(tmp_path / "inputs")
    code, heavy = _command(*train_args(tmp_path / "inputs", [1], 1), "--dist-layer", "1",
                           "--label-layer", "1", "--out", tmp_path / "run")
    assert code == 0
    assert (tmp_path / "run" / "seed1" / "metrics.parquet").is_file()
    assert heavy == ["torch"]
