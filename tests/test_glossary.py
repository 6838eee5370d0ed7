"""docs/glossary.md: each retired synonym stays retired. Every entry greps the checkout's own
code, rules, docs, captions and config (source files, never results/) for a precise pattern of
the synonym; words with other, legitimate meanings get a pattern narrow enough to leave those."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("workflow", "rules", "Snakefile", "docs", "report", "config", "README.md")
SUFFIXES = {".py", ".smk", ".md", ".rst", ".yaml", ".yml", ".json", ".tsv", ""}

GLOSSARY = "docs/glossary.md"  # it names the retired synonyms
AGGREGATE = ("workflow/spudflow/aggregate/", "workflow/spudflow/core/table_artifacts.py",
             "report/", "docs/aggregate.md")

CODE = ("workflow/spudflow/", "rules/", "Snakefile")
# Where `kind` is a model's architecture (config `models.NAME.kind`, `controls.NAME.kind`,
# `spudflow score --kind`, `spudflow control-train --kind`, the score cache's key).
MODEL_KIND_CODE = ("workflow/spudflow/scoring/", "workflow/spudflow/controls/",
                   "workflow/spudflow/rehearse/cli.py", "workflow/spudflow/rehearse/overlay.py",
                   "workflow/spudflow/rehearse/families.py",
                   # a checkpoint loaded as an architecture it has no model for (--kind)
                   "workflow/spudflow/core/model_source.py",
                   # the scoring methods of each kind
                   "workflow/spudflow/core/scoring_methods.py")

# (synonym, pattern, where: path prefixes, None for everywhere scanned, skipped prefixes)
RETIRED = [
    ("scorer for a scoring function", r"(?i)scorer", AGGREGATE, ()),
    ("variant for a probe baseline",
     r"(?i)variants?\W[^\n]{0,40}\b(?:M0|MRC)\b|\b(?:M0|MRC)\b[^\n]{0,40}\bvariants?\b", None, ()),
    ("variant in the probe stage", r"\bvariants?\b",
     ("rules/probe.smk", "workflow/spudflow/core/plan_probe.py", "workflow/spudflow/probe/",
      "docs/probe.md"),
     ()),
    ("none for the lm baseline",
     r"`none` \(the (?:LM|model)|NO_BASELINE|baseline[^\n]{0,30}[\"`]none[\"`]"
     r"|[\"`]none[\"`][^\n]{0,30}\bM0\b", None, ()),
    ("null for the lm baseline", r"(?i)null \(the (?:LM|model)|baseline[^\n]{0,40}\bor \"\"",
     None, ()),
    ("probe_set for the eval set", r"\bprobe_sets?\b", None, ()),
    ("eval for the eval set column", r"col\(\"eval\"|alias\(\"eval\"\)|\| eval \|", None, ()),
    # The human-evaluation sheets and their answer key keep `original` (glossary: kept on purpose).
    ("original for orig", r"(?<!col\()[\"`]original[\"`]|:original\b", None,
     ("workflow/spudflow/nonce/human_eval/", "workflow/spudflow/core/schemas.snapshot.json")),
    ("a figure's other names",
     r"german[_-]roc|figure[_-]german[_-](?:order|templates)\b|\bgerman_(?:order|templates)\b"
     r"|figure[_-]spud[_-]ratios", None, ()),
    ("kind for a dataset family",
     r"(?i)dataset[_ ]kinds?\b|DatasetKind|ITEMS_KINDS|items_kind\b|items\.KIND\b"
     r"|\bkinds? of (?:items )?datasets?\b|datasets? of (?:one|a|this|another) kind\b"
     r"|\bkind's condition", None, ()),
    ("kind for a token type",
     r"\bkinds?\b[^\n]{0,25}[\"`](?:word|mwt|empty)[\"`]"
     r"|[\"`](?:word|mwt|empty)[\"`][^\n]{0,25}\bkinds?\b", None, ()),
    ("kind for an output type",
     r"\bkind\b[^\n]{0,30}\b(?:FIGURE|DATA|TABLE)\b|\b(?:entry|o)\.kind\b|\| output \| kind \|",
     None, ()),
    # In code, `kind` is a model's architecture and nothing else: any kind outside the files
    # that handle architectures is another idea under the retired word. No third-party API the
    # code calls takes a `kind` keyword, so the allow-list holds no such exception.
    ("kind in code for anything but a model's architecture",
     r"(?i)\bkinds?\b|_kinds?\b|\bkinds?_", CODE, MODEL_KIND_CODE),
    ("share for a proportion",
     r"\bshare_(?:ratio_gt1|a_greater|mean|sd)\b|\b(?:tie|unseen)_share(?:s|_obligatory)?\b"
     r"|[\"`]share[\"`]: c|\(\"share\","
     r"|\b[Ss]hare (?:of|with) (?:r\b|pairs|the pairs|minimal|obligatory|ambiguous|edges|words"
     r"|the words|all words|equal|the scored|the training sentences held|the elastic)"
     r"|L1 share|share r > 1|WARMUP_SHARE|\b_shares?\(|(?<![\w-])--share\b(?!-)"
     r"|this share \(0-1\)|SHARE x n", None, ()),
    ("share for a shard's fraction of the items", r"\bshare = 1 /|\bshard's share\b", None, ()),
    # core/artifacts.py NONCE_REASONS names them (the nonce_stats columns); code reads it there.
    ("the nonce reasons spelled out again", r"""["']no_candidate["']|^REASONS = """, CODE,
     ("workflow/spudflow/core/artifacts.py", "workflow/spudflow/core/schemas.snapshot.json")),
    # probe/layer_choice.py AUTO is the one spelling of a layer the sweep chooses.
    ("auto spelled out again", r"""\bPROBE_AUTO\b|\bAUTO = ["']auto["']|\|auto["']""", CODE,
     ("workflow/spudflow/core/artifacts.py",)),
    ("outdir and indir for out_dir and in_dir", r"\b(?:outdir|indir)\b", None, ()),
    # One separator, @, for a split's part in the config and in the result paths alike; configs
    # written with the old one still read (core/training_share.py split_part).
    ("a colon before a split's part", r"""(?:[\w/]|["']):(?:train|heldout)\b""", None, ()),
    ("aggregate_datasets for items_datasets", r"\baggregate_datasets\b", None, ()),
    ("blimp_fields for the figure that draws blimp_field", r"\bblimp[_-]fields\b", None, ()),
    # the old command name is still read: its alias in aggregate/cli.py
    ("table_japanese for the japanese_transitivity family's rule",
     r"\btable[_-]japanese\b(?![_-])", None, ("workflow/spudflow/aggregate/cli.py",)),
    # NONCE_METHODS (nonce/context.py) and SCORING_METHODS (core/scoring_methods.py): two lists
    # of two ideas, never one bare name for either.
    ("a bare METHODS for nonce or scoring methods", r"\bMETHODS\b", None, ()),
    # An artifact is a file between stages and its one definition; core/contract.py checks it.
    ("contract for an artifact", r"(?i)(?<![./`])\bcontracts?\b(?!\.\w)", None, ()),
    ("schema for an artifact",
     r"(?i)\bschema v\d|\bschema tables?\b|\btable schemas\b|\bitems schema\b"
     r"|\bstage's (?:ITEMS )?schema\b|\bshared schema\b|\bschema version\b|\bschemas in docs",
     None, ()),
    # A language's additions to the nonce algorithm are its hooks; a rule is a Snakemake rule.
    ("rules for a language's nonce hooks",
     r"\b(?:Language|Arabic|German|English|French|Japanese|Russian)Rules\b|\bget_rules\b"
     r"|\bRULE_FREE_METHODS\b|(?i:\blanguage(?:'s)?\s+(?:nonce\s+)?rules\b)", None, ()),
    ("rules in the nonce code for a language's hooks", r"\bRULES\b|\brules\b",
     ("workflow/spudflow/nonce/",), ("workflow/spudflow/nonce/plan.py",)),
    # core/renamed.py keeps the old command running, after a deprecation line.
    ("train-control for control-train", r"\btrain[-_]control\b", None,
     ("workflow/spudflow/core/renamed.py", "docs/controls.md")),
    # The stage is `items`, like its artifact; `spudflow pairs` still runs (items/cli.py), and the
    # vendored Japanese lexicon's note keeps its bytes.
    ("pairs for the items stage",
     r"spudflow[./]pairs\b|rules/pairs\.smk|docs/pairs\.md|\bPairsPlan\b|\bpairs_plan\b"
     r"|\bpairs stage\b|spudflow pairs (?:spud|german-case|japanese-transitivity|count-verbs|cola"
     r"|blimp)\b", None, ("config/lexicons/japanese_verb_pairs.tsv",)),
]


