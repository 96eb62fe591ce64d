# Redlock Suite — the one command surface. `make help` lists the targets.
#
# Each surface adds its own targets in mk/<surface>.mk and appends to TEST_TARGETS, so
# `make test` runs everything in a fixed order: deps → lint → Rust tests → surface tests.

SHELL := /bin/bash
.DEFAULT_GOAL := help
CARGO ?= cargo
# Extra flags for `cargo test --workspace`.
CARGO_TEST_FLAGS ?=
# The one feature set every workspace build of the suite uses (clippy, tests, benchmarks in
# test mode, the Valkey reruns): cargo unifies features over the packages and targets it
# builds, so a command with another selection (`-p CRATE`) rebuilds half the dependency tree
# under other hashes. The C suite needs the test-only panic trigger in libredlock.so; the
# core's OpenTelemetry metrics (`otel`) are linted and tested in the same pass.
WORKSPACE_FEATURES := --features redlock-ffi/test-hooks,redlock-core/otel,redlock-bench/otel
# Surface test targets, appended by mk/*.mk, run after the Rust tests.
TEST_TARGETS :=
# Targets `make deps` runs, appended by mk/*.mk (e.g. a Python virtualenv).
DEPS_TARGETS :=

-include mk/*.mk

.PHONY: help deps deps-redis deps-rust lint fmt fmt-check clippy doc import-cycles layers test-scripts test test-build test-rust run demo clean \
  check deps-check test-rust-check

help: ## List the targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sort -u | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  make %-16s %s\n", $$1, $$2}'

deps: deps-rust deps-redis $(DEPS_TARGETS) ## Install what is missing (redis-server, toolchain parts)

deps-rust:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 1; }
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy

deps-redis: ## Install redis-server (and openssl) from the distribution if missing
	@command -v redis-server >/dev/null && command -v openssl >/dev/null || bash scripts/install-redis.sh

fmt: ## Format the Rust code
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked $(WORKSPACE_FEATURES) -- -D warnings

doc: ## API docs of every crate; rustdoc warnings (broken links, bad markup) are errors
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --locked

import-cycles: ## No module of any crate imports, directly or through others, a module that imports it back
	python3 scripts/check-import-cycles.py

layers: ## No module imports one of a layer above its own (loadgen, core; docs/src/architecture.md)
	python3 scripts/check-layers.py

test-scripts: ## The gates' and the step runner's own tests (planted imports, planted failures)
	python3 -m unittest -q scripts/test_check_layers.py scripts/test_run_steps.py

lint: fmt-check clippy doc import-cycles layers test-scripts ## rustfmt, clippy (incl. undocumented unsafe, dbg!, MSRV), rustdoc, import-cycle and layer gates, their tests

test-rust: deps-redis deps-ffi deps-valkey deps-redis8 deps-faketime history-check ## Rust unit, integration and doc tests against real local masters (the C/C++ suite included, under FFI_CHECK)
	REDLOCK_FFI_CHECK=$(FFI_CHECK) HISTORY_CHECK=$(abspath $(HISTORY_CHECK_BIN)) \
	  $(CARGO) test --workspace --locked --no-fail-fast $(WORKSPACE_FEATURES) $(CARGO_TEST_FLAGS)

test-build: ## Build what test-rust runs, without running it
	$(CARGO) test --workspace --locked --no-run $(WORKSPACE_FEATURES)

# The steps of `make test`, in order; scripts/run-steps.py runs each as `make STEP`, goes on
# after a failure and closes with every step's time and every failure it found.
# `A+B+C` runs B then C beside A. Once the tests are built, the Rust tests spend much of their
# time waiting on timers and masters; beside them, one after another: the test wheel's build
# (a target directory of its own, so neither waits for the other's lock) and its install into
# python/.venv, the package checks, and the suites that need no further build of target/ (the
# Python tests on that wheel, the wheel's check, the Valkey rerun). Not test-ffi-install: it
# rebuilds target/debug/libredlock.so without the test hooks the C suite loads.
# The extension is built once, not also by python-develop (PY_EXTENSION).
BESIDE_RUST_TESTS := test-wheel-build python-wheel-install package-check test-python test-wheel \
  test-valkey
TEST_STEPS = deps lint test-build test-rust$(subst $(eval) ,,$(addprefix +,$(BESIDE_RUST_TESTS))) \
  $(filter-out $(BESIDE_RUST_TESTS),$(TEST_TARGETS))

test: export PY_EXTENSION = python-wheel-install

test: ## Install what is missing, then run every gate and test (every step runs; times and failures at the end)
	@python3 scripts/run-steps.py --make "$(MAKE)" --tier test -- $(TEST_STEPS)

# `make check`: what a contributor runs on every change, in minutes with a warm target
# directory. It leaves to `make test` what needs more than Redis or takes minutes: the fault
# matrix and its checkers, the other two servers, the browser, Prometheus, the statistical
# rounds, the doc tests, the C suite's memory check, Valkey reruns, the wheel, the packages and
# the book. Skipped by module path in the test binaries (libtest's `--skip`, a substring).
CHECK_STEPS = deps-check fmt-check clippy test-rust-check test-python-check
CHECK_SKIP_CORE := native_commands:: prometheus_exporter::
CHECK_SKIP_LOADGEN := faults:: history_agreement:: uncertainty:: reports:: html_escaping:: \
  prometheus:: capacity::a_search_cut_short_states_its_bracket

check: ## The fast tier for every change: format, clippy, unit and integration tests on Redis, Python (times at the end)
	@python3 scripts/run-steps.py --make "$(MAKE)" --tier check -- $(CHECK_STEPS)

deps-check: deps-rust deps-redis deps-ffi deps-python deps-faketime deps-valkey

test-rust-check: deps-check ## The Rust part of `make check`: unit tests and the integration tests on Redis
	@failed=0; set -x; \
	$(CARGO) test --workspace --locked --no-fail-fast $(WORKSPACE_FEATURES) --lib --bins \
	  --test core --test otel --test hostile --test paused_client --test local --test c_abi --test header --test roundtrip \
	  -- $(addprefix --skip ,$(CHECK_SKIP_CORE)) || failed=1; \
	$(CARGO) test --workspace --locked --no-fail-fast $(WORKSPACE_FEATURES) --test loadgen \
	  -- $(addprefix --skip ,$(CHECK_SKIP_LOADGEN)) || failed=1; \
	exit $$failed

demo: deps-redis ## Acquire and release a lock on 5 local masters in both fan-out modes
	$(CARGO) run --release --locked -q -p redlock-core --example demo

RUN_TARGET ?= demo
run: deps-rust deps-redis $(RUN_TARGET) ## The main job: the load generator's default workload on 5 local masters

clean: ## Remove build outputs
	$(CARGO) clean
