# Local masters for users (crate redlock-local): `redlock-masters` starts real redis-server
# (or valkey-server, `--server valkey`) masters on free loopback ports and prints their URLs
# (docs/src/local-masters.md).

.PHONY: masters

masters: deps-redis ## Build redlock-masters (target/debug/redlock-masters): local redis-server masters (or valkey-server: --server valkey, after make deps-valkey) to try redlock with (docs/src/local-masters.md)
	$(CARGO) build --locked -q -p redlock-local --bin redlock-masters
	@echo "built $(abspath $(or $(CARGO_TARGET_DIR),target))/debug/redlock-masters; try: $(or $(CARGO_TARGET_DIR),target)/debug/redlock-masters --until-signal > urls.txt &"
