# C ABI (ffi/): libredlock, redlock.h, redlock.hpp. Targets: header, test-ffi, install.
#
# The C/C++ suite (ffi/tests/c_abi.rs) needs the test-only panic trigger (`--features
# test-hooks`) in libredlock.so: it runs in `make test-rust` with the workspace's one feature
# set (WORKSPACE_FEATURES, in the Makefile), against the libredlock.so that cargo built for
# that very test run, and refuses a library without the trigger.
# asan (programs built with ASan + UBSan, LeakSanitizer on) or valgrind (memcheck; slower).
FFI_CHECK ?= asan
PREFIX ?= /usr/local
# The cargo profile `make install` builds. The install check uses the debug profile (dev): what
# it checks (SONAME, symlinks, pkg-config and CMake files, static and shared linking) is the
# same in both, and a release build of the whole dependency tree would double its time.
FFI_PROFILE ?= release
FFI_PROFILE_DIR = $(if $(filter dev,$(FFI_PROFILE)),debug,$(FFI_PROFILE))
FFI_BUILT = $(or $(CARGO_TARGET_DIR),target)/$(FFI_PROFILE_DIR)
FFI_VERSION = $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
# The SONAME's number (libredlock.so.$(FFI_ABI)), set in ffi/build.rs.
FFI_ABI = $(shell sed -n 's/^const ABI: u32 = \([0-9]*\);/\1/p' ffi/build.rs)
FFI_LIBDIR = $(DESTDIR)$(PREFIX)/lib
# What a program linking libredlock.a statically also needs (`--print native-static-libs`);
# the CMake package lists the same (pthread as Threads::Threads).
FFI_NATIVE_STATIC_LIBS = -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
FFI_CMAKE_STATIC_LIBS = $(subst $(space),;,$(patsubst -l%,%,$(filter-out -lpthread,$(FFI_NATIVE_STATIC_LIBS))))
space := $(empty) $(empty)
FFI_CFLAGS = -Wall -Wextra -Werror -pedantic

# `make test` runs the suite in test-rust; only the install check is left for here.
TEST_TARGETS += test-ffi-install
DEPS_TARGETS += deps-ffi

.PHONY: deps-ffi header test-ffi test-ffi-suite test-ffi-install install ffi-overhead

deps-ffi: ## Install the C/C++ toolchain, pkg-config, cmake and valgrind if missing
	@command -v cc >/dev/null && command -v c++ >/dev/null && command -v pkg-config >/dev/null \
	  && command -v cmake >/dev/null && command -v valgrind >/dev/null || { \
	  echo "installing gcc, g++, pkg-config, cmake, valgrind"; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq gcc g++ pkg-config cmake valgrind; }

header: ## Regenerate ffi/include/redlock.h with the pinned cbindgen (commit the result)
	REDLOCK_REGENERATE_HEADER=1 $(CARGO) test --locked -q -p redlock-ffi --test header

test-ffi: deps-ffi deps-redis test-ffi-suite test-ffi-install ## C ABI: header drift, Rust and C/C++ tests (+ memcheck), install
	@echo "test-ffi: all passed"

# Clippy for the test-only code, then every test of the crate (header drift check, unit tests,
# C/C++ suite), then the C/C++ suite again under $(FFI_CHECK).
test-ffi-suite: deps-ffi deps-redis
	REDLOCK_FFI_CHECK=$(FFI_CHECK) $(CARGO) test --locked --workspace $(WORKSPACE_FEATURES) \
	  --test c_abi --test header -- --nocapture 2>&1 \
	  | tee $(or $(CARGO_TARGET_DIR),target)/memcheck.log | grep -E "ERROR SUMMARY|^test |test result"; \
	  exit $${PIPESTATUS[0]}

