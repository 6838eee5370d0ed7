"""An output path replaces only a previous output of its own (core/atomic.py): a folder
given where a file is written, the working directory, a user's file or a Parquet file of another
artifact is bad input (exit 2, one line) and stays as it was; rerunning a command over its own
output by hand still works."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from spudflow.core.artifacts import CONTROL_LOSSES
from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import write_artifact
from spudflow.core.errors import EXIT_BAD_INPUT, InputError

MINI = Path(__file__).parent / "data" / "mini.conllu"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every entry under ROOT (hidden temporary files included) with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


@pytest.fixture
def workdir(tmp_path, monkeypatch, run_cli) -> Path:
    """A working directory with an ingested treebank `ing` and a user's folder `keep`."""
    monkeypatch.chdir(tmp_path)
    assert run_cli("ingest", MINI, "--out", "ing")[0] == 0
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "notes.txt").write_text("mine\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("out", ["keep", "."])
def test_export_to_a_folder_is_bad_input_and_keeps_the_folder(run_cli, workdir, out):
    before = tree(workdir)
    code, _, err = run_cli("export", "ing", "--out", out)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"{out}: is a directory; spudflow writes a file here and never replaces a directory: "
        "nothing written"]
    assert tree(workdir) == before


def test_export_and_stats_run_again_over_their_own_outputs(run_cli, workdir):
    for _ in range(2):
        assert run_cli("export", "ing", "--out", "mini.conllu")[0] == 0
        assert run_cli("stats", "ing", "--treebank", "t", "--split", "s", "--lang", "de",
                       "--out", "stats.parquet")[0] == 0
    assert (workdir / "mini.conllu").read_bytes() == MINI.read_bytes()


NOT_OURS = ("a file spudflow did not write, or changed since it did; spudflow replaces only "
            "what it wrote: nothing written; remove it or choose another path")


def test_a_file_of_another_format_is_not_replaced(run_cli, workdir):
    (workdir / "README.md").write_text("# My notes\n\nNot CoNLL-U.\n", encoding="utf-8")
    before = tree(workdir)
    code, _, err = run_cli("export", "ing", "--out", "README.md")
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [f"README.md: {NOT_OURS}"]
    code, _, err = run_cli("stats", "ing", "--treebank", "t", "--split", "s", "--lang", "de",
                           "--out", "ing/tokens.parquet")
    assert code == EXIT_BAD_INPUT, err
    assert err.startswith("ing/tokens.parquet: holds a Parquet file of treebank_tokens; "
                          "spudflow writes a Parquet file of treebank_stats here")
    assert tree(workdir) == before


def _serve_file(path: Path) -> str:
    return path.resolve().as_uri()


@pytest.mark.parametrize("case", ["export", "nonce-conllu", "fetch", "front-page",
                                  "table-stem", "edited"])
