# Two commands on a fresh machine with Python 3.11+ and make: `make preview` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STACK ?= dev
PACK := build/policy-pack

.PHONY: preview test check pack-config policy-pack bench schemas docs clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "gpu-dra needs Python 3.11 or newer; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

preview: $(STAMP)
	$(BIN)/gpu-dra preview --stack $(STACK)

# The suite on every core, and one worker more: many tests wait on a child process, a socket or a deadline, and the
# extra worker keeps the cores busy meanwhile (2 cores: 3 workers 168 s, 2 workers 184 s). gpu-dra's bytecode is
# compiled first: where PYTHONDONTWRITEBYTECODE is set, each CLI child process a test starts would compile it again
# (a tenth of a `check`).
WORKERS ?= $(shell $(BIN)/python -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/mypy tools
	$(BIN)/python -m compileall -q gpu_dra components __main__.py
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal

check: $(STAMP)
	$(BIN)/gpu-dra check --all-stacks

pack-config: $(STAMP)
	for s in dev staging prod automode; do $(BIN)/gpu-dra check --stack $$s --pack-config > policies/config.$$s.json; done

# The CrossGuard pack as a folder that stands alone (docs/policy-pack.md), with the venv PulumiPolicy.yaml names:
# `pulumi preview --policy-pack $(PACK) --policy-pack-config policies/config.$(STACK).json`, `pulumi policy publish`.
policy-pack: $(STAMP)
	$(BIN)/gpu-dra policy-pack --out $(PACK)
	test -x $(PACK)/venv/bin/python || $(BIN)/python -m venv $(PACK)/venv
	$(PACK)/venv/bin/python -m pip install --quiet -r $(PACK)/requirements.txt

schemas: $(STAMP)
	$(BIN)/gpu-dra schema stack > schemas/stack.schema.json
	$(BIN)/gpu-dra schema team > schemas/team.schema.json

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf build $(VENV)

docs: $(STAMP)
	$(BIN)/python -c 'from pathlib import Path; from gpu_dra.core.config.docs import configuration_markdown as md; Path("docs/configuration.md").write_text(md(Path(".")) + "\n")'
	$(BIN)/python tools/docs_upgrade_example.py
