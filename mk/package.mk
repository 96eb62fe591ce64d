# Publishable packages: the crate users install from crates.io and the Python source
# distribution both build and install from what they would ship.

.PHONY: package-check package-check-crate package-check-sdist

SDIST_DIR := target/sdist
SDIST_VENV := target/sdist-venv

package-check: package-check-crate package-check-sdist ## cargo publish --dry-run of redlock-resp and redlock-core; the Python sdist installs and imports in a fresh venv

package-check-crate:
	$(CARGO) publish --dry-run --locked --allow-dirty -p redlock-resp -p redlock-core

# The sdist is built (debug profile, sharing PY_TARGET_DIR with python-develop to stay quick)
# and installed by pip into a virtualenv of its own, with the maturin pinned for the tests.
package-check-sdist: deps-python
	rm -rf $(SDIST_DIR) $(SDIST_VENV)
	cd python && .venv/bin/maturin sdist -o ../$(SDIST_DIR)
	$(PYTHON) -m venv $(SDIST_VENV)
	$(SDIST_VENV)/bin/pip install -q --disable-pip-version-check $$(grep '^maturin==' python/requirements-dev.txt)
	PATH="$(abspath $(SDIST_VENV))/bin:$$PATH" CARGO_TARGET_DIR=$(PY_TARGET_DIR) \
	  MATURIN_PEP517_ARGS="--profile dev" \
	  $(SDIST_VENV)/bin/pip install -q --disable-pip-version-check --no-build-isolation $(SDIST_DIR)/redlock_rs-*.tar.gz
	cd /tmp && $(abspath $(SDIST_VENV))/bin/python -c \
	  'import redlock_rs; assert redlock_rs.DEFAULT_TTL > 0; print("sdist: redlock_rs imports from", redlock_rs.__file__)'

TEST_TARGETS += package-check
