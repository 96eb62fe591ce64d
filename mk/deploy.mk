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

# The Kubernetes manifests (deploy/kubernetes) against a real API server of the release pinned
# in deploy/test-cluster/go.mod: etcd, kube-apiserver and kube-controller-manager on loopback,
# server-side dry runs with strict field validation, broken copies refused, the Job's indexed
# pods checked (deploy/test-cluster/run.py). Not part of `make test`: the first run builds the
# three programs (minutes); later runs reuse them. BROKEN=1 misspells a field of the Job's copy
# to watch the check fail.
K8S_VERSION := $(shell sed -n 's|^require k8s.io/kubernetes \(v[0-9.]*\)$$|\1|p' deploy/test-cluster/go.mod)
K8S_TOOLS := $(or $(CARGO_TARGET_DIR),target)/tools/kubernetes-$(K8S_VERSION)

.PHONY: deps-etcd k8s-tools test-deploy

deps-etcd: ## Install etcd (Debian's etcd-server) and openssl if missing
	@command -v etcd >/dev/null && command -v openssl >/dev/null || { \
	  echo "installing etcd-server and openssl"; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq etcd-server openssl; }

k8s-tools: deps-go ## Build kube-apiserver, kube-controller-manager and kubectl (the release in deploy/test-cluster/go.mod) once into target/tools
	GO=$(GO) bash deploy/test-cluster/build.sh $(K8S_TOOLS)

test-deploy: k8s-tools deps-etcd ## The Kubernetes manifests on a real API server (loopback; Job pods, strict validation)
	python3 deploy/test-cluster/run.py --tools $(K8S_TOOLS) --version $(K8S_VERSION) \
	  --manifests deploy/kubernetes --logs $(or $(CARGO_TARGET_DIR),target)/test-deploy$(if $(BROKEN), --broken)
