# Redis 8.6.3 masters (docs/src/servers.md): the server with `DELEX … IFEQ` and `SET … IFEQ`,
# the third first-class server beside Debian's Redis 7.0 (scripts) and Valkey 9.1.2
# (`DELIFEQ`). `make deps-redis8` fetches Debian experimental's `redis-server 5:8.6.3-1` and
# sid's runtime with a private apt sources list (the system's apt configuration stays as it
# is) into target/tools/redis-8.6.3, and records a wrapper that runs it through sid's loader
# as target/tools/redis8-server, which redlock-local finds by itself (`--server redis8`;
# REDIS8_SERVER overrides it). Cached: run again, it checks the version and returns.

.PHONY: deps-redis8

REDIS8_TOOLS := $(CURDIR)/target/tools
REDIS8_LINK := $(REDIS8_TOOLS)/redis8-server

DEPS_TARGETS += deps-redis8

deps-redis8: ## Install Redis 8.6.3 (Debian experimental, run through sid's loader) into target/tools
	@bash scripts/install-redis8.sh $(REDIS8_TOOLS)
