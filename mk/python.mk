# Python extension redlock_rs (crate redlock-python, python/). See docs/src/python.md.
#
# A virtualenv in python/.venv holds the pinned tools of python/requirements-dev.txt; the
# extension is built into it with maturin (debug for tests, release for the benchmark).

.PHONY: deps-python python-develop python-wheel-install sdist masters-bin test-python test-python-check bench-python deps-wheel wheel test-wheel test-wheel-build

PYTHON ?= python3
PY_VENV := python/.venv
PY := $(PY_VENV)/bin/python
# Rebuilt when the pinned requirements change.
PY_DEPS_STAMP := $(PY_VENV)/.requirements-installed
# Per-test bound of the pytest suite (seconds).
PYTEST_TIMEOUT ?= 60
# Processes running the pytest suite (pytest-xdist), in `make test`, `make check` and the
# Valkey rerun; 1 runs it in this process.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL = $(if $(filter-out 1,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS))
# The local masters of the Python tests (python/tests/conftest.py): `redlock-masters`, crate
# redlock-local, the same local masters the Rust tests use.
REDLOCK_MASTERS_BIN := $(abspath $(or $(CARGO_TARGET_DIR),target))/debug/redlock-masters
export REDLOCK_MASTERS_BIN
# The stamp of the wheels' zig toolchain.
PY_WHEEL_STAMP := $(PY_VENV)/.wheel-requirements-installed
# Benchmark: seconds per measurement and runs per configuration (the median is reported).
BENCH_PY_SECONDS ?= 2
BENCH_PY_RUNS ?= 3

deps-python: $(PY_DEPS_STAMP) ## Python virtualenv python/.venv with maturin, pytest, mypy (pinned)

$(PY_DEPS_STAMP): python/requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(PY_VENV) || { \
	  echo "python3 -m venv failed: installing the distribution's python3-venv" >&2; \
	  rm -rf $(PY_VENV); \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null && \
	  $(PYTHON) -m venv $(PY_VENV); }
	$(PY) -m pip install -q --disable-pip-version-check -r python/requirements-dev.txt
	@touch $@

# The extension's debug build has a target directory of its own: apart from the tests' builds
# it never waits for their lock.
PY_TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))/python-build

python-develop: deps-python ## Build redlock_rs (debug) and install it into python/.venv
	cd python && VIRTUAL_ENV=$(abspath $(PY_VENV)) CARGO_TARGET_DIR=$(PY_TARGET_DIR) .venv/bin/maturin develop -q --locked

python-wheel-install: deps-python $(TEST_WHEEL) ## Install the test wheel (target/test-wheel) into python/.venv, in place of python-develop
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps $(TEST_WHEEL:/.built=)/redlock_rs-*.whl

# What puts redlock_rs into python/.venv for the Python tests: a debug build of the tree
# (`make check`, `make test-python`), or in `make test` the wheel it checks anyway (one build
# of the extension instead of two).
PY_EXTENSION ?= python-develop

masters-bin: ## Build redlock-masters, which starts the Python tests' local masters (REDLOCK_MASTERS_BIN)
	$(CARGO) build --locked -q --workspace $(WORKSPACE_FEATURES) --bin redlock-masters

test-python: deps-redis $(PY_EXTENSION) masters-bin ## pytest suite (warnings as errors, per-test timeout), stubtest of the .pyi, mypy --strict
	@failed=0; \
	(cd python && .venv/bin/python -m pytest -W error -p no:cacheprovider --timeout $(PYTEST_TIMEOUT) \
	  $(PYTEST_PARALLEL) tests) || failed=1; \
	(cd python/tests && ../.venv/bin/python -m mypy.stubtest redlock_rs) || failed=1; \
	(cd python && .venv/bin/python -m mypy --strict --cache-dir=/dev/null tests examples ../bench/python) || failed=1; \
	exit $$failed

