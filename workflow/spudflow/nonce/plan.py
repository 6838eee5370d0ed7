"""Input functions and config lookups of the nonce stage's rules (rules/nonce.smk), and of its
human evaluation kit (docs/nonce.md, "Human evaluation")."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.outputs_registry import rule_outputs
from spudflow.core.plan import Plan
from spudflow.core.plan_base import ingested, model_path_inputs, quoted
from spudflow.core.plan_nonce import nonce_dir
from spudflow.core.rules_support import memory_for_input


def nonce_sources(wildcards, input):
    """The candidate pools, lexicon splits and lexicon files of one run (its input: a change
    reruns it as an input change), shell-quoted."""

    def dirs(files):
        return quoted(Path(f).parent for f in files)

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


# A nonce job's mem_mb: peak RSS grows with the split (bench/bench_scale.py: 4.6 GB at a 41 MB
# tokens.parquet).
NONCE_MEMORY = memory_for_input(3000, 500, 130, "tokens")

class NoncePlan(Plan):
    def nonce_ttr_tokenizer(self):
        """nonce.ttr_tokenizer: the tokenizer the TTR table counts the tokens of (None: word forms,
        or no nonce section)."""
        return self.config["nonce"]["ttr_tokenizer"] if "nonce" in self.config else None

    def nonce_ttr_tokens(self):
        """The TTR table counts the words of every nonce treebank (pooled over a treebank's splits
        too), in word forms or, with nonce.ttr_tokenizer, in its tokens."""
        return [f"{nonce_dir(*run)}/tokens.parquet" for run in self.nonce_runs()]

    def nonce_ttr_tokenizer_inputs(self):
        tokenizer = self.nonce_ttr_tokenizer()
        return model_path_inputs(tokenizer) if tokenizer else []

    def nonce_ttr_options(self):
        tokenizer = self.nonce_ttr_tokenizer()
        return quoted(["--tokenizer", tokenizer]) if tokenizer else ""

    def nonce_outputs(self):
        runs = self.nonce_runs()
        outputs = []
        for run in runs:
            outputs += [f"{nonce_dir(*run)}/tokens.parquet", f"{nonce_dir(*run)}/nonce.conllu"]
        if runs:
            outputs += [
                o.target for r in ("table_nonce_ratio", "table_nonce_ttr") for o in rule_outputs(r)
            ]
        return outputs + self.human_eval_outputs()

    def nonce_split_settings(self, split):
        """nonce.splits' entry for a split name ({} when it has none)."""
        return self.config["nonce"].get("splits", {}).get(split, {})

    def nonce_pool_inputs(self, wildcards):
        """Ingested splits named in config nonce.pools for this treebank, then those that
        nonce.splits names for this split, without repeats."""
        key = f"nonce.pools.{wildcards.treebank}"
        pools = [self.configured_split(name, key)
                 for name in self.config["nonce"]["pools"][wildcards.treebank]]
        key = f"nonce.splits.{wildcards.split}.pool"
        pools += [self.configured_split(f"{wildcards.treebank}/{name}", key)
                  for name in self.nonce_split_settings(wildcards.split).get("pool", [])]
        return [ingested(*pool) for pool in dict.fromkeys(pools)]

    def nonce_lexicon_inputs(self, wildcards):
        """Every other ingested split of the treebank's language: the lexicon's data."""
        lang = self.treebank_lang(wildcards.treebank)
        return [
            ingested(tb, split)
            for tb, split in self.treebank_splits()
            if self.treebank_lang(tb) == lang
            and (tb, split) != (wildcards.treebank, wildcards.split)
        ]

    def nonce_lexicon_files(self, wildcards):
        return self.config["nonce"]["lexicons"][self.treebank_lang(wildcards.treebank)]

    def nonce_options(self, wildcards):
        """The settings of `spudflow nonce` for one run, shell-quoted: a function of the wildcards
        only, so that a changed setting reruns the job (Snakemake compares such params with the
        last run's; one of `input` it does not)."""
        nonce = self.config["nonce"]
        options = nonce["languages"][self.treebank_lang(wildcards.treebank)]
        upos = self.nonce_split_settings(wildcards.split).get("upos", nonce["upos"])
        return " ".join(
            [
                f"--upos {','.join(upos)}",
                f"--case {nonce['case']} --multiword-tokens {nonce['multiword_tokens']}",
                f"--candidate-weights {nonce['candidate_weights']}",
                f"--feats-match {nonce['feats_match']}",
                *[
                    f"--option {name}={str(value).lower()}"
                    for name, value in sorted(options.items())
                ],
            ]
        )

    def human_eval_split(self):
        """(treebank, split) of config human_eval.split; the kit needs the nonce section."""
        if "nonce" not in self.config:
            raise ValueError("config key human_eval: needs the nonce section (nonce versions)")
        return self.configured_split(self.config["human_eval"]["split"], "human_eval.split")

    def human_eval_dir(self):
        return "results/human_eval/{}/{}".format(*self.human_eval_split())

    def human_eval_nonce(self, method):
        """tokens.parquet of the kit's nonce version made with METHOD (spud or posfree); the nonce
        rule builds the posfree one for this split only, whatever nonce.methods says."""
        seed = self.config["human_eval"]["nonce_seed"]
        return f"{nonce_dir(*self.human_eval_split(), method, seed)}/tokens.parquet"

    def human_eval_sheets(self):
        """The exported sheets' printable pages, NAME.html per annotator. NAME.csv, the sheet to
        fill in, is written beside each but is no declared output: Snakemake would delete it,
        answers and all, before a rerun; `human-eval export` keeps a filled one and writes
        NAME.new.csv."""
        return [
            f"{self.human_eval_dir()}/sheets/{name}.html"
            for name in self.config["human_eval"]["annotators"]
        ]

    def human_eval_filled(self):
        """The filled sheets in annotator order; a config error unless every annotator has one."""
        kit = self.config["human_eval"]
        filled = kit["filled"]
        if set(filled) != set(kit["annotators"]):
            raise ValueError(
                "config key human_eval.filled: expected a sheet of each of "
                f"{', '.join(kit['annotators'])}, got {', '.join(filled) or 'none'}"
            )
        return [filled[name] for name in kit["annotators"]]

    def human_eval_outputs(self):
        """The sheets and key with a `human_eval:` section; Tables 1-2 once sheets are filled."""
        if "human_eval" not in self.config:
            return []
        outputs = [f"{self.human_eval_dir()}/answer_key.parquet", *self.human_eval_sheets()]
        if self.config["human_eval"]["filled"]:
            self.human_eval_filled()
            outputs += [o.target for o in rule_outputs("human_eval_tables")]
        return outputs
