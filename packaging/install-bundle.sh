#!/usr/bin/env bash
# Installs this Control Center bundle for the current user (or into PREFIX): the app folder under
# PREFIX/lib/control-center, the command PREFIX/bin/control-center, and the desktop entry, icons and
# AppStream metadata under PREFIX/share, so the app shows in the desktop's menus.
#   ./install.sh                  # into ~/.local
#   PREFIX=/opt/cc ./install.sh   # elsewhere
#   ./install.sh --uninstall      # removes what it installed
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="${PREFIX:-$HOME/.local}"
app_id="io.github.controlcenter.ControlCenter"
app_dir="$prefix/lib/control-center"

remove() {
    rm -rf "$app_dir"
    rm -f "$prefix/bin/control-center" "$prefix/share/applications/$app_id.desktop" \
        "$prefix/share/metainfo/$app_id.metainfo.xml"
    find "$prefix/share/icons/hicolor" -name "$app_id.*" -delete 2>/dev/null || true
}

if [ "${1:-}" = "--uninstall" ]; then
    remove
    echo "removed Control Center from $prefix"
    exit 0
fi
[ "$#" -eq 0 ] || { echo "error: unknown option $1 (expected nothing or --uninstall)" >&2; exit 2; }
[ -x "$here/control-center" ] || { echo "error: run install.sh from inside the bundle folder" >&2; exit 1; }

if [ "$here" != "$app_dir" ]; then
    rm -rf "$app_dir"
    mkdir -p "$(dirname "$app_dir")"
    cp -a "$here" "$app_dir"
fi
mkdir -p "$prefix/bin" "$prefix/share/applications" "$prefix/share/metainfo"
ln -sfn "$app_dir/control-center" "$prefix/bin/control-center"
# The entry names the installed command by its full path: menus do not read the shell's PATH.
sed -e "s|^Exec=control-center|Exec=$app_dir/control-center|" \
    -e "s|^TryExec=control-center|TryExec=$app_dir/control-center|" \
    "$here/share/applications/$app_id.desktop" >"$prefix/share/applications/$app_id.desktop"
cp "$here/share/metainfo/$app_id.metainfo.xml" "$prefix/share/metainfo/"
cp -r "$here/share/icons" "$prefix/share/"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$prefix/share/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" || true
echo "installed Control Center in $app_dir; run control-center (in $prefix/bin) or pick it from the menu"
