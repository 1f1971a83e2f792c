# The two commands a fresh machine needs: `make run` and `make test`.
SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.install-stamp

.PHONY: run dev test test-node build bench soak spec-coverage lint services clean new-kernel new-plugin client screenshots

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

# The workspace packages first (the CLI and the tests import packages/client by name; bin/pcctl runs packages/cli).
build: $(NODE_MODULES_STAMP)
	rm -rf dist packages/client/dist packages/cli/dist
	npx tsc -p packages/client/tsconfig.json
	npx tsc -p packages/cli/tsconfig.json
	npx tsc -p tsconfig.json
	node plugins/console/build.mjs

# Regenerates packages/client's types from the OpenAPI document the code produces (a host
# started in-process); test/client/generated.test.ts fails when they are out of date.
client: build
	node dist/test/tools/client-gen.js
	npx tsc -p packages/client/tsconfig.json

# A young generation of up to 64 MiB a semi-space: an ingest batch's objects live until its
# commit (tens of ms), and with the default 16 MiB they were promoted and collected again in
# the old generation (8% more ingest throughput measured; the bench starts it the same way).
NODE_FLAGS := --max-semi-space-size=64

# Refuses a Node.js line that CI does not test (ALLOW_UNTESTED_NODE=1 overrides; docs/runtime.md).
run: build
	@node scripts/check-node.js
	node $(NODE_FLAGS) dist/core/main.js

# tsc --watch, and the host restarted after every build without errors (docs/writing-a-plugin.md).
dev: $(NODE_MODULES_STAMP)
	@node scripts/check-node.js
	node scripts/dev.js

# A working kernel or plugin and its test, from templates/: make new-kernel NAME=geo
new-kernel new-plugin:
	@node scripts/new.js $(@:new-%=%) "$(NAME)"

# PostgreSQL and Redis are needed by the database and scale-out tests.
services:
	@bash test/tools/services.sh

test: build services
	npx mocha "dist/test/**/*.test.js"

# The suite on another Node.js line, from the npm registry (docs/runtime.md): make test-node LINE=24
LINE ?= 24
test-node: $(NODE_MODULES_STAMP) services
	bash scripts/on-node.sh $(LINE) test

bench: build
	node dist/test/bench/run.js

# A steady mixed load for SOAK_SECONDS (default 600) with heap and RSS each minute and their
# trend after warm-up; not part of `make test`.
soak: build
	node dist/test/bench/soak.js

# PNGs of every console page with live data, in screenshots/ (git-ignored; docs/console.md).
screenshots: build services
	node dist/test/plugins/console/screenshots.js

spec-coverage: build
	@node dist/test/tools/spec-coverage.js

# tsc is TypeScript 7; ESLint's typescript-eslint reads the `typescript` package (6.0, the
# side-by-side build with the JavaScript API it needs). eslint.config.mjs has the rules.
lint: $(NODE_MODULES_STAMP)
	npx tsc -p packages/client/tsconfig.json
	npx tsc -p packages/cli/tsconfig.json --noEmit
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p plugins/console/ui/tsconfig.json
	npx eslint --max-warnings 0 .

clean:
	rm -rf dist packages/*/dist node_modules
