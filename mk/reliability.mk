# Fault scenarios of the load generator (loadgen/src/faults): the reliability matrix.
#
# Every row is a bounded `redlock-loadgen run` on 5 fresh local masters with a fault schedule
# (see `redlock-loadgen scenarios --list`); negative controls must be detected. The whole
# matrix runs once in `make test`, concurrent fan-out, with both history checkers
# (loadgen/tests/history_agreement.rs); `run --fault` itself is tested in loadgen/tests/faults.rs.

.PHONY: reliability reliability-list

# Extra `scenarios` flags, e.g. RELIABILITY_ARGS='--fanout concurrent --json reliability.json'.
RELIABILITY_ARGS ?=

reliability: deps-rust deps-redis deps-valkey deps-faketime ## The fault matrix, both fan-out modes, the baselines' rows once (release, ~4 min): one table ending "N passed, N failed"
	$(CARGO) run --release --locked -q -p redlock-loadgen -- scenarios $(RELIABILITY_ARGS)

reliability-list: deps-rust ## Print the `redlock-loadgen run` command line of every reliability row
	$(CARGO) run --release --locked -q -p redlock-loadgen -- scenarios --list $(RELIABILITY_ARGS)
