# Criterion benchmarks (crate redlock-bench, bench/). See BENCHMARKS.md.
#
# Measurement runs are long and CPU-bound: run them on an otherwise idle machine.

.PHONY: bench bench-quick bench-runs bench-report test-bench

BENCH_CARGO := $(CARGO) bench --locked -p redlock-bench
# Number of full runs `make bench-runs` makes (BENCHMARKS.md quotes the median of runs).
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
	$(CARGO) test --locked -p redlock-bench --benches

TEST_TARGETS += test-bench