def test_a_users_file_of_the_same_format_is_never_replaced(run_cli, workdir, case):
    """The write rule is who wrote a file, not its format: a hand-made CoNLL-U file, a user's
    notes.txt or index.html, a README.md / budget.csv / paper.tex beside a table stem, and a
    file spudflow wrote that the user edited since all stay, exit 2, nothing written."""
    (workdir / "mine.conllu").write_bytes(b"# my own treebank\n" + MINI.read_bytes())
    (workdir / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (workdir / "index.html").write_text("<!DOCTYPE html><html>mine</html>\n", encoding="utf-8")
    assert run_cli("stats", "ing", "--treebank", "t", "--split", "s", "--lang", "de",
                   "--out", "stats.parquet")[0] == 0
    commands = {
        "export": (["export", "ing", "--out", "mine.conllu"], "mine.conllu"),
        "nonce-conllu": (["nonce", "ing", "--lang", "de", "--seed", "1", "--out", "n",
                          "--conllu", "mine.conllu"], "mine.conllu"),
        "fetch": (["fetch", _serve_file(MINI), "--out", "notes.txt"], "notes.txt"),
        "front-page": (["front-page", "--out", "index.html"], "index.html"),
        "table-stem": (["table-treebank-stats", "stats.parquet", "--out", "README"],
                       "README.md"),
        "edited": (["export", "ing", "--out", "ours.conllu"], "ours.conllu"),
    }
    command, refused = commands[case]
    if case == "table-stem":
        (workdir / "README.md").write_text("# budget notes\n", encoding="utf-8")
        (workdir / "README.csv").write_text("item,cost\nGPU,1\n", encoding="utf-8")
        (workdir / "README.tex").write_text("\\section{paper}\n", encoding="utf-8")
    if case == "edited":
        assert run_cli(*command)[0] == 0  # spudflow's file, replaced by a rerun
        assert run_cli(*command)[0] == 0
        with (workdir / "ours.conllu").open("a", encoding="utf-8") as handle:
            handle.write("# a note of the user's\n")
    before = tree(workdir)
    code, _, err = run_cli(*command)
    assert code == EXIT_BAD_INPUT, err
    line = err.strip().splitlines()[-1]
    assert line == f"{refused}: {NOT_OURS}" or case == "table-stem" and \
        line.startswith("README.") and line.endswith(NOT_OURS), line
    assert tree(workdir) == before  # nonce's folder n/ too: refused before the draw


# A command whose output conflicts, with inputs that are missing: the refusal names the
# output, so it came before any input was read, any model loaded or trained.
CONFLICTS = {
    "nonce": (["nonce", "missing", "--lang", "de", "--seed", "1", "--out", "n", "--conllu",
               "mine.conllu"], "mine.conllu", NOT_OURS),
    "nonce-folder": (["nonce", "missing", "--lang", "de", "--seed", "1", "--out", "scored"],
                     "scored/sentences.parquet", "holds a Parquet file of treebank_stats; "
                     "spudflow writes a Parquet file of treebank_sentences here"),
    "score": (["score", "missing.parquet", "--model", "missing-model", "--kind", "causal",
               "--method", "ppl", "--out", "scored", "--cache", "cache"],
              "scored/token_scores.parquet", "holds a Parquet file of treebank_tokens; spudflow "
              "writes a Parquet file of token_scores here"),
    "ngram-train": (["ngram-train", "missing.txt", "--lang", "en", "--out", "stats.parquet"],
                    "stats.parquet", "holds a Parquet file of treebank_stats; spudflow writes "
                    "a Parquet file of ngram_model here"),
    "control-train": (["control-train", "--kind", "masked", "--text", "missing.txt", "--out",
                       "keep"], "keep", "a folder that is not a control model spudflow wrote"),
}


@pytest.mark.parametrize("case", CONFLICTS)
def test_an_output_conflict_is_refused_before_any_work(run_cli, workdir, case):
    """Every output's conflict is found before the work (the inputs here do not exist: had the
    command read them, or loaded its model, it would say so first); exit 2, one line, and the
    tree unchanged byte for byte: no folder, no `.partial-*` block, no cache."""
    assert run_cli("stats", "ing", "--treebank", "t", "--split", "s", "--lang", "de",
                   "--out", "stats.parquet")[0] == 0
    (workdir / "mine.conllu").write_bytes(b"# my own treebank\n" + MINI.read_bytes())
    (workdir / "scored").mkdir()
    (workdir / "scored" / "token_scores.parquet").write_bytes(
        (workdir / "ing" / "tokens.parquet").read_bytes())
    (workdir / "scored" / "sentences.parquet").write_bytes(
        (workdir / "stats.parquet").read_bytes())
    command, path, message = CONFLICTS[case]
    before = tree(workdir)
    code, _, err = run_cli(*command)
    assert code == EXIT_BAD_INPUT, err
    [line] = err.strip().splitlines()
    assert line.startswith(f"{path}: {message}"), line
    assert tree(workdir) == before


def test_score_refuses_its_conflict_before_scoring(run_cli, workdir):
    """With inputs it could score (an n-gram model, a text file), a conflicting item_scores.parquet
    is refused before the first block: no `.partial-*` blocks, nothing added; a rerun over its
    own tables still works."""
    (workdir / "text.txt").write_text("the cat sat\nthe dog sat\n", encoding="utf-8")
    assert run_cli("ngram-train", "text.txt", "--lang", "en", "--words", "whitespace",
                   "--out", "lm.parquet")[0] == 0
    score = ["score", "text.txt", "--model", "lm.parquet", "--kind", "ngram", "--method", "kn",
             "--out", "scored"]
    assert run_cli(*score)[0] == 0
    assert run_cli(*score)[0] == 0  # its own tables are replaced
    (workdir / "scored" / "item_scores.parquet").write_bytes(b"my own notes\n")
    before = tree(workdir)
    code, _, err = run_cli(*score)
    assert code == EXIT_BAD_INPUT, err
    [line] = err.strip().splitlines()
    assert line.startswith("scored/item_scores.parquet: holds text; spudflow writes a Parquet "
                           "file of item_scores here"), line
    assert tree(workdir) == before


def test_one_refused_file_of_a_table_writes_none_of_its_files(run_cli, workdir):
    """table-treebank-stats writes STEM.parquet, .csv, .md, .tex: all or none."""
    assert run_cli("stats", "ing", "--treebank", "t", "--split", "s", "--lang", "de",
                   "--out", "stats.parquet")[0] == 0
    (workdir / "table.md").write_bytes(b"\x89PNG\r\n\x1a\n a figure")
    before = tree(workdir)
    code, _, err = run_cli("table-treebank-stats", "stats.parquet", "--out", "table")
    assert code == EXIT_BAD_INPUT, err
    assert err.startswith(f"table.md: {NOT_OURS}")
    assert tree(workdir) == before
    (workdir / "table.md").unlink()
    assert run_cli("table-treebank-stats", "stats.parquet", "--out", "table")[0] == 0
    assert run_cli("table-treebank-stats", "stats.parquet", "--out", "table")[0] == 0


def _probe_run(folder: Path) -> Path:
    from aggregate_inputs import probe_metrics

    folder.mkdir(parents=True)
    (folder / "metrics.parquet").write_bytes(probe_metrics(folder.parent).read_bytes())
    (folder / "history.parquet").write_bytes(b"PAR1")
    return folder


def _write_run(final: Path) -> None:
    from spudflow.probe.seed_runs import is_probe_run

    with atomic_outputs() as out:
        folder = out.dir(final, "a probe run", is_probe_run)
        (folder / "new.txt").write_text("new\n", encoding="utf-8")


def test_a_folder_output_replaces_only_a_previous_one_of_its_kind(tmp_path):
    """`probe train`'s seed folders (likewise `probe features`, `control-train`): a previous
    run (recognised by its metrics), an empty folder or nothing is replaced; a user's folder, a
    file, or a folder of another kind is bad input and stays."""
    run = _probe_run(tmp_path / "old" / "seed1")
    _write_run(run)
    assert sorted(p.name for p in run.iterdir()) == ["new.txt"]
    (tmp_path / "empty").mkdir()
    _write_run(tmp_path / "empty")
    assert (tmp_path / "empty" / "new.txt").is_file()
    control = tmp_path / "control"
    control.mkdir()
    write_artifact(pl.DataFrame({"epoch": [1], "step": [1], "loss": [1.0],
                                 "generator_loss": [None], "discriminator_loss": [None]},
                                schema=CONTROL_LOSSES.polars_schema()),
                   control / "training_loss.parquet", CONTROL_LOSSES)
    (control / "control.json").write_text("{}\n", encoding="utf-8")
    user = tmp_path / "keep"
    user.mkdir()
    (user / "notes.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "file").write_text("mine\n", encoding="utf-8")
    messages = []
    for final in (user, control, tmp_path / "file"):
        before = tree(tmp_path)
        with pytest.raises(InputError) as raised:
            _write_run(final)
        messages.append(raised.value.format())
        assert tree(tmp_path) == before
    assert messages == [
        f"{user}: a folder that is not a probe run spudflow wrote: nothing written; remove it "
        "or choose another path",
        f"{control}: a folder that is not a probe run spudflow wrote: nothing written; remove "
        "it or choose another path",
        f"{tmp_path / 'file'}: is a file or link where spudflow writes a folder (a probe run): "
        "nothing written"]
    from spudflow.controls.save import is_control

    assert is_control(control) and not is_control(run)


@pytest.mark.parametrize("command", [
    ["items", "count-verbs", "corpus.txt", "--lexicon", "lex.tsv", "--out", "lex.tsv"],
    ["training-share", "ing", "--fraction", "0.5", "--out", "ing"],
    ["nonce", "ing", "--lang", "en", "--method", "spud", "--seed", "1", "--out", "ing"],
    ["nonce", "ing", "--lang", "en", "--method", "spud", "--seed", "1", "--out", "n",
     "--lexicon", "n/lex.tsv"],
    ["table-treebank-stats", "stats.parquet", "--out", "stats"],
    ["score-gather", "s1", "s2", "--out", "s1"],
    ["training-share", "ing", "--fraction", "0.5", "--out", "./keep/../ing"],
], ids=["count-verbs", "training-share", "nonce", "nonce-folder", "table-stem", "score-gather",
        "another-spelling"])
def test_an_output_that_is_or_holds_an_input_is_refused_before_any_work(run_cli, workdir,
                                                                         command):
    """One check for every command (cli.main): an output equal to an input, a stem whose
    STEM.parquet is an input, or a folder the command fills holding an input is bad input."""
    (workdir / "corpus.txt").write_text("扉を開けた。\n", encoding="utf-8")
    (workdir / "lex.tsv").write_text("transitive\tintransitive\n開ける\t開く\n", encoding="utf-8")
    assert run_cli("stats", "ing", "--treebank", "t", "--split", "s", "--lang", "de",
                   "--out", "stats.parquet")[0] == 0
    for name in ("s1", "s2", "n"):
        (workdir / name).mkdir()
        (workdir / name / "token_scores.parquet").write_bytes(b"PAR1 not read")
    (workdir / "n" / "lex.tsv").write_text("mine\n", encoding="utf-8")
    before = tree(workdir)
    code, _, err = run_cli(*command)
    assert code == EXIT_BAD_INPUT, err
    [line] = err.strip().splitlines()
    out = command[command.index("--out") + 1]
    assert line.startswith(f"{Path(out)}: "), line
    assert "spudflow never writes over its own input; nothing written" in line
    assert tree(workdir) == before


def test_temporaries_of_killed_writers_are_removed_by_the_next_writer(tmp_path):
    """A killed job (`fetch`, `probe features`: a file or a folder output) leaves its temporary
    beside the output; the next writer of that output removes those of a dead process on this
    host, and nothing else: a live process's, another host's, a name spudflow does not make.
    (Old temporary names carried no process id: nothing could tell a stale one.)"""
    import os
    import signal
    import subprocess
    import sys

    from spudflow.core.atomic import _host

    # processes that live until their stdin closes (no time limit a slow run could outlast)
    waiting = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    dead = subprocess.Popen(waiting, stdin=subprocess.PIPE)
    dead.send_signal(signal.SIGKILL)
    dead.wait()
    dead.stdin.close()
    alive = subprocess.Popen(waiting, stdin=subprocess.PIPE)
    try:
        final = tmp_path / "features"
        names = {
            "dead_folder": f".features.spudflow-{_host()}-{dead.pid}-a1b2c3d4.tmp",
            "dead_old": f".features.spudflow-{_host()}-{dead.pid}-zz_9y8x7.old",
            "live": f".features.spudflow-{_host()}-{alive.pid}-a1b2c3d4.tmp",
            "other_host": f".features.spudflow-elsewhere-{dead.pid}-a1b2c3d4.tmp",
            "other_output": f".features2.spudflow-{_host()}-{dead.pid}-a1b2c3d4.tmp",
            "not_ours": f".features.{dead.pid}.tmp",
        }
        for key, name in names.items():
            if key.startswith("dead"):
                (tmp_path / name).mkdir()
                (tmp_path / name / "part.safetensors").write_bytes(b"x")
            else:
                (tmp_path / name).write_bytes(b"x")
        with atomic_outputs() as out:
            folder = out.dir(final, "a probe feature folder", lambda _: False)
            (folder / "a.txt").write_text("new")
        left = {p.name for p in tmp_path.iterdir()}
        assert left == {"features"} | {names[k] for k in ("live", "other_host", "other_output",
                                                           "not_ours")}
        (tmp_path / names["dead_folder"]).write_bytes(b"x")  # a file output's leftover
        with atomic_outputs() as out:
            out.path(tmp_path / "features.txt").write_text("x")
        assert (tmp_path / names["dead_folder"]).exists()  # another output's: not touched
        leftover = tmp_path / f".features.txt.spudflow-{_host()}-{dead.pid}-q1w2e3r4.tmp"
        leftover.write_bytes(b"half")
        with atomic_outputs() as out:
            out.path(tmp_path / "features.txt").write_text("y")
        assert not leftover.exists() and (tmp_path / "features.txt").read_text() == "y"
        assert os.getpid() != dead.pid
    finally:
        alive.kill()
        alive.wait()
