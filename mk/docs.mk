# The book (mdBook, docs/): `make docs` builds it into docs/book and checks its links.
# Its code examples are files that other targets compile or run (core/examples, ffi/examples,
# python/examples), included by path.

.PHONY: docs deps-docs

# Pinned, and built without the server, watcher and search (a quicker install).
MDBOOK_VERSION := 0.4.52

deps-docs: ## Install mdBook (cargo install, pinned) if missing
	@command -v mdbook >/dev/null || $(CARGO) install mdbook --version $(MDBOOK_VERSION) --locked --no-default-features

docs: deps-docs ## Build the book into docs/book and check its links (none may leave the repository)
	mdbook build docs
	python3 scripts/check-book.py .

TEST_TARGETS += docs
