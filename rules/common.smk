# Helpers shared by every rules file: config lookups, input functions, wildcard constraints.
from pathlib import Path

SPUDFLOW_SOURCE = Path(workflow.basedir) / "workflow" / "spudflow"


wildcard_constraints:
    treebank=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    split=r"[A-Za-z0-9_-]+",


def stage_code(*stages):
    """Python sources of the stages a rule runs, plus the shared core and CLI.

    Listed as inputs so that a change to a stage's code reruns that stage's jobs and their
    dependents (Snakemake itself tracks only the shell text)."""
    files = [SPUDFLOW_SOURCE / "cli.py"]
    for stage in (*stages, "core"):
        files += sorted((SPUDFLOW_SOURCE / stage).rglob("*.py"))
    return [str(f) for f in files]


def treebank_splits():
    """(treebank, split) pairs of the config, in config order."""
    return [(tb, split) for tb, spec in config["treebanks"].items() for split in spec["splits"]]


def treebank_lang(treebank):
    return config["treebanks"][treebank]["lang"]


def is_url(location):
    return location.split(":", 1)[0] in ("http", "https", "ftp", "file")


def split_location(treebank, split):
    return config["treebanks"][treebank]["splits"][split]


def treebank_source(wildcards):
    """The local CoNLL-U file of a split: the configured path, or where its URL is downloaded."""
    location = split_location(wildcards.treebank, wildcards.split)
    if not is_url(location):
        return location
    suffix = ".conllu.gz" if location.endswith(".gz") else ".conllu"
    return f"resources/downloads/{wildcards.treebank}/{wildcards.split}{suffix}"


def ingested(treebank, split):
    return f"results/ingest/{treebank}/{split}/tokens.parquet"


def all_outputs():
    outputs = ["results/tables/treebank_stats.parquet"]
    outputs += [ingested(tb, split) for tb, split in treebank_splits()]
    outputs += nonce_outputs()
    return outputs


# --- nonce ---
import shlex


wildcard_constraints:
    method=r"spud|pos",
    seed=r"[0-9]+",


def nonce_config(key):
    return config["nonce"][key]


def nonce_dir(treebank, split, method, seed):
    return f"results/nonce/{treebank}/{split}/{method}/seed{seed}"


def nonce_runs():
    """(treebank, split, method, seed) of every configured nonce treebank."""
    return [(tb, split, method, seed) for tb, split in treebank_splits()
            for method in nonce_config("methods") for seed in nonce_config("seeds")]


def nonce_stats_files():
    return [f"{nonce_dir(*run)}/replacement_stats.parquet" for run in nonce_runs()]


def nonce_outputs():
    outputs = []
    for run in nonce_runs():
        outputs += [f"{nonce_dir(*run)}/tokens.parquet", f"{nonce_dir(*run)}/nonce.conllu"]
    outputs += ["results/tables/nonce_replacement_ratio.parquet",
                "results/tables/nonce_type_token_ratio.parquet"]
    return outputs


def nonce_pool_inputs(wildcards):
    """Ingested splits named in config nonce.pools for this treebank."""
    inputs = []
    for name in nonce_config("pools").get(wildcards.treebank, []):
        tb, split = name.split("/", 1)
        if split not in config["treebanks"].get(tb, {}).get("splits", {}):
            raise ValueError(f"config key nonce.pools.{wildcards.treebank}: {name!r} is not a "
                             "configured treebank/split")
        inputs.append(ingested(tb, split))
    return inputs


def nonce_lexicon_inputs(wildcards):
    """Every other ingested split of the treebank's language: the lexicon's data."""
    lang = treebank_lang(wildcards.treebank)
    return [ingested(tb, split) for tb, split in treebank_splits()
            if treebank_lang(tb) == lang and (tb, split) != (wildcards.treebank, wildcards.split)]


def nonce_lexicon_files(wildcards):
    return nonce_config("lexicons").get(treebank_lang(wildcards.treebank), [])


def _dirs_option(flag, tokens_files):
    dirs = [str(Path(f).parent) for f in tokens_files]
    return f"{flag} {' '.join(shlex.quote(d) for d in dirs)}" if dirs else ""


def nonce_arguments(wildcards, input):
    """The optional arguments of `spudflow nonce` for one run, shell-quoted."""
    lang = treebank_lang(wildcards.treebank)
    options = nonce_config("languages").get(lang, {})
    return " ".join(filter(None, [
        f"--upos {','.join(nonce_config('upos'))}",
        _dirs_option("--pool", input.pools),
        _dirs_option("--lexicon-from", input.lexicon_from),
        f"--lexicon {' '.join(shlex.quote(f) for f in input.lexicons)}" if input.lexicons else "",
        *[f"--option {name}={str(value).lower()}" for name, value in sorted(options.items())],
    ]))
