#!/usr/bin/env bash
# Installs the pinned Claude Code CLI used by the claude-code transport and its end-to-end test.
# npm here does not run the package's postinstall, so the usable binary is the platform package's
# native executable, not node_modules/.bin/claude.
set -euo pipefail

version="2.1.328"
prefix="${CC_CLAUDE_PREFIX:-$HOME/.cache/control-center/claude-code}"
binary="$prefix/node_modules/@anthropic-ai/claude-code-linux-x64/claude"

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
npm install --prefix "$prefix" --no-audit --no-fund "@anthropic-ai/claude-code@$version" >&2

if [ ! -x "$binary" ]; then
    echo "npm finished but $binary is missing (is this not linux-x64?)" >&2
    exit 1
fi
echo "$binary"
