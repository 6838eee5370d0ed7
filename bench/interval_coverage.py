"""Coverage of the CoLA and German case intervals on data drawn with a known value.

    python bench/interval_coverage.py [--replicates 1000] [--resamples 2000] [--level 0.95]

Each scenario draws `--replicates` data sets from a population whose figure is known, computes
the table's interval with the table's own code and counts how often it holds the figure; a 95 %
interval should hold it 93-97 % of the time with 1,000 replicates (the Monte Carlo sd of a
coverage of .95 is .007). Prints one Markdown table: scenario, its sizes, the known value, the
coverage, the mean width and the seconds it took.

- `delong`: german_case_auc's auc_pooled interval (delong.py): m = 100 positives ~ N(d, 1), n =
  150 negatives ~ N(0, 1), AUC = Phi(d / sqrt 2) = .75.
- `template mean`: german_case_auc's auc_mean interval (a bootstrap over templates): 50
  templates of 36 grammatical and 108 violations, as the paper's, each with its own separation
  d_t ~ N(mu, tau); the mean template AUC of the population is E Phi(d_t / sqrt 2) =
  Phi(mu / sqrt(2 + tau^2)).
- `mcc`: cola_thresholds' mcc interval (a bootstrap of the held-out sentences with the thresholds
  fixed): 500 sentences, each (label, prediction) drawn from fixed cell probabilities, the
  population MCC their phi coefficient.
- `accuracy`: cola_thresholds' accuracy interval (Wilson's) on the same sentences.
"""

from __future__ import annotations

import argparse
import time
from statistics import NormalDist

import numpy as np

from spudflow.aggregate.cola import intervals
from spudflow.aggregate.delong import delong_auc
from spudflow.aggregate.german_case import _mean
from spudflow.aggregate.uncertainty import Uncertainty, bootstrap_interval

PHI = NormalDist().cdf


def delong_scenario(rng, replicates, settings):
    m, n, d = 100, 150, np.sqrt(2) * NormalDist().inv_cdf(0.75)
    truth = PHI(d / np.sqrt(2))
    labels = np.r_[np.ones(m, int), np.zeros(n, int)]
    found = []
    for _ in range(replicates):
        scores = np.r_[rng.normal(d, 1, m), rng.normal(0, 1, n)]
        estimate = delong_auc(labels, scores, settings.level)
        found.append((estimate.ci_low, estimate.ci_high))
    return "delong", f"m {m}, n {n}", truth, found


def template_scenario(rng, replicates, settings):
    templates, m, n, mu, tau = 50, 36, 108, 0.2, 0.15
    truth = PHI(mu / np.sqrt(2 + tau ** 2))
    found = []
    for _ in range(replicates):
        d = rng.normal(mu, tau, templates)
        positives = rng.normal(d[:, None], 1, (templates, m))
        negatives = rng.normal(0, 1, (templates, n))
        # Mann-Whitney AUC per template (continuous scores: no ties)
        aucs = (positives[:, :, None] > negatives[:, None, :]).mean(axis=(1, 2))
        low, high, _ = bootstrap_interval([aucs], _mean, settings)
        found.append((low, high))
    return "template mean", f"{templates} templates of {m} + {n}", truth, found


def _cells(p_label=0.7, p_right_if_1=0.85, p_right_if_0=0.55):
    """Probabilities of (label, prediction) = (0,0), (0,1), (1,0), (1,1) and their phi."""
    p = np.array([(1 - p_label) * p_right_if_0, (1 - p_label) * (1 - p_right_if_0),
                  p_label * (1 - p_right_if_1), p_label * p_right_if_1])
    tn, fp, fn, tp = p
    phi = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return p, float(phi), float(tp + tn)


def cola_scenarios(rng, replicates, settings):
    size = 500
    p, phi, accuracy = _cells()
    mcc_found, accuracy_found = [], []
    for _ in range(replicates):
        codes = rng.choice(4, size=size, p=p)
        labels, predictions = codes // 2, codes % 2
        tp, tn = ((labels == 1) & (predictions == 1)).sum(), ((labels == 0) & (predictions == 0)
                                                              ).sum()
        fp, fn = ((labels == 0) & (predictions == 1)).sum(), ((labels == 1) & (predictions == 0)
                                                              ).sum()
        mcc = (tp * tn - fp * fn) / np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
        got = intervals(labels, predictions, float(mcc), settings)
        mcc_found.append((got["mcc_ci_low"], got["mcc_ci_high"]))
        accuracy_found.append((got["accuracy_ci_low"], got["accuracy_ci_high"]))
    return [("mcc", f"{size} sentences", phi, mcc_found),
            ("accuracy", f"{size} sentences", accuracy, accuracy_found)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    settings = Uncertainty(args.level, args.resamples, 0)
    rng = np.random.default_rng(args.seed)
    print(f"{args.replicates} replicates, {args.resamples} bootstrap resamples, level "
          f"{args.level:g}\n")
    print("| scenario | sizes | known value | coverage | mean width | seconds |")
    print("|---|---|---:|---:|---:|---:|")
    for scenario in (delong_scenario, template_scenario, cola_scenarios):
        start = time.perf_counter()
        results = scenario(rng, args.replicates, settings)
        seconds = time.perf_counter() - start
        for name, sizes, truth, found in results if isinstance(results, list) else [results]:
            ends = np.array(found, dtype=float)
            coverage = np.mean((ends[:, 0] <= truth) & (truth <= ends[:, 1]))
            print(f"| {name} | {sizes} | {truth:.4f} | {coverage:.3f} | "
                  f"{np.mean(ends[:, 1] - ends[:, 0]):.4f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
