"""Failures of the system rather than of an input's content, and values that parse but mean
nothing: a full disk or file size limit, a file the command may not read, a path holding a
newline, a rate of nan. Each is exit 2 and one line naming the path or option, with nothing left
at the outputs (no empty folders, no `.partial-*` blocks)."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from spudflow.core.errors import EXIT_BAD_INPUT

MINI = Path(__file__).parent / "data" / "mini.conllu"


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip() and " INFO " not in line
             and " WARNING " not in line and "%|" not in line]  # logs, progress bars
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    from spudflow.cli import main

    root = tmp_path_factory.mktemp("inputs")
    assert main(["ingest", str(MINI), "--out", str(root / "tb")]) == 0
    assert main(["ngram-train", str(root / "tb"), "--lang", "de", "--out",
                 str(root / "lm.parquet")]) == 0
    assert main(["items", "spud", "--orig", str(root / "tb"), "--lang", "de", "--min-words",
                 "1", "--out", str(root / "items.parquet")]) == 0
    return {"treebank": root / "tb", "ngram": root / "lm.parquet",
            "items": root / "items.parquet"}


# Commands that write more than 200 bytes, with their output OUT (below a folder they make).
WRITERS = {
    "ingest": lambda a: ["ingest", MINI, "--out", "OUT"],
    "export": lambda a: ["export", a["treebank"], "--out", "OUT"],
    "nonce": lambda a: ["nonce", a["treebank"], "--lang", "de", "--seed", "1", "--out", "OUT"],
    "training-share": lambda a: ["training-share", a["treebank"], "--fraction", "0.5",
                                 "--out", "OUT"],
    "ngram-train": lambda a: ["ngram-train", a["treebank"], "--lang", "de", "--out", "OUT"],
    "items spud": lambda a: ["items", "spud", "--orig", a["treebank"], "--lang", "de",
                             "--min-words", "1", "--out", "OUT"],
    "score": lambda a: ["score", a["items"], "--model", a["ngram"], "--kind", "ngram",
                        "--method", "kn", "--lang", "de", "--out", "OUT"],
    "stats": lambda a: ["stats", a["treebank"], "--treebank", "t", "--split", "test",
                        "--lang", "de", "--out", "OUT"],
}


def _file_size_limit():
    """A child whose files may hold 200 bytes: its writes past that fail (SIGXFSZ, which spudflow
    ignores, then EFBIG)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))


