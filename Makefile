# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo test proto bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/cortexd demo

# Two workers, each given whole test files (their module-scoped daemons stay in one process): 10 minutes on two
# cores instead of 18. `pytest` alone still runs everything in one process.
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

proto: $(STAMP)
	$(BIN)/python proto/generate.py

bench: $(STAMP)
	$(BIN)/cortexd bench transport

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
