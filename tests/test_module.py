"""spudflow deployed the Snakemake way: a module of a researcher's own Snakefile in an empty
directory (docs/running.md, "Use spudflow in your own workflow"). The workflow's own files
(sources, schema, vendored data, envs, report captions) come from the repository; the run's files
(results/, downloads, logs, the score cache) land in the researcher's directory only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
import yaml
from workflow_helpers import (
    REPO,
    TINY_DATA,
    TINY_RESAMPLES,
    WORKFLOW_FILES,
    finished_tiny_run,
    plan,
)

MODULE_SNAKEFILE = """\
{configfile}module spudflow:
    snakefile: "{snakefile}"
{config}use rule * from spudflow{prefix}
"""


def module_project(directory: Path, *, user_config: bool, prefix: str = "") -> Path:
    """An empty project whose Snakefile uses the repository's workflow as a module, as
    `snakedeploy deploy-workflow` writes it (with a local path). user_config: the project's own
    config/config.yaml, passed with `config: config`; else the workflow's embedded default."""
    directory.mkdir(parents=True)
    (directory / "Snakefile").write_text(MODULE_SNAKEFILE.format(
        configfile='configfile: "config/config.yaml"\n\n' if user_config else "",
        snakefile=REPO / "Snakefile",
        config="    config: config\n\n" if user_config else "\n",
        prefix=f" as {prefix}*" if prefix else "",
    ), encoding="utf-8")
    return directory


