"""bench/interval_coverage.py as a test: on data drawn with a known AUC, mean template AUC, MCC
and accuracy, 1,000 replicates, the CoLA and German case 95 % intervals hold the known value 93-97 %
of the time (2,000 bootstrap resamples each; seeded, so the same counts every run)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from aggregate_inputs import REPO

pytestmark = pytest.mark.slow


def _bench():
    spec = importlib.util.spec_from_file_location(
        "interval_coverage", REPO / "bench" / "interval_coverage.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_95_percent_intervals_cover_93_to_97_percent():
    bench = _bench()
    settings = bench.Uncertainty(0.95, 2000, 0)
    rng = np.random.default_rng(0)
    results = [bench.delong_scenario(rng, 1000, settings),
               bench.template_scenario(rng, 1000, settings),
               *bench.cola_scenarios(rng, 1000, settings)]
    for name, _, truth, found in results:
        ends = np.array(found, dtype=float)
        coverage = np.mean((ends[:, 0] <= truth) & (truth <= ends[:, 1]))
        assert 0.93 <= coverage <= 0.97, (name, coverage)
