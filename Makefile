# opalg — see README.md.  `make test` and `make reproduce` work on a fresh machine
# with only Python >= 3.11 and make: they create .venv and install the pinned deps.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv test reproduce figures lab html html-instructor student bench bench-core bench-hybrid clean panel ledger

$(PY):
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "opalg needs Python >= 3.11, found " + sys.version'
	$(PYTHON) -m venv --without-pip $(VENV)

# Bytecode.  Under PYTHONDONTWRITEBYTECODE (some images set it globally) pip installs no .pyc and
# every worker, notebook kernel and subprocess of the suite would compile what it imports
# (sympy, scipy, opalg, the rewritten tests ...) again: ~5 s each.  The venv is compiled once
# at install (~25 s) and the suite caches the rest, all under .venv/pycache (PYTHONPYCACHEPREFIX),
# never in the source tree.
PYCACHE := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache

# Reinstall whenever the dependency metadata or the pins change.  The pins are installed by uv
# (itself pinned in constraints.txt, from PyPI): the same versions pip would install from
# constraints.txt, but downloaded and unpacked in parallel, ~10 s instead of ~90 s on a fresh
# clone.  The bytecode skips the installed packages' own test folders, which nothing imports.
# uv itself goes in with the system pip when that can install into another interpreter (pip >=
# 22.3's --python): the venv is made without a pip of its own (ensurepip: ~7 s), and uv installs
# the pinned pip into it with the rest.  Otherwise ensurepip, then the venv's pip.
$(STAMP): $(PY) pyproject.toml constraints.txt
	if $(PYTHON) -m pip --python $(PY) --version >/dev/null 2>&1; then \
	    $(PYTHON) -m pip --python $(PY) install --quiet --disable-pip-version-check -c constraints.txt uv; \
	else \
	    $(PY) -m ensurepip --default-pip >/dev/null && \
	    $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt uv; \
	fi
	$(VENV)/bin/uv pip install --quiet --python $(PY) -c constraints.txt "pip==26.3" -e ".[test,oracle,browser,site]"
	$(PYCACHE) $(PY) -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib
	touch $(STAMP)

venv: $(STAMP)

test: venv
	$(PYCACHE) $(PY) -m pytest

# The suite proves it can fail (issue 37): every planted SOA fault of tools/faults/catalogue.py,
# in a scratch copy, must be caught by the tests chosen for it; prints the kill matrix.
# FAULTS_ARGS="--source head" leaves uncommitted edits out; "--only NAME ..." runs a few.
.PHONY: faults mutants
faults: venv
	$(PYCACHE) $(PY) tools/faults/run.py $(FAULTS_ARGS)

# cosmic-ray's generic mutants over the core recursions, a seeded sample in a 15-minute budget
# (MUTANTS_MINUTES=…; MUTANTS_ARGS="--resume", "--recheck" or "--report"); outside CI.  Installs
# the pinned [mutation] extra first.
MUTANTS_MINUTES ?= 15
mutants: venv
	$(VENV)/bin/uv pip install --quiet --python $(PY) -c constraints.txt -e ".[mutation]"
	$(PYCACHE) $(PY) tools/faults/mutants.py --minutes $(MUTANTS_MINUTES) $(MUTANTS_ARGS)

reproduce: venv
	$(PYCACHE) $(PY) tools/reproduce.py

# The verification ledger (tools/ledger.py): the tests marked `verifies` run once more and record
# what they compare; build/ledger/LEDGER.md and the site (with its ledger page) are written.
LEDGER := $(CURDIR)/build/ledger
ledger: venv
	rm -rf $(LEDGER)
	OPALG_LEDGER=$(LEDGER)/records $(PY) -m pytest opalg tests -m verifies -q
	$(PY) tools/ledger.py $(LEDGER)/records --out $(LEDGER)
	$(PYCACHE) $(PY) tools/site/build.py

# JupyterLab rooted at the repository (so a notebook's links to ../docs/ open), on notebook 01.
# Classroom VMs and containers often run as root, where Jupyter wants --allow-root.
ALLOW_ROOT = $(if $(filter 0,$(shell id -u)),--allow-root,)
lab: venv
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=$(CURDIR) $(ALLOW_ROOT) notebooks/01_index.ipynb

# A git-ignored copy of the notebooks to answer the exercises in (existing copies are kept).
student: venv
	$(PY) tools/student.py

# The course site build/html/ (Sphinx + myst-nb, tools/site/): the committed notebooks as they
# stand (nothing executed), docs/, the README; offline math and search; no model answers.
html: venv
	$(PYCACHE) $(PY) tools/site/build.py

# The same site with the model answers (docs/solutions/), for lecturers: build/html-instructor/.
html-instructor: venv
	$(PYCACHE) $(PY) tools/site/build.py --instructor

# The Ider panel alone (notebooks/panels/ider_panel.ipynb) in Voilà, on this machine only:
# open the URL it prints (default port 8866; `make panel PORT=9000`); Ctrl-C stops it.  Voilà
# serves the repository (its links to notebook 08 and to docs/*.md work) with the settings of
# notebooks/panels/voila.json: Markdown served as files, and the kernel of a closed page culled
# after two idle minutes.
PORT ?= 8866
PANEL := voila/render/notebooks/panels/ider_panel.ipynb
panel: venv
	@echo "the Ider panel: http://127.0.0.1:$(PORT)/$(PANEL)"
	$(VENV)/bin/voila . --Voila.config_file_paths=notebooks/panels --no-browser --Voila.ip=127.0.0.1 --port=$(PORT)

bench: venv
	$(PY) benchmarks/bench_scaling.py

# Accuracy table, n = 2,000 / 16,000 scaling (time, memory) and import time: a few minutes.
bench-core: venv
	$(PY) benchmarks/bench_core.py

# Hybrid dynamics against the ABA over 10,000 states, and its size scaling: about a minute.
bench-hybrid: venv
	$(PY) benchmarks/bench_hybrid.py

# Flexible bodies: flex.aba against CRBA + Cholesky, m = 0…6 modes per link: under a minute.
.PHONY: bench-flex
bench-flex: venv
	$(PY) benchmarks/bench_flex.py

# Floating base (base_velocity, generalized_jacobian) against crba + solve: a few seconds.
.PHONY: bench-floating
bench-floating: venv
	$(PY) benchmarks/bench_floating.py

# Closed chains (ClosedSystem, two Pandas vs Pinocchio) and MultiArm: a few minutes.
.PHONY: bench-closed
bench-closed: venv
	$(PY) benchmarks/bench_closed.py
	$(PY) benchmarks/bench_multiarm.py

clean:
	rm -rf $(VENV) build *.egg-info