def _files(root: Path):
    for top in SCANNED:
        base = root / top
        paths = [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []
        for path in paths:
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                yield path.relative_to(root).as_posix(), path


def hits(root: Path, pattern: str, where, skipped) -> list[str]:
    """FILE:LINE: text of every match outside the skipped prefixes."""
    regex = re.compile(pattern)
    found = []
    for rel, path in _files(root):
        if rel == GLOSSARY or rel.startswith(tuple(skipped)):
            continue
        if where is not None and not rel.startswith(tuple(where)):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                 .splitlines(), 1):
            if regex.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


@pytest.mark.parametrize(("synonym", "pattern", "where", "skipped"), RETIRED,
                         ids=[r[0] for r in RETIRED])
def test_retired_synonym_is_gone(synonym, pattern, where, skipped):
    assert hits(ROOT, pattern, where, skipped) == [], f"{synonym}: see docs/glossary.md"


# (retired entry, file, a line of the code before its rename)
OLD_SPELLINGS = [
    ("scorer for a scoring function", "workflow/spudflow/aggregate/blimp.py",
     'SCORER = ["dataset", "model"]'),
    ("none for the lm baseline", "workflow/spudflow/core/table_artifacts.py",
     'col("baseline", STR, "`none` (the LM), `M0`, `MR` or `MRC`"),'),
    ("probe_set for the eval set", "rules/aggregate.smk", "        probe_set=PROBE_SETS,"),
    ("original for orig", "workflow/spudflow/core/artifacts.py", 'SPUD_ORIGINAL = "original"'),
    ("a figure's other names", "rules/aggregate.smk",
     "use rule figure_probe_layers as figure_german_roc"),
    ("pairs for the items stage", "rules/items.smk",
     "        unpack(pairs_plan.spud_items_input),"),
    ("pairs for the items stage", "docs/items.md",
     "spudflow pairs blimp FILE.jsonl|DIR … [--sample N --seed S] [--dataset NAME] --out …"),
    ("kind for a dataset family", "workflow/spudflow/items/plan.py",
     "from spudflow.core.dataset_kinds import DATASET_KINDS"),
    ("kind for a dataset family", "docs/aggregate.md",
     "- **Items** `results/items/{dataset}.parquet` (`items.KIND`, docs/items.md): `dataset`,"),
    ("kind for a token type", "workflow/spudflow/ingest/stats.py",
     '    words = tokens.filter(pl.col("kind") == "word")'),
    ("kind for a token type", "docs/ingest.md",
     "| kind | string | `word`, `mwt` (multiword-token range such as `3-4`) or `empty` |"),
    ("kind for an output type", "workflow/spudflow/core/outputs_registry.py",
     "    kind: str  # TABLE, DATA or FIGURE"),
    ("kind for an output type", "docs/aggregate.md",
     "| output | kind | rule (`spudflow` command) | fed by | report category | reproduces |"),
    ("kind in code for anything but a model's architecture",
     "workflow/spudflow/core/config_readme.py", '    kind = node.get("type", "")'),
    ("kind in code for anything but a model's architecture",
     "workflow/spudflow/items/japanese_transitivity.py",
     '    for kind, text in context.parts(clause):'),
    ("share for a proportion", "workflow/spudflow/core/table_artifacts.py",
     '    col("share_mean", F64, "share of the scored words with this direction", True),'),
    ("share for a proportion", "workflow/spudflow/aggregate/probe_edges.py",
     '    for name in ("share", *SCORES, *[f"delta_{s}" for s in SCORES]):'),
    ("share for a proportion", "report/japanese_agreement.rst",
     "Japanese transitivity: for every two scoring modes, the share of pairs on which they"),
    ("share for a proportion", "workflow/spudflow/ingest/plan.py",
     "    return f\"--share {share['share']} --seed {share['seed']}{rest}\""),
    ("share for a proportion", "workflow/spudflow/controls/train.py", "WARMUP_SHARE = 0.06"),
    ("share for a proportion", "workflow/spudflow/aggregate/japanese.py",
     '        pl.col("tie").filter(obligatory).mean().alias("tie_share_obligatory"),'),
    ("share for a proportion", "workflow/spudflow/aggregate/front_page.py",
     "    share of the words the model never saw (`unseen`, the same for each method"),
    ("share for a proportion", "workflow/spudflow/aggregate/spud_scores.py",
     "def unseen_shares(pairs: pl.DataFrame, scored: pl.DataFrame) -> pl.DataFrame:"),
    ("scorer for a scoring function", "docs/aggregate.md",
     "`n_unseen` / `n_words`, which the n-gram scorer records per token; n/a for"),
    ("kind in code for anything but a model's architecture", "workflow/spudflow/core/atomic.py",
     "    from spudflow.core.output_kinds import may_replace"),
    ("share for a shard's fraction of the items", "workflow/spudflow/scoring/plan.py",
     '    share = 1 / int(wildcards.shards) if "shards" in wildcards.keys() else 1'),
    ("share for a shard's fraction of the items", "workflow/spudflow/scoring/plan.py",
     "    4000 an n-gram model) plus the score rows of the items it holds (a shard's share; a"),
    ("the nonce reasons spelled out again", "workflow/spudflow/nonce/replace.py",
     'NO_CANDIDATE = "no_candidate"  # the context holds no other unit in the pool'),
    ("the nonce reasons spelled out again", "workflow/spudflow/nonce/replace.py",
     "REASONS = (NO_CANDIDATE, NO_FORM, RULE, PROTECTED)"),
    ("auto spelled out again", "workflow/spudflow/probe/plan.py", 'PROBE_AUTO = "auto"'),
    ("auto spelled out again", "workflow/spudflow/probe/cli.py", 'AUTO = "auto"'),
    ("auto spelled out again", "rules/probe.smk", '    dist=r"[0-9]+|auto",'),
    ("outdir and indir for out_dir and in_dir", "rules/ingest.smk",
     "        outdir=subpath(output.tokens, parent=True),"),
    ("outdir and indir for out_dir and in_dir", "rules/nonce.smk",
     '        "spudflow nonce {params.indir:q} --lang {params.lang} --seed {wildcards.seed}"'),
    ("a colon before a split's part", "config/config.yaml",
     '    de_pud: {train: "test:train", dev: null, test: "test:heldout", layers: {}}'),
    ("a colon before a split's part", "config/config.yaml",
     "  de_pud_share: {lang: de, text: [de_pud/test:train]}"),
    ("a colon before a split's part", "workflow/spudflow/core/plan_base.py",
     '        name = entry.removesuffix(":train")'),
    ("a colon before a split's part", "docs/probe.md",
     "(`test:heldout`: the sentences the SPUD items keep). `dev: null` selects on a seeded"),
    ("aggregate_datasets for items_datasets", "workflow/spudflow/aggregate/plan.py",
     "def aggregate_datasets(family):"),
    ("a bare METHODS for nonce or scoring methods", "workflow/spudflow/nonce/context.py",
     'METHODS = ("spud", "pos", "posfree")'),
    ("a bare METHODS for nonce or scoring methods", "workflow/spudflow/core/scoring_methods.py",
     "BY_NAME = {m.name: m for m in METHODS}"),
    ("train-control for control-train", "rules/controls.smk", "rule train_control:"),
    ("contract for an artifact", "workflow/spudflow/core/outputs_registry.py",
     "    def contract(self) -> str:"),
    ("contract for an artifact", "README.md",
     "- **Contracts**: every file one stage hands to another (and every result table) is"),
    ("schema for an artifact", "docs/scoring.md",
     "*ngram_model* (schema v1, written by `spudflow ngram-train`). `results/ngram/{name}.parquet`"
     ":"),
    ("schema for an artifact", "workflow/spudflow/core/artifact_docs.py",
     '"""The schema tables of docs/*.md, rendered from the artifact definitions.'),
    ("schema for an artifact", "rules/pairs.smk",
     "# Items datasets (docs/pairs.md): minimal pairs and template sentences in one items schema,"),
    ("rules for a language's nonce hooks", "workflow/spudflow/nonce/languages/en.py",
     "class EnglishRules(LanguageRules):"),
    ("rules for a language's nonce hooks", "docs/nonce.md",
     "6. **Language rules** fix the function words of the sentence (a/an, elision, …); not in"),
    ("rules for a language's nonce hooks", "docs/architecture.md",
     "| `spudflow.nonce.languages` | one module per language's nonce rules (`de.py`, `fr.py`, …)"),
    ("rules for a language's nonce hooks", "config/schema.yaml",
     "        description: options of the language rules"),
    ("rules in the nonce code for a language's hooks", "workflow/spudflow/nonce/make.py",
     "    rules = get_rules(settings.lang, settings.options)  # options are checked either way"),
    ("train-control for control-train", "docs/running.md",
     "  `--conllu`, `ngram-train`'s model, `train-control`'s folder; else its output file"),
]


