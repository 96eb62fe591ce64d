# redlock-loadgen targets (issue 5). `make run` runs the load generator's default.

RUN_TARGET := loadgen-run
LOADGEN := $(CARGO) run --release --locked -q -p redlock-loadgen --

.PHONY: loadgen-run loadgen-sweep

loadgen-run: deps-redis ## Load generator default: 5 local masters, sequential vs concurrent fan-out side by side
	$(LOADGEN)

loadgen-sweep: deps-redis ## Load generator capacity table: sweep --clients 1,4,16,64 on one resource, both modes
	$(LOADGEN) sweep --clients 1,4,16,64
