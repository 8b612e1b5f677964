#!/usr/bin/env bash
# Sets up (first time) and opens Control Center from a source checkout. With no argument it opens
# the demo workspace, which runs on the built-in scripted model when no API key is configured.
#   bash packaging/run-app.sh                 # the demo workspace
#   bash packaging/run-app.sh --workspace DIR # a workspace of yours
# A window needs a display: this checks for one first, before it installs or creates anything.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || { echo "error: $python not found: install Python 3.11 or newer" >&2; exit 1; }
# The display check is standard-library Python: it runs before the virtual environment exists.
"$python" "$here/control_center/display.py" || exit 1
bash "$here/packaging/bootstrap.sh"
if [ "$#" -eq 0 ]; then
    exec "$here/.venv/bin/control-center" demo
fi
exec "$here/.venv/bin/control-center" gui "$@"
