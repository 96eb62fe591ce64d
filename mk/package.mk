# Publishable packages: the crate users install from crates.io and the Python source
# distribution both build and install from what they would ship.

.PHONY: package-check package-check-crate package-check-sdist

package-check: package-check-crate package-check-sdist ## cargo publish --dry-run of redlock-resp and redlock-core; the Python sdist has what it must and builds the test wheel

package-check-crate:
	$(CARGO) publish --dry-run --locked --allow-dirty -p redlock-resp -p redlock-core

# The sdist is proven by the test wheel, which pip builds from it (mk/python.mk) and test-wheel
# installs into a fresh virtualenv without Rust; here its top level must carry the licenses,
# the lock file and the metadata.
package-check-sdist: $(TEST_WHEEL)
	@set -e; sdist=$$(ls $(TEST_WHEEL:/.built=)/sdist/redlock_rs-*.tar.gz); files=$$(tar tzf $$sdist); \
	for f in LICENSE-MIT LICENSE-APACHE Cargo.lock PKG-INFO pyproject.toml README.md; do \
	  echo "$$files" | grep -qx "redlock_rs-[^/]*/$$f" || { echo "package-check-sdist: $$sdist has no $$f" >&2; exit 1; }; \
	done; echo "sdist: $$sdist carries its licenses, Cargo.lock and metadata, and built the test wheel"

TEST_TARGETS += package-check
