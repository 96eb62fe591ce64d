# The production recipe in deploy/: the alerting rules for the library's metrics pass
# `promtool check rules` and their unit tests (`promtool test rules`: each rule firing and
# staying silent). promtool ships in Debian's `prometheus` package.

.PHONY: deps-promtool test-alerts

deps-promtool: ## Install promtool (Debian's prometheus package) if missing
	@command -v promtool >/dev/null || bash scripts/install-report-tools.sh prometheus

test-alerts: deps-promtool ## Alerting rules in deploy/prometheus: promtool check and unit tests
	promtool check rules deploy/prometheus/redlock-alerts.yml
	cd deploy/prometheus && promtool test rules redlock-alerts.test.yml

DEPS_TARGETS += deps-promtool
TEST_TARGETS += test-alerts