def _no_bytecode() -> dict[str, str]:
    """The child's environment: no bytecode written, since Python would write a module's .pyc
    cut at 200 bytes without noticing, and every later import of that module would fail."""
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_full_disk_names_the_output_and_leaves_nothing(tmp_path, inputs, command):
    out = tmp_path / "made" / "below" / "out"
    argv = [str(out if a == "OUT" else a) for a in WRITERS[command](inputs)]
    done = subprocess.run([sys.executable, "-m", "spudflow", *argv], capture_output=True,
                          text=True, preexec_fn=_file_size_limit,
                          env=_no_bytecode(), check=False)
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    line = one_line(done.stderr)
    assert line.startswith(f"{out}") and "file too large" in line, line
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_in_an_existing_folder_keeps_it_and_removes_the_blocks(tmp_path, inputs):
    """score's resumable blocks (.partial-*) go with the rest; the folder the user made stays,
    with what it held."""
    out = tmp_path / "scores"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    argv = [str(out if a == "OUT" else a) for a in WRITERS["score"](inputs)]
    done = subprocess.run([sys.executable, "-m", "spudflow", *argv], capture_output=True,
                          text=True, preexec_fn=_file_size_limit,
                          env=_no_bytecode(), check=False)
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv to drop root")
def test_an_unreadable_input_names_it():
    """chmod 000: as root every file is readable, so the command runs as nobody (in a folder
    outside pytest's, which only root may enter)."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o777)
        _unreadable_input(Path(folder))


def _unreadable_input(tmp_path: Path) -> None:
    src = tmp_path / "split.conllu"
    shutil.copyfile(MINI, src)
    src.chmod(0)
    out = tmp_path / "tb"
    user = [] if os.geteuid() else ["setpriv", "--reuid=65534", "--regid=65534",
                                    "--clear-groups"]
    done = subprocess.run([*user, sys.executable, "-m", "spudflow", "ingest", str(src), "--out",
                           str(out)], capture_output=True, text=True, check=False,
                          env={**os.environ, "HOME": str(tmp_path)})
    if "Permission denied" in done.stderr and "spudflow" not in done.stderr:
        pytest.skip("nobody cannot run this interpreter")
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert one_line(done.stderr) == f"{src}: permission denied: nothing written"
    assert not out.exists()


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_a_system_error_while_writing_is_one_line(run_cli, tmp_path, monkeypatch, code):
    """A read-only cache (cache compact/prune), a folder the command may not write: the path
    the system names, one line."""
    import spudflow.ingest.cli as ingest_cli

    def refuse(args):
        raise OSError(code, os.strerror(code), str(tmp_path / "cache" / "segment"))

    monkeypatch.setattr(ingest_cli, "run_ingest", refuse)
    from spudflow.cli import build_parser  # the handler is looked up when parsing

    monkeypatch.setattr("spudflow.cli.shared_parser", lambda: _with_handler(build_parser(),
                                                                              refuse))
    status, _, err = run_cli("ingest", MINI, "--out", tmp_path / "new" / "tb")
    assert status == EXIT_BAD_INPUT
    assert one_line(err).startswith(f"{tmp_path / 'cache' / 'segment'}: ")
    assert not (tmp_path / "new").exists()


def _with_handler(parser, handler):
    parser.set_defaults()
    sub = next(a for a in parser._actions if a.dest == "command")
    sub.choices["ingest"].set_defaults(handler=handler)
    return parser


def test_a_newline_in_a_path_stays_on_one_line(run_cli, tmp_path):
    missing = tmp_path / "two\nlines.conllu"
    status, _, err = run_cli("ingest", missing, "--out", tmp_path / "tb")
    assert status == EXIT_BAD_INPUT
    assert err.count("\n") == 1 and "two\\nlines.conllu" in err, err


@pytest.mark.parametrize(("argv", "option"), [
    (["probe", "train", "--lr", "nan"], "--lr"),
    (["control-train", "--learning-rate", "nan"], "--learning-rate"),
    (["control-train", "--learning-rate", "inf"], "--learning-rate"),
    (["ngram-train", "--k", "nan"], "--k"),
])
def test_a_rate_of_nan_is_refused_when_parsed(capsys, argv, option):
    from spudflow.cli import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == EXIT_BAD_INPUT
    line = one_line(capsys.readouterr().err)
    assert f"argument {option}" in line and "is not a finite number" in line, line


def test_rehearse_checks_the_config_before_making_its_folder(run_cli, tmp_path):
    """A treebank without `lang` was a KeyError after the work folder was made."""
    config = tmp_path / "bad.yaml"
    config.write_text("treebanks:\n  x: {}\n", encoding="utf-8")
    status, _, err = run_cli("rehearse", config, "--workdir", tmp_path / "work")
    assert status == EXIT_BAD_INPUT
    assert one_line(err).startswith(f"{config}: config key ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


@pytest.mark.parametrize("kind", ["folder", "fifo", "/dev/null"])
@pytest.mark.parametrize("command", ["ingest", "score", "control-train"])
def test_an_input_file_that_is_not_a_regular_file_says_what_it_is(run_cli, tmp_path, kind,
                                                                  command):
    """A folder, a FIFO or /dev/null was `no such file`."""
    if kind == "folder":
        path = tmp_path / "in.txt"
        path.mkdir()
    elif kind == "fifo":
        path = tmp_path / "in.txt"
        os.mkfifo(path)
    else:
        path = Path(kind)
    out = tmp_path / "out"
    argv = {"ingest": ["ingest", path, "--out", out],
            "score": ["score", path, "--model", "x", "--kind", "ngram", "--method", "kn",
                      "--out", out],
            "control-train": ["control-train", "--text", path, "--kind", "causal", "--out",
                              out]}[command]
    if kind == "folder" and command == "control-train":
        argv[2] = path = tmp_path  # a folder is an ingested split there; a missing table
    status, _, err = run_cli(*argv)
    assert status == EXIT_BAD_INPUT
    if kind == "folder" and command == "control-train":
        assert one_line(err) == f"{path}/sentences.parquet: no such file", err
        return
    reason = "is a directory, not a file" if kind == "folder" else \
        "is not a regular file (a FIFO, socket or device)"
    assert one_line(err) == f"{path}: {reason}", err
    assert not out.exists()


def test_fetch_never_repeats_a_password_of_its_url(run_cli, tmp_path):
    url = "http://bob:s3cret@127.0.0.1:9/split.conllu"  # nothing listens on port 9
    status, _, err = run_cli("fetch", url, "--out", tmp_path / "split.conllu")
    assert status == EXIT_BAD_INPUT
    assert "s3cret" not in err and "bob" not in err
    assert one_line(err).startswith("http://***@127.0.0.1:9/split.conllu: download failed")


# --- Tracebacks and unclear messages of odd inputs, each now one line (or a working output) ---


def test_a_doubled_row_of_nonce_statistics_is_one_line(run_cli, tmp_path, inputs):
    import pyarrow as pa
    import pyarrow.parquet as pq

    nonce = tmp_path / "n"
    assert run_cli("nonce", inputs["treebank"], "--lang", "de", "--seed", "1",
                   "--out", nonce)[0] == 0
    stats = pq.read_table(nonce / "replacement_stats.parquet")
    doubled = tmp_path / "doubled.parquet"
    pq.write_table(pa.concat_tables([stats, stats]), doubled)
    code, _, err = run_cli("table-nonce-ratio", doubled, "--out", tmp_path / "out" / "ratio")
    assert code == EXIT_BAD_INPUT
    assert one_line(err).startswith(f"{doubled}: rows 1 and {stats.num_rows + 1} are one row "
                                    "twice")
    assert not (tmp_path / "out").exists()


def _damaged_cache(root: Path) -> tuple[Path, Path, dict]:
    """A score cache with a store whose fences.npy claims 10^30 entries (np.load: OverflowError)
    and a segment whose Parquet footer claims 2 GiB (ArrowInvalid): reading either used to be
    able to raise what no handler caught."""
    import re
    import struct

    import numpy as np

    from spudflow.scoring.cache_files import STORE_GLOB, write_segment
    from spudflow.scoring.cache_marker import mark
    from spudflow.scoring.cache_upkeep import compact

    mark(root)
    folder = root / "0123456789abcdef01234567"
    folder.mkdir()
    rng = np.random.default_rng(1)
    truth = {rng.bytes(32): rng.normal(-5, 2, 4) for _ in range(20)}
    write_segment(folder, truth)
    assert compact(folder) is not None
    (store,) = folder.glob(STORE_GLOB)
    fences = store / "fences.npy"
    fences.write_bytes(re.sub(rb"'shape': \(\d+,\)", b"'shape': (10**30,)".replace(
        b"10**30", str(10**30).encode()), fences.read_bytes(), count=1))
    segment = write_segment(folder, {rng.bytes(32): rng.normal(-5, 2, 3) for _ in range(3)})
    data = bytearray(segment.read_bytes())
    data[-8:-4] = struct.pack("<i", 2**31 - 1)
    segment.write_bytes(bytes(data))
    return store, segment, truth


def test_a_malformed_cache_store_or_segment_is_a_miss_and_verify_removes_it(run_cli, tmp_path):
    from spudflow.scoring.cache import ScoreCache
    from spudflow.scoring.cache_files import StoreReader, read_segment

    root = tmp_path / "cache"
    store, segment, truth = _damaged_cache(root)
    with pytest.raises(OverflowError):  # what the reader raises, caught as damage
        StoreReader(store)
    with pytest.raises(Exception, match="footer"):
        read_segment(segment)

    class Setting:
        name, kind = "m", "causal"

        def id(self):
            return store.parent.name

    assert ScoreCache(root, Setting(), 0).lookup(list(truth)) == {}  # misses, no traceback
    for command in ("stats", "compact"):
        code, _, err = run_cli("cache", command, root)
        assert code == 0 and "Traceback" not in err, err
    code, out, err = run_cli("cache", "verify", root)
    assert code == 0, err
    assert sorted(out.split()) == sorted([str(segment), str(store)])
    assert not store.exists() and not segment.exists()


def test_cache_commands_leave_links_and_what_they_lead_to(run_cli, tmp_path):
    """A setting folder that is a link, and links named like a segment, a store or a temporary
    file inside a setting: no command follows them or fails on them."""
    from spudflow.scoring.cache import ScoreCache

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mine.txt").write_text("mine\n", encoding="utf-8")
    root = tmp_path / "cache"
    store, segment, truth = _damaged_cache(root)
    store.parent.joinpath(store.name).rename(root / "x")  # keep one sound segment only
    import shutil

    shutil.rmtree(root / "x")
    segment.unlink()
    folder = store.parent
    links = [root / "0123456789abcdef0123ffff",
             folder / "seg-01795928217522114500-be5136c47b974661b1b02d5cae4a0eaa.parquet",
             folder / "store-01795928217522114500-be5136c47b974661b1b02d5cae4a0eab",
             folder / ".tmp-01795928217522114500"]
    for link, target in zip(links, [outside, outside / "mine.txt", outside, outside],
                            strict=True):
        link.symlink_to(target)
        os.utime(link, (1, 1), follow_symlinks=False)  # older than prune's hour
    ScoreCache(root, type("S", (), {"name": "m", "kind": "causal",
                                    "id": lambda self: folder.name})(), 0).store(
        {b"k" * 32: np.zeros(3)})
    for command in (["stats"], ["verify"], ["compact"], ["prune", "--keep-models", "m"],
                    ["prune", "--keep-models", "nobody"]):
        code, _, err = run_cli("cache", command[0], root, *command[1:])
        assert code == 0 and "Traceback" not in err, (command, err)
        assert (outside / "mine.txt").read_text(encoding="utf-8") == "mine\n"
    assert links[0].is_symlink()


def test_a_causal_checkpoint_asked_for_as_masked_is_one_line(run_cli, tmp_path):
    from scoring_models import tiny_model_dir

    model = tiny_model_dir("causal", "bytebpe")
    (tmp_path / "text.txt").write_text("the cat sat\n", encoding="utf-8")
    code, _, err = run_cli("score", tmp_path / "text.txt", "--model", model, "--kind", "masked",
                           "--method", "pppl", "--out", tmp_path / "out")
    assert code == EXIT_BAD_INPUT
    assert one_line(err) == (
        f"{model}: cannot load a masked model: transformers has no AutoModelForMaskedLM for "
        "its architecture (GPT2Config); choose the --kind the model is (causal, masked, "
        "electra)")
    assert not (tmp_path / "out").exists()


def test_a_hub_id_out_of_reach_is_one_line_naming_it(tmp_path):
    """No HF_HUB_OFFLINE, an empty hub cache and a hub that cannot be reached: the hub client
    warned twice per retry (45 lines) before the error; now one line naming the model id.
    (Its retries' sleeps are skipped here.)"""
    from spudflow.cli import main

    (tmp_path / "text.txt").write_text("the cat sat\n", encoding="utf-8")
    assert main(["ingest", str(MINI), "--out", str(tmp_path / "tb")]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT="http://127.0.0.1:9")
    script = ("import sys, time\ntime.sleep = lambda seconds: None\n"
              "from spudflow.cli import main\nsys.exit(main(sys.argv[1:]))")
    for command in (["score", "text.txt", "--model", "nobody/tiny-model", "--kind", "causal",
                     "--method", "ppl", "--out", "out"],
                    ["probe", "features", "tb", "--model", "nobody/tiny-model",
                     "--baselines", "lm=1", "--out", "out"]):
        done = subprocess.run([sys.executable, "-c", script, *command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == EXIT_BAD_INPUT, done.stderr
        assert one_line(done.stderr).startswith("nobody/tiny-model: cannot load "), done.stderr
        assert "not in the local hub cache, and https://huggingface.co cannot be reached" in \
            done.stderr, done.stderr
        assert not (tmp_path / "out").exists()


def test_a_scores_file_outside_its_folders_says_the_layout(run_cli, tmp_path):
    from aggregate_inputs import blimp_inputs

    items, scores = blimp_inputs(tmp_path, n_pairs=2)
    moved = tmp_path / "item_scores.parquet"
    shutil.copy(scores[0], moved)
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", moved, "--out-dir",
                           tmp_path / "tables")
    assert code == EXIT_BAD_INPUT
    assert one_line(err) == (
        f"{moved}: a scores file names its dataset by its path, results/scores/{{dataset}}/"
        f"{{model}}/item_scores.parquet, and '{tmp_path.parent.name}' from this one is the "
        "dataset of no items file ('blimp')")
    assert not (tmp_path / "tables").exists()


def test_a_config_file_that_is_not_utf8_names_its_line():
    from spudflow.core.config import encoding_errors

    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.yaml"
        config.write_bytes(b"treebanks: {}\n# caf\xe9\nnonce: {}\n")
        assert encoding_errors(config) == [
            f"{config}:2: not UTF-8 text: byte 0xe9 at offset 19 cannot be decoded; save the "
            "config file as UTF-8"]
        config.write_bytes("treebanks: {}\n# café\n".encode())
        assert encoding_errors(config) == []
