"""A job reruns exactly when its command would change: every config setting is a rerun trigger.

For each key of the tiny workflow's config (its config/config.yaml with the schema's defaults
filled in, config/schema.yaml), another valid value is set on a finished tiny run and the jobs
Snakemake plans are compared with the jobs that must run: those whose formatted shell command,
input files or settings (non-derived params) differ from the finished run's, those new in the
DAG, and everything downstream of them. A setting that reaches a command only through a params
function of `input` (Snakemake's "derived" params, no rerun trigger) would leave the old
outputs in place: the tables would keep the old setting's numbers ("Nothing to be done").

Only plans, no runs: one finished run (module scope), one DAG per key. The other values come
from the schema (another enum member, a boolean flipped, a number moved within its bounds, an
item dropped) or, for values the schema cannot suggest (paths, names, nulls), from OTHER_VALUES.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from snakemake_memos import memoize_workflow_reading
from workflow_helpers import (
    REPO,
    Plan,
    clone_run,
    default_config,
    finished_tiny_run,
    job,
    read_yaml,
    write_yaml,
)

from spudflow.core.config import fill_schema_defaults, load_schema

pytestmark = pytest.mark.slow

SCHEMA = REPO / "config" / "schema.yaml"


# Values the schema cannot suggest: key (dotted) -> the other value, or a function that edits
# the whole config (keys whose valid values depend on others).
OTHER_VALUES = {
    "treebanks.tiny_en.lang": "fr",
    "treebanks.tiny_de.lang": "fr",
    "treebanks.tiny_en.splits.test": "resources/tiny/tiny_en_copy.conllu",
    "treebanks.tiny_de.splits.test": "resources/tiny/tiny_de_copy.conllu",
    "nonce.pools": {"tiny_en": ["tiny_de/test"]},
    "nonce.splits": {"test": {"upos": ["NOUN", "VERB"]}},
    "nonce.lexicons": {"en": ["resources/tiny/en_lexicon.tsv"]},
    "nonce.ttr_tokenizer": "resources/tiny/tiny_bert",
    "nonce.ttr_all_splits": {"methods": ["spud"], "seeds": [1]},
    "human_eval.split": "tiny_de/test",
    "human_eval.annotators": lambda c: c["human_eval"].update(
        annotators=["annotator1"], filled={"annotator1": c["human_eval"]["filled"]["annotator1"]}),
    "human_eval.filled.annotator1": "resources/tiny/human_eval/annotator2.csv",
    "human_eval.filled.annotator2": "resources/tiny/human_eval/annotator1.csv",
    "pairs.spud.treebanks": ["tiny_en"],
    "pairs.spud.methods": ["spud"],
    "pairs.spud.seeds": [1],
    "pairs.german_case.templates": "resources/tiny/german_case_copy.tsv",
    "pairs.japanese_transitivity.lexicon": "resources/tiny/japanese_verb_pairs_copy.tsv",
    "pairs.japanese_transitivity.corpus": "resources/tiny/ja_corpus.txt",
    "pairs.japanese_transitivity.sample.rare.n": 3,
    "pairs.japanese_transitivity.sample.longer.n": 3,
    "pairs.japanese_transitivity.sample.relative.n": 3,
    "pairs.cola.files": ["unused2.tsv"],
    "pairs.cola.sample.n": 3,
    "pairs.cola.phenomena": ["unused_phenomenon.tsv"],
    "pairs.blimp.paths": ["workflow:resources/blimp/causative.jsonl"],
    "aggregate.japanese_graph_threshold": 0.5,
    "aggregate.uncertainty.level": 0.9,
    "aggregate.uncertainty.resamples": 0,
    "aggregate.japanese_agreement_modes": ["tiny_trigram/kn"],
    "ngrams.tiny_en.lang": "de",
    "ngrams.tiny_en.text": ["tiny_de/test"],
    "controls.tiny_bert.text": ["tiny_en/test"],
    "controls.tiny_bert.max_sentences": 5,
    "models.tiny_trigram.source": lambda c: (
        c["ngrams"].update(tiny_en2={**c["ngrams"]["tiny_en"]}),
        c["models"]["tiny_trigram"].update(source="results/ngram/tiny_en2.parquet")),
    "models.tiny_bert.source": "resources/tiny/tiny_bert",
    "models.tiny_trigram.device": "cpu",
    "models.tiny_bert.device": "cpu",
    "scoring.datasets": ["blimp"],
    "scoring.unigram": [],
    "scoring.cache": "results/cache/other_scores",
    "probe.models.tiny_bert.source": "resources/tiny/tiny_bert_copy",
    "probe.models.tiny_bert.label_layer": 1,  # the tiny encoder's last layer is 2
    "probe.models.tiny_bert.max_length": 64,
    "probe.models.tiny_bert.device": "auto",
    "probe.models.tiny_bert.tasks": ["tiny_en"],
    "probe.tasks.tiny_en.test": lambda c: c["probe"]["tasks"].update(
        tiny_en={"train": "test@train", "dev": None, "test": "test@heldout"},
        tiny_de={"train": "test", "dev": None, "test": "test"}),
    "probe.tasks.tiny_en.layers": {"tiny_bert": {"dist_layer": 2, "label_layer": 1}},
    "probe.sample.n": 5,
    "probe.max_train_sentences": 5,
    "probe.max_dev_sentences": 5,
    # the list form: a model of a task (the one task's one model: as `true`)
    "probe.layer_sweep": ["tiny_en/tiny_bert"],
    "fetch.mirror": {"https://example.org/": "resources/tiny"},
    "models.tiny_bert.device_map": "auto",
    "models.tiny_bert.max_memory": lambda c: c["models"]["tiny_bert"].update(
        device_map="auto", max_memory={"cpu": "1GB"}),
    "models.tiny_bert.offload_folder": lambda c: c["models"]["tiny_bert"].update(
        device_map="auto", offload_folder="offload"),
    "probe.models.tiny_bert.device_map": {"embeddings": "cpu", "encoder": "cpu"},
    "probe.models.tiny_bert.max_memory": lambda c: c["probe"]["models"]["tiny_bert"].update(
        device_map="balanced", max_memory={"cpu": "1GB"}),
    "probe.models.tiny_bert.offload_folder": lambda c: c["probe"]["models"]["tiny_bert"].update(
        device_map="auto", offload_folder="offload"),
    "fetch.sha256": {"https://example.org/x.conllu": "0" * 64},
}

# Keys whose value is not varied, and why.
KEPT = {
    "models.tiny_trigram.kind": "the source is an n-gram model: no other kind can score it",
    "models.tiny_bert.kind": "the control is a masked model: another kind would not load it",
    "controls.tiny_bert.kind": "models.tiny_bert scores the control as a masked model",
    "probe.tasks.tiny_en.test": "varied above with a second task",
    "models.tiny_trigram.allow_training_overlap": "the tiny models score their training text",
    "models.tiny_bert.allow_training_overlap": "the tiny models score their training text",
    "models.tiny_trigram.revision": "a local model has no revision",
    "models.tiny_bert.revision": "a local model has no revision",
    "probe.models.tiny_bert.revision": "a local model has no revision",
    "models.tiny_bert.measures": "lau is for n-gram models only",
    "probe.tasks.tiny_en.train": "tiny_en has one split: any other training set shares the "
                                 "test set's sentences",
    "probe.tasks.tiny_en.dev": "tiny_en has one split: any dev set shares the training or the "
                               "test set's sentences",
    **{f"models.tiny_trigram.{key}": "an n-gram model is not split across devices"
       for key in ("device_map", "max_memory", "offload_folder")},
}

# Keys that reach a command but change no number, so that a changed value reruns nothing (the
# rules pass them through a params function of `input`, Snakemake's derived params), and why.
NO_RERUN = {
    f"{section}.tiny_bert.{key}": "where a model's layers sit changes no score or feature "
                                  "(core/device_map.py; docs/scoring.md)"
    for section in ("models", "probe.models")
    for key in ("device_map", "max_memory", "offload_folder")
}


def _schema() -> dict:
    return load_schema(SCHEMA)


def _deref(node: dict) -> dict:
    ref = node.get("$ref")
    if not ref:
        return node
    found = _schema()
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    return _deref(found)


def _subschemas(node: dict, key) -> list[dict]:
    """The schemas of a child KEY of NODE (a property, an additional property or an array's
    items), through $ref and the branches of allOf/oneOf/anyOf/if-then."""
    node = _deref(node)
    found = []
    for branch in [node, *node.get("allOf", []), *node.get("oneOf", []),
                   *node.get("anyOf", [])]:
        branch = _deref(branch)
        for part in (branch, branch.get("then") or {}):
            if isinstance(key, int):
                if isinstance(part.get("items"), dict):
                    found.append(_deref(part["items"]))
            elif key in part.get("properties", {}):
                found.append(_deref(part["properties"][key]))
            elif isinstance(part.get("additionalProperties"), dict):
                found.append(_deref(part["additionalProperties"]))
    return found


def _schemas_at(path: tuple) -> list[dict]:
    nodes = [_schema()]
    for key in path:
        nodes = [child for node in nodes for child in _subschemas(node, key)]
    return nodes


def _enum(schemas: list[dict]) -> list:
    values = []
    for schema in schemas:
        for branch in [schema, *schema.get("oneOf", []), *schema.get("anyOf", [])]:
            values += _deref(branch).get("enum", [])
            if "const" in branch:
                values.append(branch["const"])
    return values


def _candidates(path: tuple, value) -> list:
    """Other values for the key at PATH, from its schema: the first that the schema accepts is
    taken."""
    schemas = _schemas_at(path)
    if isinstance(value, bool):
        return [not value]
    others = [v for v in _enum(schemas) if v != value and not isinstance(v, list)]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [round(value / 2, 6), round(value * 2, 6), round(value + 0.1, 6)]
    if isinstance(value, str):
        return others
    if isinstance(value, list) and value:
        items = _enum([s for node in schemas for s in _subschemas(node, 0)])
        extra = [v for v in items if v not in value]
        found = [value[:-1]] if len(value) > 1 else []
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            found.append([*value, max(value) + 1])
        return found + [[*value, extra[0]]] if extra else found
    return []


def _leaves(config, path=()):
    """(path, value) of every leaf of the config: a scalar, a list or an empty mapping."""
    if isinstance(config, dict) and config:
        for key, value in config.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, config


def _get(config, path):
    for key in path:
        config = config[key]
    return config


def _set(config, path, value):
    _get(config, path[:-1])[path[-1]] = value


def _valid(config) -> bool:
    from jsonschema import Draft202012Validator

    return not list(Draft202012Validator(_schema()).iter_errors(config))


def _filled_config(workdir: Path) -> dict:
    """The copy's config with the schema's defaults filled in (what the rules read)."""
    config = read_yaml(workdir / "config" / "config.yaml")
    fill_schema_defaults(config, SCHEMA)
    return config


def _other_config(config: dict, path: tuple) -> dict | None:
    """A copy of CONFIG with another valid value at PATH; None when none is known."""
    key = ".".join(map(str, path))
    changed = copy.deepcopy(config)
    other = OTHER_VALUES.get(key)
    if callable(other):
        other(changed)
        return changed
    candidates = [other] if key in OTHER_VALUES else _candidates(path, _get(config, path))
    for candidate in candidates:
        _set(changed, path, candidate)
        if _valid(changed):
            return changed
    return None


def _write_config(workdir: Path, config: dict) -> None:
    write_yaml(workdir / "config" / "config.yaml", config, sort_keys=False)


def plan_with_needrun(workdir: Path, cores: int = 1) -> tuple[Plan, set]:
    """One DAG of the workflow at WORKDIR: every job in it (a Plan) and the jobs Snakemake
    would run now (the rest are up to date)."""
    memoize_workflow_reading()
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        DAGSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
    )

    def key(j):
        return job(j.rule.name, **dict(j.wildcards_dict))

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(resource_settings=ResourceSettings(cores=cores),
                                    snakefile=workdir / "Snakefile", workdir=workdir)
        dag_api = workflow_api.dag(DAGSettings())
        dag_api.execute_workflow(executor="dryrun")
        dag = workflow_api._workflow.dag
        jobs = list(dag.jobs)
        keys = {key(j) for j in jobs}
        full = Plan(
            jobs=frozenset(keys),
            inputs={key(j): frozenset(map(str, j.input)) for j in jobs},
            outputs={key(j): frozenset((str(f), False) for f in j.output) for j in jobs},
            dependencies={key(j): frozenset(key(d) for d in dag.dependencies[j]) & keys
                          for j in jobs},
            shell={key(j): j.shellcmd for j in jobs},
            # the settings: params Snakemake compares with the last run's
            params={key(j): {"settings": sorted(map(repr, j.non_derived_params))}
                    for j in jobs},
            resources={},
        )
        return full, {key(j) for j in dag.needrun_jobs(exclude_finished=False)}


def _must_run(before: Plan, after: Plan) -> set:
    """The jobs of AFTER that are new or whose command, input files or settings changed, and
    everything downstream of them."""
    changed = {j for j in after.jobs if j not in before.jobs
               or after.shell[j] != before.shell[j]
               or after.inputs[j] != before.inputs[j]
               or after.params[j] != before.params[j]}
    return after.downstream(changed)


def _add_user_files(workdir: Path) -> None:
    """Files the OTHER_VALUES name: copies of the tiny data under other names."""
    tiny = workdir / "resources" / "tiny"
    for name in ("tiny_en", "tiny_de"):
        (tiny / f"{name}_copy.conllu").write_bytes((tiny / f"{name}.conllu").read_bytes())
    config = workdir / "config"
    (tiny / "german_case_copy.tsv").write_bytes(
        (config / "templates" / "german_case.tsv").read_bytes())
    (tiny / "japanese_verb_pairs_copy.tsv").write_bytes(
        (config / "lexicons" / "japanese_verb_pairs.tsv").read_bytes())
    (tiny / "ja_corpus.txt").write_text("彼は窓を開けた。\n", encoding="utf-8")
    (tiny / "en_lexicon.tsv").write_text("dogs\tdog\tNOUN\tNumber=Plur\n", encoding="utf-8")
    for name in ("unused.tsv", "unused2.tsv"):  # pairs.cola.files (cola is off)
        (workdir / name).write_text("", encoding="utf-8")
    import shutil

    shutil.copytree(tiny / "tiny_bert", tiny / "tiny_bert_copy")


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished tiny run whose config states every default (planning it plans nothing), its
    config and its whole DAG."""
    source = finished_tiny_run(tmp_path_factory.mktemp("triggers") / "finished")
    workdir = clone_run(source, tmp_path_factory.mktemp("triggers") / "copy")
    _add_user_files(workdir)
    config = _filled_config(workdir)
    _write_config(workdir, config)
    full, needrun = plan_with_needrun(workdir)
    assert needrun == set(), "the finished run with its defaults written out plans jobs"
    return workdir, config, full


