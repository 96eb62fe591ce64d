# Observability (docs/src/observability.md): `make test` lints and tests the core's `otel` feature in
# its one workspace pass (WORKSPACE_FEATURES, in the Makefile); this target does only that.

.PHONY: test-otel

test-otel: deps-redis ## The `otel` feature: clippy, and metrics collected by the OpenTelemetry SDK from real masters
	$(CARGO) clippy -p redlock-core -p redlock-bench --all-targets --features redlock-core/otel,redlock-bench/otel --locked -- -D warnings
	$(CARGO) test -p redlock-core --features otel --locked --test otel --test core -- otel spans::

# `make test` lints and tests the `otel` feature in its one workspace pass (WORKSPACE_FEATURES).
