# Python extension redlock_rs (crate redlock-python, python/). See docs/src/python.md.
#
# A virtualenv in python/.venv holds the pinned tools of python/requirements-dev.txt; the
# extension is built into it with maturin (debug for tests, release for the benchmark).

.PHONY: deps-python python-develop masters-bin test-python test-python-check bench-python deps-wheel wheel test-wheel test-wheel-build

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
# Where `make wheel` puts the wheel, and its stamp for the zig toolchain.
WHEEL_DIR := target/wheels
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

# The extension's debug builds (here and the sdist check, mk/package.mk) share a target
# directory of their own: apart from the tests' builds they never wait for their lock, so
# `make test` runs them beside test-rust, and they reuse each other's dependencies.
PY_TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))/python-build

python-develop: deps-python ## Build redlock_rs (debug) and install it into python/.venv
	cd python && VIRTUAL_ENV=$(abspath $(PY_VENV)) CARGO_TARGET_DIR=$(PY_TARGET_DIR) .venv/bin/maturin develop -q --locked

masters-bin: ## Build redlock-masters, which starts the Python tests' local masters (REDLOCK_MASTERS_BIN)
	$(CARGO) build --locked -q --workspace $(WORKSPACE_FEATURES) --bin redlock-masters

test-python: deps-redis python-develop masters-bin ## pytest suite (warnings as errors, per-test timeout), stubtest of the .pyi, mypy --strict
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

# The cargo profile of the wheel: release for `make wheel`; `make test-wheel` checks a wheel of
# the dev profile, built the same way (zig, manylinux2014 tag, abi3): what it checks (the tag,
# an install without Rust, a round trip) does not depend on the profile, and a release build of
# the whole dependency tree would be the slowest step of `make test`.
WHEEL_PROFILE ?= release
test-wheel test-wheel-build: WHEEL_PROFILE = dev
# The wheel's own target directory: its zig-linked build for an explicit target shares no
# artifact with the others anyway, and apart it never waits for their lock, so `make test`
# builds it beside test-rust (scripts/run-steps.py, `test-rust+test-wheel-build+…`).
WHEEL_TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))/wheel-build

# maturin links with zig (`--zig`, the `ziglang` package on PATH as `python -m ziglang`) against
# glibc 2.17 and refuses to tag the wheel manylinux2014 if the extension needs anything newer.
wheel: deps-wheel ## abi3 wheel for CPython >= 3.9 on manylinux2014 (glibc 2.17) x86_64, into target/wheels
	rm -f $(WHEEL_DIR)/redlock_rs-*.whl
	cd python && PATH="$(abspath $(PY_VENV))/bin:$$PATH" CARGO_TARGET_DIR=$(WHEEL_TARGET_DIR) .venv/bin/maturin build --profile $(WHEEL_PROFILE) --locked \
	  --strip --zig --compatibility manylinux2014 --target x86_64-unknown-linux-gnu --out $(abspath $(WHEEL_DIR))
	@ls -l $(WHEEL_DIR)/redlock_rs-*.whl

test-wheel-build: wheel ## The wheel test-wheel checks (dev profile), built on its own

test-wheel: deps-redis wheel masters-bin ## Install the wheel into a fresh virtualenv without Rust on PATH; round trip on 5 local masters
	cd python/tests && ../.venv/bin/python wheel_check.py $(abspath $(WHEEL_DIR))

DEPS_TARGETS += deps-python
TEST_TARGETS += test-python test-wheel

test-python-check: ## The Python part of `make check`: test-python (PYTEST_WORKERS processes)
	@$(MAKE) --no-print-directory test-python
