"""`spudflow fetch` keeps only whole downloads: a body shorter than the server's Content-Length
(a connection cut at a sentence boundary, which would ingest cleanly with sentences missing) or
longer (which http.client would cut at the announced length), one larger than --max-bytes
(config fetch.max_bytes; `file:///dev/zero` streamed 47.8 GB in 60 s before), or one whose
SHA-256 is not the configured one exits 2 with one line and writes nothing. A fetch killed
mid-download leaves a temporary file that the next fetch of the same output removes."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from waiting import running, wait_until
from workflow_helpers import REPO, copy_checkout, job, plan

from spudflow.core.errors import EXIT_BAD_INPUT

MINI = Path(__file__).parent / "data" / "mini.conllu"
BODY = MINI.read_bytes()
# The body up to the end of its first sentence: what a cut connection delivers.
FIRST_SENTENCE = BODY[:BODY.index(b"\n\n") + 2]


class Treebank(BaseHTTPRequestHandler):
    """Serves BODY; under /cut/ it announces BODY's length but sends only its first sentence,
    under /long/ it announces the first sentence's length but sends BODY, then closes the
    connection; under /slow/ it sends BODY's first sentence, then stalls until the server stops
    (`stalled`: a download that stays half done for as long as the test needs)."""

    stalled = threading.Event()  # set by the server fixture when it stops

    def do_GET(self):  # noqa: N802 - http.server's name
        sent, announced = BODY, len(BODY)
        if self.path.startswith("/cut/"):
            sent = FIRST_SENTENCE
        elif self.path.startswith("/long/"):
            announced = len(FIRST_SENTENCE)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(announced))
        self.end_headers()
        if self.path.startswith("/slow/"):
            self.wfile.write(FIRST_SENTENCE)
            self.wfile.flush()
            self.stalled.wait()
        self.wfile.write(sent)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A local HTTP server on 127.0.0.1; yields its base URL."""
    Treebank.stalled.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Treebank)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        Treebank.stalled.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_a_download_cut_short_of_its_content_length_is_bad_input(run_cli, tmp_path, server):
    url = f"{server}/cut/en-test.conllu"
    out = tmp_path / "downloads" / "test.conllu"
    code, _, err = run_cli("fetch", url, "--out", out)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"{url}: download failed: {len(FIRST_SENTENCE)} bytes received, the server announced "
        f"{len(BODY)} (Content-Length): cut short, nothing written"]
    assert not out.parent.exists()  # no file, no temporary file, not the folder it made


def test_a_download_longer_than_its_content_length_is_bad_input(run_cli, tmp_path, server):
    """Old code wrote the announced first sentence and exited 0."""
    url = f"{server}/long/en-test.conllu"
    out = tmp_path / "downloads" / "test.conllu"
    code, _, err = run_cli("fetch", url, "--out", out)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"{url}: download failed: {len(BODY)} bytes received, the server announced "
        f"{len(FIRST_SENTENCE)} (Content-Length): longer than announced, nothing written"]
    assert not out.parent.exists()  # nothing, not even the folder it made


def test_a_download_announced_above_the_cap_is_refused_unread(run_cli, tmp_path, server):
    url = f"{server}/en-test.conllu"
    out = tmp_path / "downloads" / "test.conllu"
    code, _, err = run_cli("fetch", url, "--out", out, "--max-bytes", len(BODY) - 1)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"{url}: download refused: the server announces {len(BODY)} bytes, more than "
        f"fetch.max_bytes ({len(BODY) - 1}): nothing written"]
    assert not out.parent.exists()  # nothing, not even the folder it made
    code, _, err = run_cli("fetch", url, "--out", out, "--max-bytes", len(BODY))
    assert code == 0 and out.read_bytes() == BODY