@pytest.mark.parametrize(("synonym", "rel", "line"), OLD_SPELLINGS,
                         ids=[f"{s}: {r}" for s, r, _ in OLD_SPELLINGS])
def test_patterns_catch_the_old_spellings(tmp_path, synonym, rel, line):
    """Each pattern finds the spellings it retires (lines of the code before the renames)."""
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line + "\n", encoding="utf-8")
    entry = next(r for r in RETIRED if r[0] == synonym)
    assert hits(tmp_path, *entry[1:]) == [f"{rel}:1: {line.strip()}"]


@pytest.mark.parametrize(("rel", "line"), [
    ("workflow/spudflow/scoring/cli.py",
     '    p.add_argument("--kind", required=True, help="causal | masked | electra | ngram")'),
    ("workflow/spudflow/scoring/cli.py", "    kind = check_kind(args.kind)"),
    ("docs/scoring.md", "| kind | method | per-token log probability (natural log) |"),
    ("config/config.yaml", "    kind: causal"),
    ("config/config.yaml", "  en_pud/test: {share: 0.5, seed: 0}"),
    ("workflow/spudflow/items/plan.py",
     "    return f\"--leave-out-share {share['share']} --share-seed {share['seed']}\""),
    ("workflow/spudflow/core/overlap.py",
     '    """Sentences of `treebank/split`: all of them, its training share or the rest'),
    ("docs/controls.md", "of each other, into every language's share — the multilingual controls"),
    ("workflow/spudflow/nonce/replace.py",
     "NO_CANDIDATE, NO_FORM, RULE, PROTECTED = NONCE_REASONS"),
    ("rules/probe.smk", '    dist=rf"[0-9]+|{AUTO}",'),
    ("config/config.yaml", '    de_pud: {train: "test@train", dev: null, test: "test@heldout"}'),
    ("config/schema.yaml", '              pattern: "^[A-Za-z0-9_-]+([@:](train|heldout))?$"'),
    ("rules/aggregate.smk", "            out_dir=subpath(output[1], parent=True),"),
    ("docs/probe.md", "split (or share) and its nonce versions: `spud/seed1`, `pos/seed1`"),
    ("docs/running.md", "(`spudflow.core.output_paths`). `spudflow.core.input_files` opens files"
     " and `spudflow.core.contract` checks every"),
    ("workflow/spudflow/core/artifacts.py",
     "    Its name `items.FAMILY` also satisfies a reader of plain `items`"
     " (contract.check_schema)."),
    ("README.md", "single keys of the default. `config/README.md` lists every key (generated"
     " from the schema). A path"),
    ("workflow/spudflow/scoring/run.py",
     "    # Schema metadata of the final tables (a `--shard` job's mark, shards.py); None: none."),
    ("docs/nonce.md", "contraction's own SpaceAfter=No goes with its line, as in the reference"),
    ("workflow/spudflow/nonce/plan.py",
     '"""Input functions and config lookups of the nonce stage\'s rules (rules/nonce.smk), and'),
    ("workflow/spudflow/nonce/stats.py",
     "        # function words whose form a language rule changed (a -> an, le -> l'); not the"),
    ("docs/nonce.md", "6. **Language hooks** fix the function words of the sentence (a/an, …)"),
])
def test_patterns_leave_the_one_meaning(tmp_path, rel, line):
    """A model's kind and a training share are what the two words keep, and the one spellings
    of the other ideas: no pattern flags them."""
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line + "\n", encoding="utf-8")
    assert [r[0] for r in RETIRED if hits(tmp_path, *r[1:])] == []


def test_glossary_is_linked_from_the_readme():
    assert "docs/glossary.md" in (ROOT / "README.md").read_text(encoding="utf-8")
