#!/usr/bin/env bash
# The fault suite at nightly size: SIGKILL at seeded random points of runs, approvals, resumes
# and effectful calls (tests/harness/test_fault_suite.py), plus the eight-process races.
#   bash bench/fault_suite.sh [TRIALS] [SEED]      (defaults: 500 trials, seed = today's date)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
export CC_FAULT_TRIALS="${1:-500}"
export CC_FAULT_SEED="${2:-$(date -u +%Y%m%d)}"
export QT_QPA_PLATFORM=offscreen
echo "fault suite: $CC_FAULT_TRIALS trials, seed $CC_FAULT_SEED" >&2
exec .venv/bin/python -m pytest -q -s -p no:cacheprovider tests/harness/test_fault_suite.py