def test_an_endless_source_stops_at_the_cap(run_cli, tmp_path):
    """`file:///dev/zero` announces 0 bytes and never ends: stopped at the cap, nothing kept."""
    out = tmp_path / "downloads" / "zero.conllu"
    code, _, err = run_cli("fetch", "file:///dev/zero", "--out", out, "--max-bytes", 5 << 20)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"file:///dev/zero: download stopped: more than fetch.max_bytes ({5 << 20}) bytes: "
        "nothing written"]
    assert not out.parent.exists()  # nothing, not even the folder it made


def test_the_default_cap_is_the_configs(run_cli, tmp_path):
    from spudflow.ingest.download import MAX_BYTES

    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text(encoding="utf-8"))
    assert schema["properties"]["fetch"]["properties"]["max_bytes"]["default"] == MAX_BYTES
    with pytest.raises(SystemExit) as refused:
        run_cli("fetch", "file:///dev/zero", "--out", tmp_path / "z", "--max-bytes", "0")
    assert refused.value.code == EXIT_BAD_INPUT and list(tmp_path.iterdir()) == []


def _spudflow_fetch(url: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "spudflow", "fetch", url, "--out", str(out)],
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(
                                REPO / "workflow")})


def _hidden(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("."))


def test_a_killed_fetch_leaves_a_temporary_file_the_next_fetch_removes(tmp_path, server):
    """Killed with SIGKILL mid-download, a fetch leaves `.NAME.spudflow-HOST-PID-….tmp`; the
    next fetch of the same output removes it (its process is gone), and leaves alone a live
    fetch's temporary file and names it did not make."""
    out = tmp_path / "downloads" / "test.conllu"
    killed = _spudflow_fetch(f"{server}/slow/en-test.conllu", out)
    wait_until(lambda: out.parent.is_dir() and _hidden(out.parent),
               "the fetch downloading into its temporary file", still=running(killed))
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    (leftover,) = _hidden(out.parent)
    assert ".spudflow-" in leftover.name and f"-{killed.pid}-" in leftover.name
    live = _spudflow_fetch(f"{server}/slow/en-test.conllu", out)  # a concurrent fetch, alive
    mine = out.parent / ".test.conllu.notes.tmp"  # a user's file of a similar name
    mine.write_text("keep")
    try:
        # (it may itself remove the killed fetch's file: also fine)
        wait_until(lambda: any(f"-{live.pid}-" in p.name for p in _hidden(out.parent)),
                   "the live fetch downloading into its temporary file", still=running(live))
        again = subprocess.run([sys.executable, "-m", "spudflow", "fetch",
                                f"{server}/en-test.conllu", "--out", str(out)],
                               env={**os.environ, "PYTHONPATH": str(REPO / "workflow")},
                               capture_output=True, text=True, timeout=60)
        assert again.returncode == 0, again.stderr
        assert out.read_bytes() == BODY
        remaining = _hidden(out.parent)
        assert leftover not in remaining and mine in remaining
        assert any(f"-{live.pid}-" in p.name for p in remaining)  # the live job's
    finally:
        live.kill()
        live.wait()


def test_a_whole_download_is_written(run_cli, tmp_path, server):
    out = tmp_path / "test.conllu"
    code, _, err = run_cli("fetch", f"{server}/en-test.conllu", "--out", out,
                           "--sha256", hashlib.sha256(BODY).hexdigest().upper())
    assert code == 0, err
    assert out.read_bytes() == BODY


def test_a_download_of_another_checksum_is_bad_input(run_cli, tmp_path):
    url = MINI.resolve().as_uri()
    wrong = hashlib.sha256(FIRST_SENTENCE).hexdigest()
    code, _, err = run_cli("fetch", url, "--out", tmp_path / "test.conllu", "--sha256", wrong)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"{url}: download failed: SHA-256 {hashlib.sha256(BODY).hexdigest()}, the config "
        f"expects {wrong}: nothing written"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_fetch_rule_passes_the_configured_checksum(tmp_path):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    url = "https://example.org/ud/en-test.conllu"
    first = next(iter(config["treebanks"]))
    config["treebanks"][first]["splits"]["test"] = url
    config["fetch"] = {"sha256": {url: "ab" * 32}}
    planned = plan(copy_checkout(tmp_path, config), forceall=True)
    fetch = job("fetch_treebank", treebank=first, download="test", ext="conllu")
    assert planned.shell[fetch].startswith(f"spudflow fetch {url} --out "
                                           f"resources/downloads/{first}/test.conllu "
                                           f"--sha256 {'ab' * 32} --max-bytes "
                                           f"1073741824 2> ")


