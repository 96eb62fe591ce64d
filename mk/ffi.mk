# C ABI (ffi/): libredlock, redlock.h, redlock.hpp. Targets: header, test-ffi, install.
#
# The C/C++ suite needs the test-only panic trigger (`--features test-hooks`) in
# libredlock.so, so the ffi crate is tested here, in its own target directory (a build without
# the feature elsewhere in the workspace can then never swap the library under the tests),
# and excluded from `cargo test --workspace`.

FFI_TEST_TARGET_DIR ?= $(CURDIR)/target/ffi-tests
# asan (programs built with ASan + UBSan, LeakSanitizer on) or valgrind (memcheck; slower).
FFI_CHECK ?= asan
PREFIX ?= /usr/local
FFI_VERSION = $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
# What a program linking libredlock.a statically also needs (`--print native-static-libs`).
FFI_NATIVE_STATIC_LIBS = -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
FFI_CFLAGS = -Wall -Wextra -Werror -pedantic

CARGO_TEST_FLAGS += --exclude redlock-ffi
TEST_TARGETS += test-ffi
DEPS_TARGETS += deps-ffi

.PHONY: deps-ffi header test-ffi test-ffi-suite test-ffi-install install ffi-overhead

deps-ffi: ## Install the C/C++ toolchain, pkg-config and valgrind if missing
	@command -v cc >/dev/null && command -v c++ >/dev/null && command -v pkg-config >/dev/null \
	  && command -v valgrind >/dev/null || { \
	  echo "installing gcc, g++, pkg-config, valgrind"; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq gcc g++ pkg-config valgrind; }

header: ## Regenerate ffi/include/redlock.h with the pinned cbindgen (commit the result)
	REDLOCK_REGENERATE_HEADER=1 $(CARGO) test --locked -q -p redlock-ffi --test header

test-ffi: deps-ffi deps-redis test-ffi-suite test-ffi-install ## C ABI: header drift, Rust and C/C++ tests (+ memcheck), install
	@echo "test-ffi: all passed"

# Clippy for the test-only code, then every test of the crate (header drift check, unit tests,
# C/C++ suite), then the C/C++ suite again under $(FFI_CHECK).
test-ffi-suite: deps-ffi deps-redis
	CARGO_TARGET_DIR=$(FFI_TEST_TARGET_DIR) $(CARGO) clippy --locked -p redlock-ffi --all-targets --features test-hooks -- -D warnings
	CARGO_TARGET_DIR=$(FFI_TEST_TARGET_DIR) $(CARGO) build --locked -p redlock-ffi --features test-hooks
	CARGO_TARGET_DIR=$(FFI_TEST_TARGET_DIR) $(CARGO) test --locked -p redlock-ffi --features test-hooks
	REDLOCK_FFI_CHECK=$(FFI_CHECK) CARGO_TARGET_DIR=$(FFI_TEST_TARGET_DIR) \
	  $(CARGO) test --locked -p redlock-ffi --features test-hooks --test c_abi -- --nocapture 2>&1 \
	  | tee $(FFI_TEST_TARGET_DIR)/memcheck.log | grep -E "ERROR SUMMARY|^test |test result"; \
	  exit $${PIPESTATUS[0]}

# `make install` into a temporary prefix; basic.c and guard.cpp compiled there with
# pkg-config (shared and static) and run against 5 local masters. The runner is started
# directly, not by `cargo run` (which would put target/ first on LD_LIBRARY_PATH).
test-ffi-install: deps-ffi deps-redis
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(MAKE) --no-print-directory install PREFIX="$$tmp/prefix"; \
	export PKG_CONFIG_PATH="$$tmp/prefix/lib/pkgconfig"; \
	echo "pkg-config --cflags --libs redlock: $$(pkg-config --cflags --libs redlock)"; \
	cc -std=c11 $(FFI_CFLAGS) ffi/examples/basic.c $$(pkg-config --cflags --libs redlock) -o "$$tmp/basic"; \
	c++ -std=c++17 $(FFI_CFLAGS) ffi/examples/guard.cpp $$(pkg-config --cflags --libs redlock) -o "$$tmp/guard"; \
	cc -std=c11 $(FFI_CFLAGS) ffi/examples/basic.c $$(pkg-config --cflags redlock) \
	  "$$tmp/prefix/lib/libredlock.a" $$(pkg-config --static --libs-only-l redlock | sed 's/-lredlock//') \
	  -o "$$tmp/basic-static"; \
	$(CARGO) build --locked -q -p redlock-ffi --example with_masters; \
	with_masters="$${CARGO_TARGET_DIR:-target}/debug/examples/with_masters"; \
	export LD_LIBRARY_PATH="$$tmp/prefix/lib"; \
	ldd "$$tmp/basic" | grep -q "$$tmp/prefix/lib/libredlock.so" \
	  || { echo "basic does not load the installed libredlock.so:"; ldd "$$tmp/basic"; exit 1; }; \
	! ldd "$$tmp/basic-static" | grep -q libredlock \
	  || { echo "basic-static still needs libredlock.so"; exit 1; }; \
	for program in basic guard basic-static; do "$$with_masters" "$$tmp/$$program"; done; \
	echo "test-ffi-install: basic, guard and static basic built with pkg-config and ran"

install: ## Install libredlock (.so, .a), redlock.h, redlock.hpp and redlock.pc under PREFIX (default /usr/local)
	$(CARGO) build --locked --release -p redlock-ffi
	install -d "$(DESTDIR)$(PREFIX)/lib/pkgconfig" "$(DESTDIR)$(PREFIX)/include"
	install -m 755 target/release/libredlock.so "$(DESTDIR)$(PREFIX)/lib/libredlock.so"
	install -m 644 target/release/libredlock.a "$(DESTDIR)$(PREFIX)/lib/libredlock.a"
	install -m 644 ffi/include/redlock.h ffi/include/redlock.hpp "$(DESTDIR)$(PREFIX)/include/"
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(FFI_VERSION)|' \
	  -e 's|@NATIVE_STATIC_LIBS@|$(FFI_NATIVE_STATIC_LIBS)|' ffi/redlock.pc.in \
	  > "$(DESTDIR)$(PREFIX)/lib/pkgconfig/redlock.pc"
	@echo "installed libredlock $(FFI_VERSION) under $(DESTDIR)$(PREFIX)"

ffi-overhead: deps-redis ## Measure one acquire+release through the C ABI vs the Rust API (criterion, bench/benches/ffi.rs)
	$(CARGO) bench --locked -p redlock-bench --bench ffi -- $(BENCH_ARGS)
