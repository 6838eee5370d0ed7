"""DIR/rehearsal.md: what ran (jobs, wall / CPU / peak RSS per rule from the rules' benchmark
files), disk used, what was a stand-in, and an estimate of the real run's work per stage."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path("results") / "benchmarks"


@dataclass
class RuleCost:
    jobs: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0


def benchmark_group(relative: Path) -> str:
    """The rule a benchmark file belongs to: its first folder, or folder/stem for the one-job
    rules that write straight into a stage's folder (aggregate/table_probe)."""
    parts = relative.with_suffix("").parts
    one_job = parts[0] in ("aggregate", "nonce", "pairs") and len(parts) == 2
    return "/".join(parts) if one_job else parts[0]


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return 0.0


def rule_costs(workdir: Path) -> dict[str, RuleCost]:
    costs: dict[str, RuleCost] = defaultdict(RuleCost)
    root = workdir / BENCHMARKS
    for path in sorted(root.rglob("*.tsv")):
        with path.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        cost = costs[benchmark_group(path.relative_to(root))]
        for row in rows:
            cost.jobs += 1
            cost.wall_s += _number(row.get("s", "0"))
            cost.cpu_s += _number(row.get("cpu_time", "0"))
            cost.max_rss_mb = max(cost.max_rss_mb, _number(row.get("max_rss", "0")))
    return dict(costs)


def job_stats(log: str) -> dict[str, int]:
    """Snakemake's `Job stats:` table of a run's log (rule -> jobs); empty when nothing ran."""
    stats, inside = {}, False
    for line in log.splitlines():
        if line.startswith("Job stats:"):
            stats, inside = {}, True
            continue
        if inside:
            match = re.match(r"^(\S+)\s+(\d+)\s*$", line)
            if match and match.group(1) != "total":
                stats[match.group(1)] = int(match.group(2))
            elif line.strip() == "" and stats:
                inside = False
    return stats


