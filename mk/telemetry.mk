# Observability (docs/src/observability.md): the core's `otel` feature is off in the workspace
# build, so its lint and its test against the OpenTelemetry SDK's in-memory exporter run here.

.PHONY: test-otel

test-otel: deps-redis ## The `otel` feature: clippy, and metrics collected by the OpenTelemetry SDK from real masters
	$(CARGO) clippy -p redlock-core -p redlock-bench --all-targets --features redlock-core/otel,redlock-bench/otel --locked -- -D warnings
	$(CARGO) test -p redlock-core --features otel --locked --test otel --test spans

TEST_TARGETS += test-otel
