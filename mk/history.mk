# The independent history checker (loadgen/history-check): a small Go program on Porcupine,
# pinned in its go.mod, that judges load generator histories apart from the load generator's
# own checker (docs/src/faults-and-safety.md).

.PHONY: deps-go deps-faketime history-check test-history-check test-history-agreement

GO ?= go
GOFMT ?= gofmt
HISTORY_CHECK_BIN := $(or $(CARGO_TARGET_DIR),target)/tools/history-check

deps-go: ## Install the Go toolchain (the distribution's golang-go) if missing
	@command -v $(GO) >/dev/null || { \
	  echo "installing Go (golang-go)"; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq golang-go; }

# Clock faults (`--fault clock:...`) run masters under Debian's libfaketime.
deps-faketime: ## Install libfaketime (the distribution's package) if missing
	@ls /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 2>/dev/null | grep -q . || { \
	  echo "installing libfaketime"; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq libfaketime; }

history-check: deps-go ## Build the independent history checker into target/tools/history-check
	cd loadgen/history-check && $(GO) build -o $(abspath $(HISTORY_CHECK_BIN)) .

# The timeline test renders a page with a hostile key in headless Chromium (deps-chromium,
# mk/reports.mk); HISTORY_CHECK_BROWSER makes a missing browser a failure, not a skip.
test-history-check: deps-go deps-chromium ## Vet and test the history checker (legal, overlapping, expired, stale-write and planted histories; pieces against whole; the timeline in Chromium)
	cd loadgen/history-check && unformatted="$$($(GOFMT) -l .)" && \
	  { [ -z "$$unformatted" ] || { echo "gofmt -l: $$unformatted"; exit 1; }; }
	cd loadgen/history-check && $(GO) vet ./... && HISTORY_CHECK_BROWSER=1 $(GO) test -count=1 ./...

# The whole fault matrix, run once in concurrent fan-out, its histories checked by both checkers
# (loadgen/tests/history_agreement.rs, about 2 min 15 s on a busy 2-core machine), runs with the other Rust tests in `make test-rust`,
# which builds the checker first and names it in HISTORY_CHECK; this target runs them alone.
test-history-agreement: history-check deps-valkey deps-faketime deps-redis ## Own checker and Porcupine agree on the fault matrix's histories
	HISTORY_CHECK=$(abspath $(HISTORY_CHECK_BIN)) $(CARGO) test --locked --workspace $(WORKSPACE_FEATURES) \
	  --test loadgen -- history_agreement::

DEPS_TARGETS += deps-go deps-faketime
TEST_TARGETS += test-history-check