test-ffi-install: deps-ffi deps-redis
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(MAKE) --no-print-directory install PREFIX="$$tmp/prefix" FFI_PROFILE=dev; \
	lib="$$tmp/prefix/lib"; \
	readelf -d "$$lib/libredlock.so.$(FFI_VERSION)" | grep -q "SONAME.*\[libredlock.so.$(FFI_ABI)\]" \
	  || { echo "libredlock.so.$(FFI_VERSION) has no SONAME libredlock.so.$(FFI_ABI)"; readelf -d "$$lib/libredlock.so.$(FFI_VERSION)"; exit 1; }; \
	[ "$$(readlink "$$lib/libredlock.so")" = libredlock.so.$(FFI_ABI) ] \
	  && [ "$$(readlink "$$lib/libredlock.so.$(FFI_ABI)")" = libredlock.so.$(FFI_VERSION) ] \
	  || { echo "missing versioned symlinks:"; ls -l "$$lib"; exit 1; }; \
	export PKG_CONFIG_PATH="$$lib/pkgconfig"; \
	echo "pkg-config --cflags --libs redlock: $$(pkg-config --cflags --libs redlock)"; \
	cc -std=c11 $(FFI_CFLAGS) ffi/examples/basic.c $$(pkg-config --cflags --libs redlock) -o "$$tmp/basic"; \
	c++ -std=c++17 $(FFI_CFLAGS) ffi/examples/guard.cpp $$(pkg-config --cflags --libs redlock) -o "$$tmp/guard"; \
	cc -std=c11 $(FFI_CFLAGS) ffi/examples/basic.c $$(pkg-config --cflags redlock) \
	  "$$lib/libredlock.a" $$(pkg-config --static --libs-only-l redlock | sed 's/-lredlock//') \
	  -o "$$tmp/basic-static"; \
	cmake -S ffi/examples/cmake -B "$$tmp/cmake" -DCMAKE_PREFIX_PATH="$$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null; \
	cmake --build "$$tmp/cmake" >/dev/null; \
	$(CARGO) build --locked -q --workspace $(WORKSPACE_FEATURES) --example with_masters; \
	with_masters="$${CARGO_TARGET_DIR:-target}/debug/examples/with_masters"; \
	"$$with_masters" --help | grep -q "^usage: with_masters PROGRAM" || { echo "with_masters --help printed no usage"; exit 1; }; \
	export LD_LIBRARY_PATH="$$lib"; \
	for program in "$$tmp/basic" "$$tmp/cmake/basic" "$$tmp/cmake/guard"; do \
	  readelf -d "$$program" | grep -q "NEEDED.*\[libredlock.so.$(FFI_ABI)\]" \
	    || { echo "$$program does not record libredlock.so.$(FFI_ABI):"; readelf -d "$$program"; exit 1; }; \
	  ldd "$$program" | grep -q "$$lib/libredlock.so.$(FFI_ABI)" \
	    || { echo "$$program does not load the installed libredlock:"; ldd "$$program"; exit 1; }; \
	done; \
	for program in "$$tmp/basic-static" "$$tmp/cmake/basic-static"; do \
	  ! ldd "$$program" | grep -q libredlock || { echo "$$program still needs libredlock.so"; exit 1; }; \
	done; \
	for program in basic guard basic-static cmake/basic cmake/guard cmake/basic-static; do \
	  "$$with_masters" "$$tmp/$$program" >/dev/null || { echo "$$program failed"; exit 1; }; \
	done; \
	echo "test-ffi-install: SONAME and symlinks; basic, guard, static basic built with pkg-config and with CMake (find_package(redlock)), all ran"
	@# The debug build without test-hooks wrote target/debug/deps/libredlock.so, where the C
	@# suite's own build (with the feature, still fresh to cargo) lives: drop the crate's
	@# artifacts so that the next suite run rebuilds it (seconds).
	$(CARGO) clean --locked -q -p redlock-ffi

install: ## Install libredlock (.so with SONAME and symlinks, .a), redlock.h, redlock.hpp, redlock.pc and the CMake package under PREFIX (default /usr/local)
	$(CARGO) build --locked --profile $(FFI_PROFILE) -p redlock-ffi
	install -d "$(FFI_LIBDIR)/pkgconfig" "$(FFI_LIBDIR)/cmake/redlock" "$(DESTDIR)$(PREFIX)/include"
	install -m 755 $(FFI_BUILT)/libredlock.so "$(FFI_LIBDIR)/libredlock.so.$(FFI_VERSION)"
	ln -sfn libredlock.so.$(FFI_VERSION) "$(FFI_LIBDIR)/libredlock.so.$(FFI_ABI)"
	ln -sfn libredlock.so.$(FFI_ABI) "$(FFI_LIBDIR)/libredlock.so"
	install -m 644 $(FFI_BUILT)/libredlock.a "$(FFI_LIBDIR)/libredlock.a"
	install -m 644 ffi/include/redlock.h ffi/include/redlock.hpp "$(DESTDIR)$(PREFIX)/include/"
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(FFI_VERSION)|' \
	  -e 's|@NATIVE_STATIC_LIBS@|$(FFI_NATIVE_STATIC_LIBS)|' ffi/redlock.pc.in \
	  > "$(FFI_LIBDIR)/pkgconfig/redlock.pc"
	for file in redlockConfig redlockConfigVersion; do \
	  sed -e 's|@VERSION@|$(FFI_VERSION)|g' -e 's|@ABI@|$(FFI_ABI)|g' \
	    -e 's|@VERSION_MAJOR@|$(word 1,$(subst ., ,$(FFI_VERSION)))|g' \
	    -e 's|@VERSION_MINOR@|$(word 2,$(subst ., ,$(FFI_VERSION)))|g' \
	    -e 's|@CMAKE_STATIC_LIBS@|$(FFI_CMAKE_STATIC_LIBS)|g' \
	    ffi/cmake/$$file.cmake.in > "$(FFI_LIBDIR)/cmake/redlock/$$file.cmake"; \
	done
	@echo "installed libredlock $(FFI_VERSION) (SONAME libredlock.so.$(FFI_ABI)) under $(DESTDIR)$(PREFIX)"

ffi-overhead: deps-redis ## Measure one acquire+release through the C ABI vs the Rust API (criterion, bench/benches/ffi.rs)
	$(CARGO) bench --locked -p redlock-bench --bench ffi -- $(BENCH_ARGS)
