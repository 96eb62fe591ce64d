# Criterion benchmarks (crate redlock-bench, bench/). Results: docs/src/benchmarks.md.
#
# Measurement runs are long and CPU-bound: run them on an otherwise idle machine.

.PHONY: bench bench-quick bench-runs bench-report test-bench

BENCH_CARGO := $(CARGO) bench --locked -p redlock-bench
# Number of full runs `make bench-runs` makes (the benchmarks page quotes the median of runs).
RUNS ?= 3
# Extra criterion arguments of `make bench` and `make bench-runs` (e.g. --measurement-time 3).
BENCH_ARGS ?=
# Criterion arguments of `make bench-quick`: short warm-up and measurement, few samples.
BENCH_QUICK_ARGS ?= --warm-up-time 0.5 --measurement-time 1 --sample-size 10

bench: deps-redis ## Run every criterion benchmark (several minutes; BENCH_FILTER=regex to pick some)
	$(BENCH_CARGO) -- $(BENCH_ARGS) $(BENCH_FILTER)

bench-quick: deps-redis ## A short pass over every benchmark (rough figures, a few minutes)
	$(BENCH_CARGO) -- $(BENCH_QUICK_ARGS) $(BENCH_FILTER)

bench-runs: deps-redis ## RUNS full runs saved as criterion baselines run1..runN, then their report
	@uptime
	@for i in $$(seq 1 $(RUNS)); do \
	  echo "== run $$i of $(RUNS): $$(date -u +%FT%TZ), load: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  $(BENCH_CARGO) -- --save-baseline run$$i $(BENCH_ARGS) $(BENCH_FILTER) || exit 1; \
	done
	@uptime
	$(CARGO) run --locked -q -p redlock-bench --bin bench-report -- \
	  $$(for i in $$(seq 1 $(RUNS)); do echo --baseline run$$i; done)

bench-report: ## Print the results and ratios tables of the latest benchmark run (Markdown)
	$(CARGO) run --locked -q -p redlock-bench --bin bench-report

test-bench: deps-redis ## Build every benchmark and run each once (criterion test mode; no timings)
	$(CARGO) test --locked --workspace $(WORKSPACE_FEATURES) --bench '*'

TEST_TARGETS += test-bench

# ---------------------------------------------------------------------------------------
# `make bench-peers`: this project's Rust (async, blocking), C and Python (threads, asyncio)
# surfaces and the peers rslock, the `redlock` crate, aioredlock and pottery, side by side on
# the same masters (docs/src/benchmarks.md, "Peers, side by side"). bench/peers/build.sh builds
# every driver (release) and the benchmark-only virtualenv bench/peers/.venv; a peer that
# does not build or install is reported as skipped. RUNS (above) full runs, fresh masters each.

.PHONY: bench-peers bench-peers-build bench-peers-smoke

# Run lengths (the issue's workloads by default).
PEERS_W1_CYCLES ?= 2000
PEERS_W2_CYCLES ?= 500
PEERS_TASKS ?= 16
PEERS_W3_SECONDS ?= 10
PEERS_MASTERS ?= 5
# Comma-separated redis:// URLs of masters to measure against instead of starting
# PEERS_MASTERS local ones (e.g. on other hosts, so that they do not share the client's cores).
# They must hold no key: the harness deletes every key on them between drivers.
PEERS_MASTER_URLS ?=
# Comma-separated driver names to run (default: all); e.g. PEERS_DRIVERS=rust-async,rslock.
PEERS_DRIVERS ?=
# Extra arguments of the harness (target/release/bench-peers --help).
PEERS_ARGS ?=
PEERS_RUN = target/release/bench-peers --tasks $(PEERS_TASKS) \
  $(if $(PEERS_MASTER_URLS),--master-urls $(PEERS_MASTER_URLS),--masters $(PEERS_MASTERS)) \
  $(if $(PEERS_DRIVERS),--drivers $(PEERS_DRIVERS)) $(PEERS_ARGS)

bench-peers-build: deps-redis deps-ffi
	CARGO=$(CARGO) PYTHON=$(PYTHON) bash bench/peers/build.sh

bench-peers: bench-peers-build ## This project vs rslock, redlock, aioredlock, pottery: W1/W2/W3, medians of RUNS runs
	@uptime
	$(PEERS_RUN) --runs $(RUNS) --w1-cycles $(PEERS_W1_CYCLES) --w2-cycles $(PEERS_W2_CYCLES) \
	  --w3-seconds $(PEERS_W3_SECONDS)

bench-peers-smoke: bench-peers-build ## One short run of every driver (fails if one of this project's drivers fails)
	$(PEERS_RUN) --runs 1 --w1-cycles 50 --w2-cycles 20 --w3-seconds 1 --strict \
	  --json-out target/bench-peers/smoke.json