def _config_keys() -> list[str]:
    """Every key of the tiny workflow's config, defaults filled in (parsed without a run)."""
    from workflow_helpers import TINY_DATA

    config = default_config()
    config.update(read_yaml(TINY_DATA / "config.yaml"))
    fill_schema_defaults(config, SCHEMA)
    return [".".join(map(str, path)) for path, _ in _leaves(config)]


CONFIG_KEYS = _config_keys()


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_a_changed_setting_reruns_exactly_the_jobs_whose_command_changes(finished, key):
    workdir, config, before = finished
    if key in KEPT:
        pytest.skip(KEPT[key])
    path = next(p for p, _ in _leaves(config) if ".".join(map(str, p)) == key)
    changed = _other_config(config, path)
    assert changed is not None, (
        f"no other valid value for config key {key}: add one to OTHER_VALUES (or KEPT)")
    _write_config(workdir, changed)
    try:
        after, needrun = plan_with_needrun(workdir)
    finally:
        _write_config(workdir, config)
    if key in NO_RERUN:
        changed_commands = {j for j in after.jobs if after.shell[j] != before.shell.get(j)}
        assert changed_commands, f"config key {key} reaches no command"
        assert needrun == set(), f"config key {key} ({NO_RERUN[key]}) reruns {sorted(needrun)}"
        return
    expected = _must_run(before, after)
    assert needrun == expected, (
        f"config key {key}: planned but unchanged: {sorted(needrun - expected)}; "
        f"changed but not planned: {sorted(expected - needrun)}")


def test_the_number_of_cores_reruns_nothing(finished):
    """Threads (scaled down to --cores) reach some commands (--threads, table-japanese's
    --jobs) but change no output: more cores plan nothing."""
    workdir, _, before = finished
    after, needrun = plan_with_needrun(workdir, cores=8)
    table = job("table_japanese_transitivity")
    assert "--jobs 4" in after.shell[table] and "--jobs 1" in before.shell[table]
    assert needrun == set()
