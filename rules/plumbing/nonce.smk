# Input functions and config lookups of the nonce stage's rules (rules/nonce.smk).
from spudflow.core import nonce_plan


def nonce_dir(treebank, split, method, seed):
    return f"results/nonce/{treebank}/{split}/{method}/seed{seed}"


def nonce_versions():
    """(method, seed) of every nonce version the `nonce:` section describes."""
    return nonce_plan.nonce_versions(config)


def nonce_tokens(treebank, split, versions):
    """tokens.parquet of these nonce versions ((method, seed) pairs) of a split."""
    return [
        f"{nonce_dir(treebank, split, method, seed)}/tokens.parquet" for method, seed in versions
    ]


def nonce_runs():
    """(treebank, split, method, seed) of every nonce treebank something reads: the plan the
    pairs and probe rules read too (spudflow.core.nonce_plan)."""
    return nonce_plan.nonce_runs(config)


def nonce_stats_files():
    """The per-split replacement statistics (docs/nonce.md); the aggregate stage reads them."""
    return [f"{nonce_dir(*run)}/replacement_stats.parquet" for run in nonce_runs()]


def nonce_ttr_tokenizer():
    """nonce.ttr_tokenizer: the tokenizer the TTR table counts the tokens of (None: word forms,
    or no nonce section)."""
    return config["nonce"]["ttr_tokenizer"] if "nonce" in config else None


def nonce_ttr_tokens():
    """The TTR table counts the words of every nonce treebank (pooled over a treebank's splits
    too), in word forms or, with nonce.ttr_tokenizer, in its tokens."""
    return [f"{nonce_dir(*run)}/tokens.parquet" for run in nonce_runs()]


def nonce_ttr_tokenizer_inputs():
    tokenizer = nonce_ttr_tokenizer()
    return model_path_inputs(tokenizer) if tokenizer else []


def nonce_ttr_options():
    tokenizer = nonce_ttr_tokenizer()
    return quoted(["--tokenizer", tokenizer]) if tokenizer else ""


def nonce_outputs():
    runs = nonce_runs()
    outputs = []
    for run in runs:
        outputs += [f"{nonce_dir(*run)}/tokens.parquet", f"{nonce_dir(*run)}/nonce.conllu"]
    if runs:
        outputs += [
            o.target for r in ("table_nonce_ratio", "table_nonce_ttr") for o in rule_outputs(r)
        ]
    return outputs + human_eval_outputs()


def nonce_pool_inputs(wildcards):
    """Ingested splits named in config nonce.pools for this treebank."""
    names = config["nonce"]["pools"][wildcards.treebank]
    key = f"nonce.pools.{wildcards.treebank}"
    return [ingested(*configured_split(name, key)) for name in names]


def nonce_lexicon_inputs(wildcards):
    """Every other ingested split of the treebank's language: the lexicon's data."""
    lang = treebank_lang(wildcards.treebank)
    return [
        ingested(tb, split)
        for tb, split in treebank_splits()
        if treebank_lang(tb) == lang and (tb, split) != (wildcards.treebank, wildcards.split)
    ]


def nonce_lexicon_files(wildcards):
    return config["nonce"]["lexicons"][treebank_lang(wildcards.treebank)]


def nonce_options(wildcards):
    """The settings of `spudflow nonce` for one run, shell-quoted: a function of the wildcards
    only, so that a changed setting reruns the job (Snakemake compares such params with the
    last run's; one of `input` it does not)."""
    nonce = config["nonce"]
    options = nonce["languages"][treebank_lang(wildcards.treebank)]
    return " ".join(
        [
            f"--upos {','.join(nonce['upos'])}",
            f"--case {nonce['case']} --multiword-tokens {nonce['multiword_tokens']}",
            f"--candidate-weights {nonce['candidate_weights']}",
            *[f"--option {name}={str(value).lower()}" for name, value in sorted(options.items())],
        ]
    )


def nonce_sources(wildcards, input):
    """The candidate pools, lexicon splits and lexicon files of one run (its input: a change
    reruns it as an input change), shell-quoted."""
    dirs = lambda files: quoted(Path(f).parent for f in files)
    return " ".join(
        filter(
            None,
            [
                f"--pool {dirs(input.pools)}" if input.pools else "",
                f"--lexicon-from {dirs(input.lexicon_from)}" if input.lexicon_from else "",
                f"--lexicon {quoted(input.lexicons)}" if input.lexicons else "",
            ],
        )
    )


# --- human evaluation kit (rules/nonce.smk human_eval_*; docs/nonce.md, "Human evaluation") ---
def human_eval_split():
    """(treebank, split) of config human_eval.split; the kit needs the nonce section."""
    if "nonce" not in config:
        raise ValueError("config key human_eval: needs the nonce section (nonce versions)")
    return configured_split(config["human_eval"]["split"], "human_eval.split")


def human_eval_dir():
    return "results/human_eval/{}/{}".format(*human_eval_split())


def human_eval_nonce(method):
    """tokens.parquet of the kit's nonce version made with METHOD (spud or posfree); the nonce
    rule builds the posfree one for this split only, whatever nonce.methods says."""
    seed = config["human_eval"]["nonce_seed"]
    return f"{nonce_dir(*human_eval_split(), method, seed)}/tokens.parquet"


def human_eval_sheets():
    """The exported sheets' printable pages, NAME.html per annotator. NAME.csv, the sheet to fill
    in, is written beside each but is no declared output: Snakemake would delete it, answers and
    all, before a rerun; `human-eval export` keeps a filled one and writes NAME.new.csv."""
    return [f"{human_eval_dir()}/sheets/{name}.html" for name in config["human_eval"]["annotators"]]


def human_eval_filled():
    """The filled sheets in annotator order; a config error unless every annotator has one."""
    kit = config["human_eval"]
    filled = kit["filled"]
    if set(filled) != set(kit["annotators"]):
        raise ValueError(
            "config key human_eval.filled: expected a sheet of each of "
            f"{', '.join(kit['annotators'])}, got {', '.join(filled) or 'none'}"
        )
    return [filled[name] for name in kit["annotators"]]


def human_eval_outputs():
    """The sheets and key with a `human_eval:` section; Tables 1-2 once sheets are filled."""
    if "human_eval" not in config:
        return []
    outputs = [f"{human_eval_dir()}/answer_key.parquet", *human_eval_sheets()]
    if config["human_eval"]["filled"]:
        human_eval_filled()
        outputs += [o.target for o in rule_outputs("human_eval_tables")]
    return outputs
