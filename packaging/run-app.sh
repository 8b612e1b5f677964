#!/usr/bin/env bash
# Sets up (first time) and opens Control Center. With no argument it opens the demo workspace,
# which runs on the built-in scripted model when no API key is configured.
#   bash packaging/run-app.sh                 # the demo workspace
#   bash packaging/run-app.sh --workspace DIR # a workspace of yours
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$here/packaging/bootstrap.sh"
if [ "$#" -eq 0 ]; then
    exec "$here/.venv/bin/control-center" demo
fi
exec "$here/.venv/bin/control-center" gui "$@"
