#!/usr/bin/env bash
# Snakemake runs this once in the new env: install the spudflow package itself (its libraries are
# pinned in the env file). SPUDFLOW_REPO is exported by the Snakefile, so this works whatever the
# working directory or --conda-prefix (a relative pip path in the env file would not).
set -euo pipefail
python -m pip install --no-deps --no-build-isolation --editable "${SPUDFLOW_REPO:?set by the Snakefile}"
