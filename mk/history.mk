# The independent history checker (loadgen/history-check): a small Go program on Porcupine,
# pinned in its go.mod, that judges load generator histories apart from the load generator's
# own checker (docs/src/faults-and-safety.md).

.PHONY: deps-go history-check test-history-check

GO ?= go
HISTORY_CHECK_BIN := $(or $(CARGO_TARGET_DIR),target)/tools/history-check

deps-go: ## Install the Go toolchain (the distribution's golang-go) if missing
	@command -v $(GO) >/dev/null || { \
	  echo "installing Go (golang-go)"; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq golang-go; }

history-check: deps-go ## Build the independent history checker into target/tools/history-check
	cd loadgen/history-check && $(GO) build -o $(abspath $(HISTORY_CHECK_BIN)) .

test-history-check: deps-go ## Vet and test the history checker (legal, overlapping, expired and stale-write histories)
	cd loadgen/history-check && $(GO) vet ./... && $(GO) test -count=1 ./...

DEPS_TARGETS += deps-go
TEST_TARGETS += test-history-check
