#!/usr/bin/env bash
# Regenerates the types of the TypeScript and Python clients from
# internal/api/openapi.json (the Go SDK's: go generate ./client). The tests of
# each SDK fail while a generated file differs from what this makes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
(cd typescript && { [ -x node_modules/.bin/openapi-typescript ] || npm ci --no-audit --no-fund; } && npm run --silent generate)
python3 python/gen_types.py
