#!/usr/bin/env bash
# Sets up everything Control Center needs on a fresh Debian/Ubuntu machine, idempotently:
#   1. the system libraries Qt's platform plugins load (checked with ldd, installed with apt-get),
#      git, bubblewrap (the read-only sandbox and the gate sandbox) and ripgrep (search_files);
#   2. a virtual environment in .venv with the project and its test tools.
# Prints what it does on stderr; safe to run again (it skips what is already there).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
venv="$here/.venv"
python="${PYTHON:-python3}"

log() { printf 'bootstrap: %s\n' "$*" >&2; }

# Debian packages, one group a line (add yours as a new line with a comment saying what needs it).
apt_packages=(
    git bubblewrap                                  # worktrees; the read-only sandbox
    python3-venv                                    # python3 -m venv (the .venv; the wheel test)
    postgresql                                      # team mode's store; tests start a throw-away cluster
    ripgrep                                         # search_files: linear-time regex
    libegl1 libgl1 libx11-6 libxkbcommon0 libglib2.0-0 libfontconfig1 libfreetype6 libdbus-1-3
    fonts-dejavu-core                               # Qt's offscreen platform (tests) renders text
    fonts-noto-color-emoji fonts-noto-cjk           # emoji and CJK text render instead of empty boxes
    libx11-xcb1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
    libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1   # xcb: a real window
    desktop-file-utils appstream                    # the bundle test validates its desktop entry and metainfo
)

missing_packages() {
    local missing=()
    for p in "${apt_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    echo "${missing[@]:-}"
}

install_system_packages() {
    command -v dpkg-query >/dev/null 2>&1 || { log "not a Debian system: install Qt's xcb/EGL libraries yourself"; return 0; }
    local missing
    missing="$(missing_packages)"
    [ -z "$missing" ] && return 0
    log "installing system packages: $missing"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >&2 || log "apt-get update failed; trying the install anyway"
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $missing >&2
}

install_python_env() {
    if [ ! -x "$venv/bin/python" ]; then
        log "creating $venv"
        "$python" -m venv "$venv"
    fi
    local stamp="$venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
    if [ ! -f "$stamp" ]; then
        log "installing the project and its test tools into .venv"
        "$venv/bin/python" -m pip install -q --upgrade pip >&2 || true
        "$venv/bin/python" -m pip install -q -e ".[test]" >&2
        rm -f "$venv"/.installed-*
        touch "$stamp"
    fi
}

check_qt_libraries() {
    # ldd on the platform plugins names any shared library Qt still cannot find.
    local plugins
    plugins="$("$venv/bin/python" -c 'import PySide6, pathlib; print(pathlib.Path(PySide6.__file__).parent / "Qt/plugins/platforms")')"
    local absent
    absent="$(ldd "$plugins"/libqoffscreen.so "$plugins"/libqxcb.so 2>/dev/null | grep 'not found' | sort -u || true)"
    if [ -n "$absent" ]; then
        log "Qt platform plugins miss libraries:"
        printf '%s\n' "$absent" >&2
        return 1
    fi
}

install_system_packages
install_python_env
check_qt_libraries
