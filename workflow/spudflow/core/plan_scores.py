"""What the aggregate stage and the Snakefile plan from the scoring stage: every (dataset, model)
scoring job, and the check that no model the pipeline trains scores its own training text."""

from __future__ import annotations

from spudflow.core.config import ConfigError
from spudflow.core.overlap import dataset_sources, model_training, overlap_errors
from spudflow.core.plan_base import PlanBase


class ScoringQueries(PlanBase):
    def scoring_datasets(self):
        """Items datasets to score: `scoring.datasets` when set, else every dataset the items stage
        enables."""
        configured = self.config["scoring"].get("datasets")  # optional, no schema default
        return list(self.items_datasets() if configured is None else configured)

    def model_config(self, model):
        return self.config["models"][model]

    def scoring_jobs(self):
        """(dataset, model) of every scoring job: every dataset for every model, or the model's own
        `datasets:` list when it has one, and only datasets in the model's `languages` (when set).
        The aggregate stage reads their item_scores."""
        jobs = []
        for model, spec in self.config["models"].items():
            # optional, with no schema default: unset, every dataset / language
            only, languages = spec.get("datasets"), spec.get("languages")
            jobs += [
                (d, model)
                for d in self.scoring_datasets()
                if (only is None or d in only)
                and (languages is None or self.items_dataset_language(d) in (None, *languages))
            ]
        return jobs

    def check_training_overlap(self):
        """Stop planning with a config error when a model the pipeline trains would score a sentence
        it was trained on (spudflow.core.overlap), unless models.NAME.allow_training_overlap."""
        self.training_shares()
        models = self.config["models"]
        training = {m: t for m in models if (t := model_training(self.config, m)) is not None}
        jobs = [(d, m) for d, m in self.scoring_jobs() if m in training]
        spud, blimp = self.spud_items_splits(), self.blimp_files()
        scored = {d: dataset_sources(self.config, d, spud, blimp) for d in {d for d, _ in jobs}}
        allowed = [m for m, spec in models.items() if spec["allow_training_overlap"]]
        errors = overlap_errors(jobs, training, scored, allowed)
        if errors:
            raise ConfigError("\n".join(errors))
