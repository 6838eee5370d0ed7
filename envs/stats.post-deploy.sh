#!/usr/bin/env bash
# Snakemake runs this once in the new env: install the spudflow package itself (its libraries are
# pinned in the env file). SPUDFLOW_REPO is exported by the Snakefile, so this works whatever the
# working directory or --conda-prefix (a relative pip path in the env file would not): the
# workflow's directory, or for a module from github(...) the release as a pip git+https:// URL.
set -euo pipefail
repo="${SPUDFLOW_REPO:?set by the Snakefile}"
if [ -d "$repo" ]; then
    python -m pip install --no-deps --no-build-isolation --editable "$repo"
else
    python -m pip install --no-deps "$repo"
fi
