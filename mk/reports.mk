# Tools the load generator's tests use: headless Chromium renders the --html reports,
# HdrHistogram's own HistogramLogProcessor (Java) reads the --hlog files back, a Prometheus
# server scrapes a `run --prometheus` (loadgen/tests/prometheus.rs). The same server scrapes a
# service using the lock in the library dashboard's tests (core/tests/prometheus_exporter.rs in
# the workspace pass, python/tests/test_dashboard.py), so both test targets install it first.

HDRHISTOGRAM_VERSION := 2.2.2
HDRHISTOGRAM_JAR ?= $(HOME)/.m2/repository/org/hdrhistogram/HdrHistogram/$(HDRHISTOGRAM_VERSION)/HdrHistogram-$(HDRHISTOGRAM_VERSION).jar
export HDRHISTOGRAM_JAR

DEPS_TARGETS += deps-chromium deps-hdrhistogram deps-prometheus

.PHONY: deps-chromium deps-hdrhistogram deps-prometheus

deps-chromium: ## Install headless Chromium (checks the loadgen's HTML reports) if missing
	@command -v chromium >/dev/null || bash scripts/install-report-tools.sh chromium

deps-hdrhistogram: ## Install Java, Maven and HdrHistogram's jar (reads the loadgen's --hlog files) if missing
	@test -f $(HDRHISTOGRAM_JAR) && command -v java >/dev/null || bash scripts/install-report-tools.sh hdrhistogram $(HDRHISTOGRAM_VERSION)

deps-prometheus: ## Install the Prometheus server (scrapes a run --prometheus and the dashboard tests' services) if missing
	@command -v prometheus >/dev/null || bash scripts/install-report-tools.sh prometheus

test-rust test-python: deps-prometheus
