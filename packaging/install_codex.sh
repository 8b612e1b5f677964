#!/usr/bin/env bash
# Installs the pinned Codex CLI used by the codex transport and its end-to-end tests.
# npm here does not run the package's postinstall, and node_modules/.bin/codex is a node launcher:
# the usable binary is the platform package's native executable (it ships rg and bwrap beside it).
set -euo pipefail

version="0.169.0"
prefix="${CC_CODEX_PREFIX:-$HOME/.cache/control-center/codex}"
binary="$prefix/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

# Idempotent: a present binary means a previous run finished (npm writes it last).
if [ -x "$binary" ]; then
    echo "$binary"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: install Node.js (with npm) first" >&2
    exit 1
fi

mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund "@openai/codex@$version" >&2

if [ ! -x "$binary" ]; then
    echo "npm finished but $binary is missing (is this not linux-x64?)" >&2
    exit 1
fi
echo "$binary"
