# Every target creates .venv on first use, so a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
BENCH_VENV := .bench-venv
BENCH_STAMP := $(BENCH_VENV)/.installed
BENCH_ARGS ?=
FUZZ_MINUTES ?= 10

.PHONY: demo test test-kernels test-min test-all test-dist dist test-browser browser-deps lint bench bench-peers samples fuzz \
	reference docs clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,html,data,dask,docs,units,explore]' --config-settings editable_mode=compat
	$(PY) -m compileall -q gradcli
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m gradcli.demo

test: $(STAMP)
	$(PY) -m pytest -q

# The docs' examples and the tests that compare printed numbers once more under the other
# OpenBLAS kernel (SkylakeX on an AVX-512 CPU, else Haswell, or unset where the environment
# sets it) and once with numpy's AVX-512 code off; a pass that cannot run here says so in
# one line (.ci/kernels.py; .ci/run runs it after make test)
test-kernels: $(STAMP)
	$(PY) .ci/kernels.py

# The oldest versions pyproject allows (constraints/minimum.txt) in a fresh venv of their own,
# then the same suite as `make test`: the floors are tested, not guessed.
MIN_VENV := .min-venv
MIN_STAMP := $(MIN_VENV)/.installed

$(MIN_STAMP): pyproject.toml constraints/minimum.txt
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MIN_VENV)/bin/python -m pip install --quiet -c constraints/minimum.txt \
	  -e '.[test,html,data,dask,docs,units,explore]' --config-settings editable_mode=compat
	$(MIN_VENV)/bin/python -m pip check
	touch $(MIN_STAMP)

# tests/ only: the docs' examples print what today's versions print (make test runs them)
test-min: $(MIN_STAMP)
	$(MIN_VENV)/bin/python -m pytest -q tests

test-all: $(STAMP) dist
	$(PY) -m pytest -q -m ''

# The installed form: `python -m build` makes the sdist, then the wheel from the sdist
# (dist/); a second wheel straight from the tree (dist/from-tree/) lets the test check that
# both carry the same files. test-dist installs the wheel with every extra into a fresh
# venv and runs it from outside the checkout (tests/story/test_dist.py).
dist: $(STAMP)
	$(PY) -m pip install --quiet 'build>=1.2'
	rm -rf dist build  # a stale build/lib would leak deleted modules into the wheel
	$(PY) -m build --outdir dist .
	$(PY) -m build --wheel --outdir dist/from-tree .

test-dist: dist
	$(PY) -m pytest -q -m dist tests/story/test_dist.py

# The interactive page in a real browser: Debian's Chromium (installed with apt-get when
# missing and this is root) driven by the Python playwright package (a test extra, so
# `make test` runs these too whenever Chromium is present); a missing browser is a failure
# here, not a skip.
browser-deps: $(STAMP)
	@if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium with apt-get"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "Chromium is missing: apt-get install chromium (as root)"; exit 1; fi; \
	fi

test-browser: browser-deps
	GRADCLI_REQUIRE_BROWSER=1 $(PY) -m pytest -q -rs tests/plot/test_plot_browser.py

lint: $(STAMP)
	$(VENV)/bin/ruff check gradcli tests benchmarks fuzz samples

# the pictures listed in samples/README.md, then the pages' screenshots from the browser tests
samples: $(STAMP)
	$(PY) samples/make_samples.py
	$(MAKE) --no-print-directory browser-deps
	GRADCLI_REQUIRE_BROWSER=1 GRADCLI_SCREENSHOT=samples/html_field.png \
	  $(PY) -m pytest -q tests/plot/test_plot_browser.py -k field_page
	GRADCLI_REQUIRE_BROWSER=1 GRADCLI_EXPLORE_SCREENSHOT=samples/explore.png \
	  $(PY) -m pytest -q tests/explore/test_explore_browser.py -k panel

# The documentation site: the pictures it shows (samples/, byte-stable), the generated
# tables, then mkdocs build --strict into site/: any warning fails it (a broken link, a
# missing page; no --quiet, which keeps warnings from counting). site/index.html works
# from disk, with no network (mkdocs.yml says how).
docs: $(STAMP)
	$(PY) samples/make_samples.py
	$(MAKE) --no-print-directory reference
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict
	@echo "open site/index.html"

# the docs' generated tables (options, functions), from the code
reference: $(STAMP)
	$(PY) -m gradcli.cli.reference $$(find docs -name "*.md" -not -path "docs/examples/*")

fuzz: $(STAMP)
	$(PY) fuzz/run.py --minutes $(FUZZ_MINUTES)

# `make bench BENCH_ARGS="--quick"`; peers (torch, JAX, HIPS autograd, polars, uncertainties) are
# compared when
# `make bench-peers` has made their venv.
# gradcli's bytecode is compiled first, as a wheel install does: with PYTHONDONTWRITEBYTECODE
# set, an editable install would otherwise recompile every module in every cold start.
bench: $(STAMP)
	@if [ -x $(BENCH_VENV)/bin/python ]; then $(MAKE) --no-print-directory $(BENCH_STAMP); fi
	@py=$(PY); if [ -x $(BENCH_VENV)/bin/python ]; then py=$(BENCH_VENV)/bin/python; fi; \
	$$py -m compileall -q gradcli; \
	echo "$$py -m benchmarks.run $(BENCH_ARGS)"; $$py -m benchmarks.run $(BENCH_ARGS)

# Peers live in their own venv (with the data extra: the points reader uses pyarrow when it
# is there); torch is pinned to the CPU build (an unpinned torch pulls
# a multi-GB GPU build).
$(BENCH_STAMP): pyproject.toml
	test -d $(BENCH_VENV) || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -e '.[html,data]' torch==2.13.0 jax jaxlib autograd polars \
	  uncertainties
	touch $(BENCH_STAMP)

bench-peers: $(BENCH_STAMP)

clean:
	rm -rf $(VENV) $(BENCH_VENV) $(MIN_VENV) build dist *.egg-info .pytest_cache
	find gradcli tests benchmarks -name __pycache__ -type d -prune -exec rm -rf {} +