def repository_copy(directory: Path) -> Path:
    """The repository's workflow as a clone holds it, vendored data linked: `snakemake` there is
    a run in the repository (never the checkout's own results/ or .snakemake/)."""
    directory.mkdir(parents=True)
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, directory / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, directory / name)
    (directory / "resources").mkdir()
    for entry in sorted((REPO / "resources").iterdir()):
        if entry.name != "downloads":
            (directory / "resources" / entry.name).symlink_to(entry)
    return directory


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` (not .git or Python's caches) -> (size, mtime): what a run that
    leaves the tree untouched keeps the same."""
    state = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs
                   if d not in (".git", "__pycache__", ".pytest_cache", ".ruff_cache")]
        for name in names:
            stat = (Path(folder) / name).lstat()
            state[str(Path(folder, name).relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return state


@pytest.mark.slow
def test_the_module_with_the_embedded_default_plans_the_repository_jobs(tmp_path):
    in_repo = plan(repository_copy(tmp_path / "clone"), forceall=True)
    project = module_project(tmp_path / "project", user_config=False)
    as_module = plan(project, forceall=True)
    assert as_module.jobs == in_repo.jobs
    assert Counter(rule for rule, _ in in_repo.jobs)["ingest"] == 8
    # the vendored treebanks are the repository's; the results are the project's
    ingest = ("ingest", (("split", "test"), ("treebank", "en_pud")))
    vendored = "resources/ud/UD_English-PUD/en_pud-ud-test.conllu.gz"
    assert in_repo.inputs[ingest] == {vendored}
    assert as_module.inputs[ingest] == {str(REPO / vendored)}
    ngram = ("ngram_train", (("ngram", "de_pud_share"),))
    assert as_module.inputs[ngram] == in_repo.inputs[ngram] == {
        "results/shares/de_pud/test/train/tokens.parquet"}
    # the same code fingerprints, taken from the installed package
    assert as_module.params[ingest]["code"] == in_repo.params[ingest]["code"]
    assert sorted(p.name for p in project.iterdir()) == [".snakemake", "Snakefile"]


@pytest.mark.slow
def test_the_module_under_a_prefix_plans_the_same_jobs_renamed(tmp_path):
    plain = plan(module_project(tmp_path / "plain", user_config=False), forceall=True)
    prefixed = plan(module_project(tmp_path / "prefixed", user_config=False,
                                   prefix="spudflow_"), forceall=True)
    assert prefixed.jobs == {(f"spudflow_{rule}", wildcards) for rule, wildcards in plain.jobs}


# A slice of the tiny DAG that reads a vendored file through each kind of workflow: path (German
# templates, Japanese lexicon, BLiMP paradigms) and crosses ingest -> items -> n-gram training ->
# scoring -> aggregate; the whole DAG is planned as a module and compared with the repository's.
MODULE_TARGETS = ("results/tables/treebank_stats.parquet", "results/tables/blimp_overall.parquet",
                  "results/items/german_case.parquet",
                  "results/items/japanese_transitivity_base.parquet")


@pytest.mark.slow
def test_the_tiny_config_runs_as_a_module_in_an_empty_directory(tmp_path):
    """The project's own config (the tiny one) names its own data relative to the project and
    the vendored templates, lexicon and BLiMP files as workflow:... paths. As a module it plans
    the repository's tiny jobs, and the files it makes are byte for byte the repository run's."""
    from probe_support import save_tiny_encoder

    project = module_project(tmp_path / "project", user_config=True)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    config.update(yaml.safe_load((TINY_DATA / "config.yaml").read_text(encoding="utf-8")))
    config["aggregate"]["uncertainty"]["resamples"] = TINY_RESAMPLES  # as copy_workflow's
    (project / "config").mkdir()
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    tiny = project / "resources" / "tiny"
    tiny.mkdir(parents=True)
    for treebank in sorted(TINY_DATA.glob("*.conllu")):
        shutil.copy2(treebank, tiny / treebank.name)
    shutil.copytree(TINY_DATA / "human_eval", tiny / "human_eval")
    save_tiny_encoder(tiny / "tiny_bert")
    repository_before = tree_state(REPO)
    project_before = set(tree_state(project))
    in_repo = finished_tiny_run(tmp_path / "repository")
    assert plan(project, forceall=True).jobs == plan(in_repo, forceall=True).jobs

    # the jobs' `spudflow` with the heavy libraries imported once (tests/preloaded_jobs.py), as
    # in run_workflow(): what is checked here is where the module's jobs read and write
    from preloaded_jobs import client_dir

    path = [str(d) for d in (client_dir(), Path(sys.executable).parent) if d is not None]
    env = {**os.environ, "PATH": os.pathsep.join([*path, os.environ["PATH"]])}
    # one thread a job, as run_workflow(): two tiny jobs at a time instead of one
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--max-threads",
                             "1", *MODULE_TARGETS], cwd=project,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    assert tree_state(REPO) == repository_before
    made = set(tree_state(project)) - project_before
    assert {Path(p).parts[0] for p in made} == {"results", ".snakemake"}
    results = sorted(p for p in made if Path(p).parts[0] == "results"
                     and Path(p).parts[1] not in ("logs", "benchmarks", "cache"))
    assert set(MODULE_TARGETS) <= set(results)
    for name in results:
        assert (project / name).read_bytes() == (in_repo / name).read_bytes(), name
    stats = pl.read_parquet(project / "results" / "tables" / "treebank_stats.parquet")
    assert sorted(stats["treebank"]) == ["tiny_de", "tiny_en"]
    assert pl.read_parquet(project / "results" / "items" / "blimp.parquet").height > 0
    again = subprocess.run([sys.executable, "-m", "snakemake", "-n", *MODULE_TARGETS],
                           cwd=project, env=env, capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_workflow_paths_resolve_against_the_workflow_and_others_against_the_working_dir(tmp_path):
    from spudflow.core.workflow_paths import local_workflow_file, resolve_workflow_paths

    config = {"pairs": {"blimp": {"paths": ["workflow:resources/blimp", "mine/extra.jsonl"]}},
              "models": {"m": {"source": "results/ngram/x.parquet"}}}
    resolve_workflow_paths(config, local_workflow_file(REPO, tmp_path))
    assert config == {"pairs": {"blimp": {"paths": [str(REPO / "resources/blimp"),
                                                    "mine/extra.jsonl"]}},
                      "models": {"m": {"source": "results/ngram/x.parquet"}}}
    # run in the workflow's own directory: the paths (and so the jobs' inputs) stay relative
    in_repo = {"templates": "workflow:config/templates/german_case.tsv"}
    resolve_workflow_paths(in_repo, local_workflow_file(REPO, REPO))
    assert in_repo == {"templates": "config/templates/german_case.tsv"}


def test_the_code_fingerprint_is_of_the_workflows_sources_else_the_installed_package(tmp_path):
    from spudflow.core.workflow_paths import code_dir, package_dir

    assert code_dir(REPO) == REPO / "workflow" / "spudflow"
    assert code_dir(None) == code_dir(tmp_path) == package_dir()
    assert (package_dir() / "cli.py").is_file()


@pytest.mark.slow
def test_a_workflow_path_outside_the_workflow_stops_planning(tmp_path):
    project = tmp_path / "project"
    (project / "config").mkdir(parents=True)
    config = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())
    config["pairs"]["blimp"]["paths"][1] = "workflow:../outside.jsonl"
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--snakefile",
                             str(REPO / "Snakefile")], cwd=project, capture_output=True, text=True)
    assert result.returncode != 0
    assert ("config key pairs.blimp.paths[1]: 'workflow:../outside.jsonl' must name a file inside "
            "the workflow") in result.stdout + result.stderr
    assert not (project / "results").exists()


@pytest.mark.slow
def test_the_catalog_test_config_dry_runs_from_its_directory(tmp_path):
    """`snakemake -n --directory .test` (the catalog's check), on a copy of .test: the working
    directory's config/config.yaml is taken, its workflow: paths come from the repository."""
    shutil.copytree(REPO / ".test", tmp_path / "test")
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--quiet",
                             "rules", "--snakefile", str(REPO / "Snakefile"), "--directory",
                             str(tmp_path / "test")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout + result.stderr, re.MULTILINE))
    assert counts["ingest"] == "2" and counts["items_blimp"] == "1"
    assert counts["score"] != "0" and counts["front_page"] == "1"
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    assert catalog["usage"]["software-stack-deployment"]["conda"] is True


def test_config_readme_is_the_schema_rendered():
    from spudflow.core.config_readme import render, schema_keys

    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text(encoding="utf-8"))
    readme = (REPO / "config" / "README.md").read_text(encoding="utf-8")
    assert readme == render(schema), (
        "config/README.md is stale: python -m spudflow.core.config_readme config/schema.yaml "
        "> config/README.md")
    keys = [key for key, _ in schema_keys(schema)]
    assert {"treebanks.<name>.splits", "pairs.blimp.paths", "probe.tasks.<name>.train",
            "scoring.cache"} <= set(keys)
    assert all(f"| `{key}` |" in readme for key in keys)
