# redlock-loadgen targets. `make run` runs the load generator's default.

RUN_TARGET := loadgen-run
LOADGEN_BIN := $(or $(CARGO_TARGET_DIR),target)/release/redlock-loadgen
LOADGEN := $(LOADGEN_BIN)

.PHONY: loadgen-build loadgen-run loadgen-sweep loadgen-capacity loadgen-pacing loadgen-install

loadgen-build: deps-rust
	@test -x $(LOADGEN_BIN) || echo "Building redlock-loadgen in release mode: the first build compiles every dependency and takes a few minutes (later builds take seconds)." >&2
	$(CARGO) build --release --locked -p redlock-loadgen

loadgen-run: deps-redis loadgen-build ## Load generator default: 5 local masters, sequential vs concurrent fan-out side by side (+ report.html)
	$(LOADGEN) --html report.html
	@echo "HTML report: $(CURDIR)/report.html"

loadgen-sweep: deps-redis loadgen-build ## Contention table: sweep --clients 1,4,16,64 on one resource, both modes (about 1 minute)
	$(LOADGEN) sweep --clients 1,4,16,64

loadgen-capacity: deps-redis loadgen-build ## Capacity: highest open-loop acquire rate within p99<10ms per fan-out (at most ~2 minutes)
	$(LOADGEN) capacity

loadgen-pacing: deps-redis loadgen-build ## Pacing benchmark: start lag at 20,000 starts/s, acquire - attempt p50 at 2,000/s (about 30 s)
	$(LOADGEN) run --fanout concurrent --rate 20000 --clients 256 --resources 10000 --duration 10s --percentiles 50,90,99,99.9
	$(LOADGEN) run --fanout concurrent --rate 2000 --resources 1000 --duration 10s

loadgen-install: deps-rust ## Install redlock-loadgen into ~/.cargo/bin (cargo install --path loadgen)
	$(CARGO) install --locked --path loadgen