bench-python: deps-redis deps-python masters-bin ## Acquire+release cycles/s from Python vs the Rust blocking API (release builds, 5 local masters)
	cd python && VIRTUAL_ENV=$(abspath $(PY_VENV)) .venv/bin/maturin develop -q --release --locked
	$(CARGO) build --release --locked -q -p redlock-bench --bin blocking-cycles
	$(PY) bench/python/cycles.py --rust target/release/blocking-cycles \
	  --seconds $(BENCH_PY_SECONDS) --runs $(BENCH_PY_RUNS)

deps-wheel: $(PY_WHEEL_STAMP)

$(PY_WHEEL_STAMP): python/requirements-wheel.txt $(PY_DEPS_STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -r python/requirements-wheel.txt
	@touch $@

# Two wheels, built the same way (zig, manylinux2014 tag, abi3) from the sdist: `make wheel`'s
# release wheel in target/wheels, and the dev-profile wheel `make test` checks and tests with in
# target/test-wheel: what it checks (the tag, an install without Rust, a round trip, the pytest
# suite) does not depend on the profile, and a release build of the whole dependency tree would
# be the slowest step of `make test`. Each is rebuilt when a file of the extension changes.
RELEASE_WHEEL := target/wheels/.built
TEST_WHEEL := target/test-wheel/.built
$(RELEASE_WHEEL): WHEEL_PROFILE = release
$(TEST_WHEEL): WHEEL_PROFILE = dev
WHEEL_SOURCES := $(wildcard Cargo.toml Cargo.lock LICENSE-* \
  $(filter-out python/tests/% python/examples/%,$(shell git ls-files python core resp 2>/dev/null)))
# The wheels' own target directory: its zig-linked build for an explicit target shares no
# artifact with the others anyway, and apart it never waits for their lock, so `make test`
# builds it beside test-rust (scripts/run-steps.py, `test-rust+test-wheel-build+…`).
WHEEL_TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))/wheel-build
SDIST_DIR := target/sdist

sdist: deps-python ## The Python source distribution users build from, into target/sdist
	rm -rf $(SDIST_DIR)
	cd python && .venv/bin/maturin sdist -o ../$(SDIST_DIR)

# A wheel is built from the sdist (pip, maturin as its backend), so one build both yields the
# wheel and proves the sdist complete: what pip does on a machine no wheel fits. (Not
# `--locked`: maturin prunes the sdist's workspace, and with it entries of its Cargo.lock.)
# maturin links with zig (`--zig`, the `ziglang` package on PATH as `python -m ziglang`) against
# glibc 2.17 and refuses to tag the wheel manylinux2014 if the extension needs anything newer.
$(RELEASE_WHEEL) $(TEST_WHEEL): $(WHEEL_SOURCES) $(PY_WHEEL_STAMP)
	rm -rf $(@D)
	cd python && .venv/bin/maturin sdist -o $(abspath $(@D))/sdist
	PATH="$(abspath $(PY_VENV))/bin:$$PATH" CARGO_TARGET_DIR=$(WHEEL_TARGET_DIR) \
	  MATURIN_PEP517_ARGS="--profile $(WHEEL_PROFILE) --strip --zig --compatibility manylinux2014 --target x86_64-unknown-linux-gnu" \
	  $(PY) -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
	  -w $(@D) $(@D)/sdist/redlock_rs-*.tar.gz
	@ls -l $(@D)/redlock_rs-*.whl
	@touch $@

wheel: $(RELEASE_WHEEL) ## abi3 wheel for CPython >= 3.9 on manylinux2014 (glibc 2.17) x86_64, built from the sdist, into target/wheels

test-wheel-build: $(TEST_WHEEL) ## The wheel test-wheel checks and `make test` tests with (dev profile), into target/test-wheel

test-wheel: deps-redis $(TEST_WHEEL) masters-bin ## Install the test wheel into a fresh virtualenv without Rust on PATH; round trip on 5 local masters
	cd python/tests && ../.venv/bin/python wheel_check.py $(abspath $(TEST_WHEEL:/.built=))

DEPS_TARGETS += deps-python
TEST_TARGETS += test-python test-wheel

test-python-check: ## The Python part of `make check`: test-python (PYTEST_WORKERS processes)
	@$(MAKE) --no-print-directory test-python