def test_a_rehearsal_checks_its_stand_ins_against_their_own_checksums(tmp_path):
    """A rehearsal answers each URL with a stand-in treebank: its overlay gives the stand-in's
    checksum where the config gives the real file's (the merge of config files cannot drop it)."""
    from spudflow.rehearse.overlay import build_overlay

    url = "https://example.org/ud/en-test.conllu"
    (tmp_path / "ud").mkdir()
    (tmp_path / "ud" / "en-test.conllu").write_bytes(FIRST_SENTENCE)
    config = {"treebanks": {}, "fetch": {"sha256": {url: hashlib.sha256(BODY).hexdigest()}}}
    overlay = build_overlay(config, {"https://example.org/": str(tmp_path)}, "full")
    assert overlay["fetch"]["sha256"] == {url: hashlib.sha256(FIRST_SENTENCE).hexdigest()}
    assert "sha256" not in build_overlay({"treebanks": {}}, {"https://example.org/": "/m"},
                                         "full")["fetch"]


@pytest.mark.slow
def test_an_items_file_given_by_url_is_fetched_as_a_treebank(tmp_path):
    """The German case sentence files given by URL are downloaded by the one rule for items
    dataset files (fetch_pairs_file, as CoLA's phenomenon sets) under their file names: from
    the fetch.mirror copy where a prefix matches (the copy is the job's input), checked against
    fetch.sha256 where it gives the URL's checksum, asking more memory and time on a retry."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    mirrored, direct = "https://example.org/mirrored/", "https://example.org/direct/"
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "grammatical_sentences.txt").write_text("", encoding="utf-8")
    config["pairs"]["german_case"] = {"enabled": True, "sentences": {
        "grammatical": mirrored + "grammatical_sentences.txt",
        "ungrammatical": direct + "ungrammatical_sentences.txt"}}
    config["fetch"] = {"mirror": {mirrored: str(mirror)},
                       "sha256": {direct + "ungrammatical_sentences.txt": "ab" * 32}}
    workdir = copy_checkout(tmp_path / "work", config)
    planned = plan(workdir, forceall=True)
    downloads = "resources/downloads/pairs/german_case"
    grammatical = job("fetch_pairs_file", family="german_case", name="grammatical_sentences.txt")
    ungrammatical = job("fetch_pairs_file", family="german_case",
                        name="ungrammatical_sentences.txt")
    assert planned.shell[grammatical].startswith(
        f"spudflow fetch {(mirror / 'grammatical_sentences.txt').as_uri()} --out "
        f"{downloads}/grammatical_sentences.txt --max-bytes 1073741824 2> ")
    assert planned.inputs[grammatical] == {str(mirror / "grammatical_sentences.txt")}
    assert planned.shell[ungrammatical].startswith(
        f"spudflow fetch {direct}ungrammatical_sentences.txt --out "
        f"{downloads}/ungrammatical_sentences.txt --sha256 {'ab' * 32} --max-bytes "
        "1073741824 2> ")
    assert planned.inputs[job("items_german_case")] == {
        f"{downloads}/grammatical_sentences.txt", f"{downloads}/ungrammatical_sentences.txt"}
    again = plan(workdir, forceall=True, attempt=2)
    assert again.resources[ungrammatical]["mem_mb"] == 1.5 * planned.resources[ungrammatical][
        "mem_mb"]
