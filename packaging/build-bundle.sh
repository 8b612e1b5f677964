#!/usr/bin/env bash
# Builds the one-folder desktop bundle with PyInstaller:
#   dist/control-center/control-center          the app (same commands as the wheel's)
#   dist/control-center/share/applications/     the desktop entry
#   dist/control-center/share/icons/hicolor/    the application icon, 16-512 px and scalable
#   dist/control-center/share/metainfo/         the AppStream metadata
#   dist/control-center/install.sh              installs it for the user (~/.local) or into PREFIX
# Options: --dist DIR (default dist), --work DIR (PyInstaller's scratch, default build/pyinstaller),
# --archive (also pack DIST/control-center-VERSION-linux-ARCH.tar.gz).
# Needs the project's .venv with the "bundle" (or "test") extra: bash packaging/bootstrap.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="$here/dist"
work="$here/build/pyinstaller"
archive=0
while [ "$#" -gt 0 ]; do
    case "$1" in
        --dist) dist="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --archive) archive=1; shift ;;
        *) echo "error: unknown option $1 (expected --dist DIR, --work DIR or --archive)" >&2; exit 2 ;;
    esac
done
python="$here/.venv/bin/python"
app_id="io.github.controlcenter.ControlCenter"
[ -x "$python" ] || { echo "error: no .venv: run bash packaging/bootstrap.sh first" >&2; exit 1; }
"$python" -c "import PyInstaller" 2>/dev/null \
    || { echo "error: PyInstaller is not in .venv: run bash packaging/bootstrap.sh (it installs the test extra)" >&2; exit 1; }

"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$dist" --workpath "$work" "$here/packaging/control-center.spec" >&2

bundle="$dist/control-center"
share="$bundle/share"
mkdir -p "$share/applications" "$share/metainfo"
cp "$here/resources/$app_id.desktop" "$share/applications/"
cp "$here/resources/$app_id.metainfo.xml" "$share/metainfo/"
QT_QPA_PLATFORM=offscreen "$python" "$here/packaging/render_icons.py" "$share" "$app_id"
install -m 755 "$here/packaging/install-bundle.sh" "$bundle/install.sh"

version="$("$bundle/control-center" --version | cut -d' ' -f2)"
echo "bundle: $bundle (control-center $version, $(du -sh "$bundle" | cut -f1))" >&2
if [ "$archive" -eq 1 ]; then
    tarball="$dist/control-center-$version-linux-$(uname -m).tar.gz"
    tar -C "$dist" -czf "$tarball" control-center
    echo "archive: $tarball" >&2
fi
