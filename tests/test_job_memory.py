"""The memory a job asks for (its `mem_mb`, what SLURM enforces) grows with the split it holds:
ingest, nonce and the SPUD items (bench/bench_scale.py measured their peak RSS at 1x-16x EWT
train), and the scoring jobs with the items they score (a full rehearsal of the Japanese preset).
Planned through Snakemake on a copy of the tiny workflow, after a first run of ingest."""

from __future__ import annotations

from workflow_helpers import copy_workflow, plan, run_workflow

TOKENS = "results/ingest/tiny_en/test/tokens.parquet"
BLIMP = "results/items/blimp.parquet"


def mem_of(planned, rule: str, **wildcards: str) -> int:
    """The mem_mb of the rule's jobs of these wildcards (every nonce seed asks the same)."""
    (mem,) = {planned.resources[j]["mem_mb"] for j in planned.jobs
              if j[0] == rule and set(wildcards.items()) <= set(j[1])}
    return mem


def test_a_job_asks_for_memory_by_the_size_of_its_split(tmp_path):
    workdir = copy_workflow(tmp_path / "workflow")
    small = plan(workdir, forceall=True)
    assert mem_of(small, "ingest", treebank="tiny_en") == 2000
    # not there yet when planned: the floor (Snakemake evaluates it again before the job runs)
    assert mem_of(small, "nonce", treebank="tiny_en") == 3000
    assert mem_of(small, "items_spud", dataset="spud_tiny_en_test") == 2000

    run_workflow(workdir, targets=[TOKENS])
    conllu = workdir / "resources" / "tiny" / "tiny_en.conllu"
    with conllu.open("r+b") as f:  # 300 MB, sparse: its size is what counts
        f.truncate(300_000_000)
    with (workdir / TOKENS).open("r+b") as f:
        f.truncate(40_000_000)
    big = plan(workdir, forceall=True)
    assert mem_of(big, "ingest", treebank="tiny_en") == 500 + 10 * 300
    assert mem_of(big, "ingest", treebank="tiny_de") == 2000
    assert mem_of(big, "nonce", treebank="tiny_en") == 500 + 130 * 40
    assert mem_of(big, "items_spud", dataset="spud_tiny_en_test") >= 500 + 70 * 40


def test_a_scoring_job_asks_for_memory_by_its_items_and_methods(tmp_path):
    """tiny_bert (masked, 2 methods, one job) and tiny_trigram (n-gram, 2 methods, 2 shards
    and a gather) on BLiMP's items: the model's floor, plus 350 MB per MB of items and method
    (a shard its share)."""
    workdir = copy_workflow(tmp_path / "workflow")
    small = plan(workdir, forceall=True)
    assert mem_of(small, "score", dataset="blimp", model="tiny_bert") == 8000
    assert mem_of(small, "score_shard", dataset="blimp", model="tiny_trigram") == 4000

    run_workflow(workdir, targets=[BLIMP])
    with (workdir / BLIMP).open("r+b") as f:  # 4 MB, sparse: its size is what counts
        f.truncate(4_000_000)
    big = plan(workdir, forceall=True)
    assert mem_of(big, "score", dataset="blimp", model="tiny_bert") == 8000 + 350 * 2 * 4
    assert mem_of(big, "score_shard", dataset="blimp", model="tiny_trigram") == \
        4000 + 350 * 2 * 4 // 2
    assert mem_of(big, "score_gather", dataset="blimp", model="tiny_trigram") == \
        4000 + 350 * 2 * 4
    assert mem_of(big, "score", dataset="spud_tiny_en_test", model="tiny_bert") == 8000
