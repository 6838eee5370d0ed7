# Input functions and config lookups of the pairs stage's rules (rules/pairs.smk).
from spudflow.core import nonce_plan
from spudflow.core.dataset_families import (
    DATASET_FAMILIES,
    JAPANESE_VARIANTS,
    items_dataset_names,
)
from spudflow.core.fetch_options import fetch_inputs, fetch_source, sha256_option
from spudflow.core.pairs_files import URL_KEYS, family_downloads, local_file

# The paper's two German case sentence files (pairs.german_case.sentences).
GERMAN_CASE_SENTENCES = ("grammatical", "ungrammatical")


def pairs_section(name):
    """The config of one dataset family under `pairs:` ({} when the config leaves it out: not
    built)."""
    return config["pairs"].get(name, {})


def cola_phenomena():
    """The local files of the CoLA phenomenon sets (pairs.cola.phenomena): paths as given, URLs
    where rule fetch_pairs_file downloads them."""
    return [local_file("cola", entry) for entry in pairs_section("cola")["phenomena"]]


def cola_phenomena_args():
    """`--phenomena FILE…` of the CoLA phenomenon sets; "" when none."""
    files = cola_phenomena()
    return f"--phenomena {quoted(files)}" if files else ""


# The families with files that may be given by URL: fetch_pairs_file's `family` wildcard.
PAIRS_URL_FAMILIES = "|".join(URL_KEYS)


def pairs_download_url(wildcards):
    """The configured URL of a fetch_pairs_file download (core/pairs_files.py)."""
    return family_downloads(config, wildcards.family)[wildcards.name].url


def pairs_file_url(wildcards):
    """What fetch_pairs_file downloads: the URL or its mirrored copy (config fetch.mirror)."""
    return fetch_source(config, pairs_download_url(wildcards))


def pairs_file_checksum(wildcards):
    return sha256_option(config, pairs_download_url(wildcards))


def pairs_file_input(wildcards):
    return fetch_inputs(config, pairs_download_url(wildcards))


def pairs_enabled(name):
    return bool(pairs_section(name).get("enabled"))


def german_case_sentence_file(which):
    """Where items_german_case reads one of the paper's German case sentence files (the
    configured path, or where fetch_pairs_file downloads its URL)."""
    return local_file("german_case", pairs_section("german_case")["sentences"][which])


def german_case_items_input(wildcards):
    """The template TSV, or the two sentence files the templates are recovered from."""
    section = pairs_section("german_case")
    if "sentences" in section:
        return {which: german_case_sentence_file(which) for which in GERMAN_CASE_SENTENCES}
    return {"templates": section["templates"]}


def german_case_source_args(wildcards, input):
    """`--templates TSV` or `--sentences GRAMMATICAL UNGRAMMATICAL`, as the input is."""
    if "templates" in input.keys():
        return f"--templates {quoted([input.templates])}"
    return f"--sentences {quoted([input[which] for which in GERMAN_CASE_SENTENCES])}"


def spud_items_splits():
    """SPUD items dataset name -> (treebank, split) of the scored splits, as the nonce plan has
    them (spudflow.core.nonce_plan)."""
    return nonce_plan.spud_items_splits(config)


def spud_items_versions():
    """(method, seed) of the nonce versions a SPUD items dataset holds beside each original
    sentence (spudflow.core.nonce_plan)."""
    return nonce_plan.spud_items_versions(config)


def japanese_variants():
    if not pairs_enabled("japanese_transitivity"):
        return []
    chosen = pairs_section("japanese_transitivity")["datasets"]
    return [v for v in JAPANESE_VARIANTS if v in chosen]


JAPANESE_COUNTED_LEXICON = "results/lexicons/japanese_verb_pairs.tsv"


def japanese_lexicon():
    """The verb pair lexicon the Japanese items rank by: counted in the configured corpus
    (pairs.japanese_transitivity.corpus, rule japanese_verb_counts), or the lexicon file itself,
    whose counts are those its header names."""
    section = pairs_section("japanese_transitivity")
    return JAPANESE_COUNTED_LEXICON if section.get("corpus") else section["lexicon"]


def items_dataset_families():
    """Name -> family (its `pairs:` section, core/dataset_families.py) of every items dataset
    the config enables (results/items/{name}.parquet), in config order: SPUD items only of the
    splits that are scored. The family is set here, where the name is made: no rule reads a
    family off a name."""
    scored = spud_items_splits()
    return {
        name: family
        for name, family in items_dataset_names(config).items()
        if family != "spud" or name in scored
    }


def items_datasets(family=None):
    """Names of the items datasets the config enables (of one family, or all), in config order."""
    return [d for d, f in items_dataset_families().items() if family in (None, f)]


def items_dataset_language(dataset):
    """The language of an items dataset's sentences: its family's, or its treebank's (SPUD); None
    for an items file the pairs stage does not make (a user's own, whose items carry their
    language: the score command's --languages filters them item by item)."""
    families = items_dataset_families()
    if dataset not in families:
        return None
    language = DATASET_FAMILIES[families[dataset]].language
    return language or treebank_lang(spud_items_splits()[dataset][0])


def items_file(dataset):
    return f"results/items/{dataset}.parquet"


def spud_items_input(wildcards):
    datasets = spud_items_splits()
    if wildcards.dataset not in datasets:
        raise ValueError(
            f"{wildcards.dataset} is not a SPUD items dataset of the config "
            f"(known: {', '.join(datasets) or 'none'})"
        )
    treebank, split = datasets[wildcards.dataset]
    return {
        "orig": ingested(treebank, split),
        "nonce": nonce_tokens(treebank, split, spud_items_versions()),
    }


def spud_leave_out_args(wildcards):
    """`--leave-out-share`: the split's training share (config training_shares) is not scored."""
    treebank, split = spud_items_splits()[wildcards.dataset]
    share = training_shares().get(f"{treebank}/{split}")
    if not share:
        return ""
    return f"--leave-out-share {share['share']} --share-seed {share['seed']}"


def spud_nonce_options(wildcards, input):
    """`--nonce DIR` options for the nonce versions' tokens.parquet files."""
    return " ".join(f"--nonce {shlex.quote(str(Path(f).parent))}" for f in input.nonce)


def blimp_files():
    """The paradigm files of pairs.blimp.paths; a directory stands for its *.jsonl files. None
    while BLiMP is not built."""
    if not pairs_enabled("blimp"):
        return []
    files = []
    for location in pairs_section("blimp")["paths"]:
        path = Path(location)
        files += sorted(str(p) for p in path.glob("*.jsonl")) if path.is_dir() else [location]
    return files
