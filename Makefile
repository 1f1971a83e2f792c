# The two commands a fresh machine needs: `make run` and `make test`.
SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.install-stamp

.PHONY: run test build bench soak spec-coverage lint services clean

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

build: $(NODE_MODULES_STAMP)
	rm -rf dist
	npx tsc -p tsconfig.json

# A young generation of up to 64 MiB a semi-space: an ingest batch's objects live until its
# commit (tens of ms), and with the default 16 MiB they were promoted and collected again in
# the old generation (8% more ingest throughput measured; the bench starts it the same way).
NODE_FLAGS := --max-semi-space-size=64

run: build
	node $(NODE_FLAGS) dist/core/main.js

# PostgreSQL and Redis are needed by the database and scale-out tests.
services:
	@bash test/tools/services.sh

test: build services
	npx mocha "dist/test/**/*.test.js"

bench: build
	node dist/test/bench/run.js

# A steady mixed load for SOAK_SECONDS (default 600) with heap and RSS each minute and their
# trend after warm-up; not part of `make test`.
soak: build
	node dist/test/bench/soak.js

spec-coverage: build
	@node dist/test/tools/spec-coverage.js

lint: $(NODE_MODULES_STAMP)
	npx tsc -p tsconfig.json --noEmit

clean:
	rm -rf dist node_modules