def disk_bytes(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def _size(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else _mb(n)


def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def scored_words(workdir: Path, dataset: str) -> int:
    import polars as pl

    path = workdir / "results" / "items" / f"{dataset}.parquet"
    if not path.is_file():
        return 0
    return int(pl.read_parquet(path, columns=["words"])["words"].list.len().sum())


def probe_feature_loads(workdir: Path) -> tuple[int, int]:
    """(probe feature jobs, encoders they built): a job (benchmark
    probe_features/{model}/{treebank}/{split}[.shardN].tsv) builds one encoder per baseline
    folder of its features directory, results/probe/features/{model}/{treebank}/{split}/."""
    root = workdir / BENCHMARKS / "probe_features"
    jobs = sorted(root.rglob("*.tsv"))
    encoders = 0
    for job in jobs:
        split = job.relative_to(root).with_suffix("").as_posix().partition(".shard")[0]
        features = workdir / "results" / "probe" / "features" / split
        encoders += sum(1 for p in features.glob("*") if p.is_dir()) if features.is_dir() else 0
    return len(jobs), encoders


def feature_bytes(workdir: Path) -> int:
    """Bytes of the rehearsal's probe features (results/probe/features)."""
    root = workdir / "results" / "probe" / "features"
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0


def feature_projection(config: dict, repo: Path, workdir: Path) -> list[str]:
    """The real run's probe feature bytes per treebank, projected from the config's plan
    (spudflow.rehearse.footprint; a local model's width read in the rehearsal's `workdir`, where
    the rules that build one put it), as report lines."""
    from spudflow.rehearse.footprint import filled, measured_rate, projected, real_width

    projection = projected(filled(config, repo, workdir), repo, measured_rate(repo),
                           lambda source: real_width(source, workdir))
    if not projection.per_treebank and not projection.left_out:
        return ["No probe features are planned."]
    lines = [f"The real run: about {_size(projection.total)}. Per feature job, the real split's "
             "words (UD 2.10's sentence count, or a local file's own, capped as the probes cap "
             "it) x the layers each baseline stores x the real model's hidden width x the bytes "
             "per word, layer and unit of a feature file (spudflow.rehearse.footprint)."]
    if projection.per_treebank:
        lines += [""] + _table(["treebank", "features (est.)"], [
            [name, _size(size)] for name, size in projection.per_treebank.items()])
    if projection.borrowed:
        lines += ["", "Lengths from other treebanks of the language: "
                  + "; ".join(projection.borrowed) + "."]
    if projection.left_out:
        lines += ["", "Not counted: " + "; ".join(projection.left_out) + "."]
    return lines


def estimate(workdir: Path, config: dict, stand_ins, repo: Path) -> list[str]:
    """The real run's work per stage: scoring scaled from the rehearsal by the real splits'
    sizes, probe features projected from the config's plan."""
    scale = {f"spud_{s.treebank}_{s.split}": s.real / s.sentences for s in stand_ins
             if s.real and s.sentences}
    rows, loads = [], 0
    score_root = workdir / BENCHMARKS / "score"
    models = config.get("models") or {}
    for path in sorted(score_root.glob("*/*.tsv")):
        dataset, model = path.parent.name, path.stem
        loads += 1
        methods = len(models.get(model, {}).get("methods", [])) or 1
        words = scored_words(workdir, dataset)
        factor = scale.get(dataset)
        real = f"{words * methods * factor:,.0f}" if factor else "sampled: the preset's size"
        rows.append([dataset, model, f"{words:,} x {methods}", real])
    lines = ["### Scoring: words scored x methods", ""]
    lines += _table(["dataset", "model", "rehearsal", "real run (est.)"], rows) if rows else \
        ["(no scoring jobs)"]
    probe_jobs, probe_loads = probe_feature_loads(workdir)
    # a probe_train job builds its baseline's encoder once, for every set it extracts
    train_jobs = len(list((workdir / BENCHMARKS / "probe_train").rglob("*.tsv")))
    lines += ["", "### Probe features", "", f"{_mb(feature_bytes(workdir))} in the rehearsal."]
    lines += [""] + feature_projection(config, repo, workdir)
    lines += ["", "### Model loads", "",
              f"{loads} scoring jobs each load one model; {probe_jobs} probe feature jobs build "
              f"{probe_loads} encoders (one per baseline, one after the other); {train_jobs} "
              "probe training jobs build one each (their baseline's, for the test split's eval "
              "sets and, in a layer sweep's run of a layer the feature files do not hold, the "
              "training and selection splits, extracted in memory). The same counts in the real "
              "run, each loading the full-size weights."]
    return lines


def write_report(path: Path, *, repo: Path, config_path: Path, size: str, run, hub, stand_ins,
                 user_files, overlay: dict) -> None:
    workdir = path.parent
    lines = [f"# Rehearsal of `{config_path}` (--size {size})", "",
             f"Snakemake exit status {run.returncode}, {run.wall_s:.0f} s wall; "
             f"{'nothing to be done' if run.nothing_to_do else 'jobs below'}. "
             "Log: `rehearsal/snakemake.log`.", "", "## Jobs (this run)", ""]
    stats = job_stats(run.log)
    lines += _table(["rule", "jobs"], sorted(stats.items())) if stats else ["(none)"]
    lines += ["", "## Cost per rule (every benchmark file under results/benchmarks/)", ""]
    lines += _table(["rule", "jobs", "wall s", "CPU s", "peak RSS MB"], [
        [name, c.jobs, f"{c.wall_s:.1f}", f"{c.cpu_s:.1f}", f"{c.max_rss_mb:.0f}"]
        for name, c in sorted(rule_costs(workdir).items())])
    lines += ["", "## Disk used", ""]
    lines += _table(["folder", "size"], [[name, _mb(disk_bytes(workdir / name))]
                                         for name in ("results", "hub", "mirror", "resources")])
    lines += ["", "## Stand-ins", "", "### Hub models (tiny, random weights)", ""]
    lines += _table(["hub id", "family", "chosen by", "architecture", "tokenizer", "used by",
                     "revisions"], [
        [h.hub_id, h.family.name, h.how, h.family.architecture, h.family.tokenizer,
         ", ".join(h.users), ", ".join(h.revisions) or "main"] for h in hub]) \
        if hub else ["(no hub models)"]
    lines += ["", "### Treebanks (fetch.mirror)", ""]
    lines += _table(["treebank", "split", "URL", "stand-in"], [
        [s.treebank, s.split, s.url, f"{s.note} from {', '.join(s.sources)}"]
        for s in stand_ins]) if stand_ins else ["(no treebank URLs)"]
    lines += ["", "### User-supplied files", ""]
    lines += _table(["file", "config key", "stand-in"], [
        [u.path, u.what, u.made] for u in user_files]) if user_files else ["(none)"]
    lines += ["", "## Overlay", "", "```yaml", _yaml(overlay).rstrip(), "```", "",
              "## Estimate of the real run", ""]
    lines += estimate(workdir, _merged(config_path), stand_ins, repo)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _yaml(data: dict) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=True, allow_unicode=True) if data else "{}\n"


def _merged(config_path: Path) -> dict:
    import yaml

    return yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
