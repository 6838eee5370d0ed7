"""A scoring job's keys keep their bytes from release to release: the finished blocks of an
interrupted job (resume key) and the tables of its `--shard` jobs (content key) stay usable as
long as nothing that made them changed. The keys below were computed by the code that took the
command's argparse namespace, before the keys were made from a ScoreJob; those of a transformer
model changed once more when `--dtype auto` started entering them as the dtype it loads and the
resume key the device class (cpu | cuda), so that blocks scored in bfloat16 on a GPU are never
resumed in float32 on a CPU; those of a job scoring pppl_l2r when its words (`--l2r-words`)
entered them, so that its blocks and shard tables made with the items' words are never taken
for the tokenizer's."""

from __future__ import annotations

import os

import pytest
import torch

from spudflow.cli import build_parser
from spudflow.scoring import run_key
from spudflow.scoring.cli import score_job

MODIFIED_NS = 1_700_000_000_000_000_000  # the model files' time, part of the resume key

CASES = {
    "defaults": (["--model", "org/hub-model", "--kind", "causal", "--method", "ppl",
                  "--name", "gpt2"], "01bc57e27c6bd638", "49c41dcf1cd03a99"),
    "every keyed option": (
        ["--model", "model", "--gguf-file", "m.gguf", "--revision", "v1.0", "--kind", "masked",
         "--method", "pppl,pppl_l2r_region", "--name", "bert", "--dtype", "float32",
         "--lang", "de", "--languages", "de,en", "--sample", "50", "--sample-seed", "7",
         "--block-size", "100", "--unigram", "uni_en.parquet", "--unigram", "uni_de.parquet",
         "--shard", "2/3"],
        "cc757910dfe25a42", "640acf6849194e04"),
    "a model file named by its file, lau measures": (
        ["--model", "uni_en.parquet", "--kind", "ngram", "--method", "kn,addk_region",
         "--measures", "lau"], "3d9054d27738e4a1", "65e9b3b86d17fe43"),
}


@pytest.fixture
def files(tmp_path, monkeypatch):
    """Input, unigram and model files of fixed contents and times, named relative to the working
    folder (a model's path as given is in the keys); the package version and the scoring code
    hash held at the values the keys were pinned with (both are in the keys on purpose: another
    release or an edit of the scoring code reuses nothing)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the keys of a CPU job
    monkeypatch.setattr(run_key, "__version__", "0.1.0")
    monkeypatch.setattr(run_key, "scoring_code_version", lambda: "code-hash")
    (tmp_path / "model" / "sub").mkdir(parents=True)
    for name, data in (("items.txt", b"the dog sat\nthe dogs sits\n"),
                       ("uni_en.parquet", b"unigram en"), ("uni_de.parquet", b"unigram de"),
                       ("model/config.json", b"{}"), ("model/sub/weights.bin", b"\0" * 10)):
        (tmp_path / name).write_bytes(data)
        os.utime(tmp_path / name, ns=(MODIFIED_NS, MODIFIED_NS))
    return tmp_path


def parse(options: list[str]):
    return build_parser().parse_args(["score", "items.txt", "--out", "out", *options])


@pytest.mark.parametrize("case", CASES)
def test_the_keys_of_a_job_keep_their_bytes(files, case):
    options, content_key, resume_key = CASES[case]
    job = score_job(parse(options))
    assert (run_key.job_content_key(job), run_key.resume_key(job)) == (content_key, resume_key)


def test_the_resume_key_follows_the_shard_and_the_model_files_the_content_key_does_not(files):
    whole = score_job(parse(["--model", "model", "--kind", "masked", "--method", "pppl"]))
    shard = score_job(parse(["--model", "model", "--kind", "masked", "--method", "pppl",
                             "--shard", "1/2"]))
    content = run_key.job_content_key(whole)
    resume = {run_key.resume_key(whole), run_key.resume_key(shard)}
    assert run_key.job_content_key(shard) == content
    assert len(resume) == 2
    os.utime(files / "model" / "config.json", ns=(MODIFIED_NS + 1, MODIFIED_NS + 1))
    assert run_key.job_content_key(whole) == content
    assert run_key.resume_key(whole) not in resume


def test_auto_enters_the_keys_as_the_dtype_and_device_it_loads(files, monkeypatch):
    options = ["--model", "model", "--kind", "masked", "--method", "pppl"]
    on_cpu = score_job(parse(options))
    pinned_cpu = score_job(parse([*options, "--dtype", "float32", "--device", "cpu"]))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    on_gpu = score_job(parse(options))
    pinned_gpu = score_job(parse([*options, "--dtype", "float32"]))
    assert (on_cpu.dtype, on_cpu.device_class) == ("float32", "cpu")
    assert (on_gpu.dtype, on_gpu.device_class) == ("bfloat16", "cuda")
    # bfloat16 blocks are neither resumed nor gathered as float32 ones
    assert run_key.job_content_key(on_gpu) != run_key.job_content_key(on_cpu)
    assert run_key.resume_key(on_gpu) != run_key.resume_key(on_cpu)
    # float32 on either device: the same shard tables, but blocks resume on their own device
    assert run_key.job_content_key(pinned_gpu) == run_key.job_content_key(pinned_cpu) \
        == run_key.job_content_key(on_cpu)
    assert run_key.resume_key(pinned_gpu) != run_key.resume_key(pinned_cpu)


def test_pppl_l2r_words_enter_the_keys_of_jobs_that_score_pppl_l2r(files):
    """Blocks and shard tables made with the tokenizer's words are never taken for the items'
    words; a job without pppl_l2r keeps its keys whatever the setting."""
    def keys(method, *extra):
        job = score_job(parse(["--model", "model", "--kind", "masked", "--method", method,
                               *extra]))
        return run_key.job_content_key(job), run_key.resume_key(job)

    for method in ("pppl_l2r", "pppl,pppl_l2r_region"):
        default = keys(method)
        assert keys(method, "--l2r-words", "tokenizer") == default
        by_items = keys(method, "--l2r-words", "items")
        assert by_items[0] != default[0] and by_items[1] != default[1]
    assert keys("pppl,unmasked", "--l2r-words", "items") == keys("pppl,unmasked")
