"""`spudflow fetch` keeps only whole downloads: a body shorter than the server's Content-Length
(a connection cut at a sentence boundary, which would ingest cleanly with sentences missing) or
one whose SHA-256 is not the configured one exits 2 with one line and writes nothing."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml
from workflow_helpers import REPO, copy_checkout, job, plan

from spudflow.core.errors import EXIT_BAD_INPUT

MINI = Path(__file__).parent / "data" / "mini.conllu"
BODY = MINI.read_bytes()
# The body up to the end of its first sentence: what a cut connection delivers.
FIRST_SENTENCE = BODY[:BODY.index(b"\n\n") + 2]


class Treebank(BaseHTTPRequestHandler):
    """Serves BODY; under /cut/ it announces BODY's length but sends only its first sentence,
    then closes the connection."""

    def do_GET(self):  # noqa: N802 - http.server's name
        sent = FIRST_SENTENCE if self.path.startswith("/cut/") else BODY
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(sent)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A local HTTP server on 127.0.0.1; yields its base URL."""
    httpd = HTTPServer(("127.0.0.1", 0), Treebank)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
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
                                           f"--sha256 {'ab' * 32} 2> ")


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
        f"{downloads}/grammatical_sentences.txt 2> ")
    assert planned.inputs[grammatical] == {str(mirror / "grammatical_sentences.txt")}
    assert planned.shell[ungrammatical].startswith(
        f"spudflow fetch {direct}ungrammatical_sentences.txt --out "
        f"{downloads}/ungrammatical_sentences.txt --sha256 {'ab' * 32} 2> ")
    assert planned.inputs[job("items_german_case")] == {
        f"{downloads}/grammatical_sentences.txt", f"{downloads}/ungrammatical_sentences.txt"}
    again = plan(workdir, forceall=True, attempt=2)
    assert again.resources[ungrammatical]["mem_mb"] == 1.5 * planned.resources[ungrammatical][
        "mem_mb"]
