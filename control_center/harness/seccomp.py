"""The seccomp filter every sandbox loads (bubblewrap's ``--seccomp FD``): a small classic-BPF
program, built here because it is ~40 instructions and libseccomp is not a dependency.

What it refuses is what no build, test or read needs and what an attacker inside uses to reach
the kernel or the host: the kernel keyring (a root operator's keys live there), new namespaces
(the way back to capabilities), mounts, modules, BPF, perf, io_uring (its operations bypass this
filter), userfaultfd, file handles (open_by_handle_at walks out of any mount), typing into a
terminal (TIOCSTI/TIOCLINUX), and, where the sandbox shares the host's network, Unix sockets
(abstract ones, such as a D-Bus bus or X11, are not files and no mount hides them).

A call from another ABI (32-bit syscalls on a 64-bit kernel, x32) is refused as a whole: its
numbers differ and would slip past the list."""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64).
_OFF_NR = 0
_OFF_ARCH = 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index  # little-endian: the low 32 bits come first


_X32_BIT = 0x40000000
_AF_UNIX = 1
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET.
_CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_DENIED = (
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "mount",
    "umount2",
    "pivot_root",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "unshare",
    "setns",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "name_to_handle_at",
    "fsopen",
    "fsconfig",
    "fsmount",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "syslog",
)


@dataclass(frozen=True)
class _Arch:
    audit: int
    numbers: dict[str, int]
    x32: bool


_ARCHES = {
    "x86_64": _Arch(
        0xC000003E,
        {
            "socket": 41, "ioctl": 16, "clone": 56, "clone3": 435, "unshare": 272, "setns": 308,
            "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
            "userfaultfd": 323, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
            "finit_module": 313, "delete_module": 176, "mount": 165, "umount2": 166,
            "pivot_root": 155, "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163,
            "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            "open_by_handle_at": 304, "name_to_handle_at": 303, "fsopen": 430, "fsconfig": 431,
            "fsmount": 432, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
            "syslog": 103,
        },
        x32=True,
    ),
    "aarch64": _Arch(
        0xC00000B7,
        {
            "socket": 198, "ioctl": 29, "clone": 220, "clone3": 435, "unshare": 97, "setns": 268,
            "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241,
            "userfaultfd": 282, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
            "finit_module": 273, "delete_module": 106, "mount": 40, "umount2": 39,
            "pivot_root": 41, "swapon": 224, "swapoff": 225, "reboot": 142, "acct": 89,
            "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            "open_by_handle_at": 265, "name_to_handle_at": 264, "fsopen": 430, "fsconfig": 431,
            "fsmount": 432, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
            "syslog": 116,
        },
        x32=False,
    ),
}  # fmt: skip


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _deny(err: int) -> bytes:
    return _insn(_RET_K, _RET_ERRNO | err)


def _when_nr(nr: int, body: list[bytes]) -> list[bytes]:
    """``body`` runs when the call is ``nr`` (it must reload the number if it falls through)."""
    return [_insn(_JEQ_K, nr, 0, len(body)), *body]


def filter_program(*, unix_sockets: bool, machine: str | None = None) -> bytes | None:
    """The filter as bytes for ``--seccomp``, or None on a machine we have no table for.

    ``unix_sockets`` False refuses ``socket(AF_UNIX, ...)`` (``socketpair`` stays: it reaches
    nothing outside)."""
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    n = arch.numbers
    reload_nr = _insn(_LD_W_ABS, _OFF_NR)
    prog: list[bytes] = [
        _insn(_LD_W_ABS, _OFF_ARCH),
        _insn(_JEQ_K, arch.audit, 1, 0),
        _deny(errno.EPERM),
        reload_nr,
    ]
    if arch.x32:
        prog += [_insn(_JSET_K, _X32_BIT, 0, 1), _deny(errno.EPERM)]
    for name in _DENIED:
        prog += [_insn(_JEQ_K, n[name], 0, 1), _deny(errno.EPERM)]
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc fall back to clone.
    prog += [_insn(_JEQ_K, n["clone3"], 0, 1), _deny(errno.ENOSYS)]
    prog += _when_nr(
        n["clone"],
        [_insn(_LD_W_ABS, _arg_low(0)), _insn(_JSET_K, _CLONE_NEW_ANY, 0, 1), _deny(errno.EPERM), reload_nr],
    )
    prog += _when_nr(
        n["ioctl"],
        [
            _insn(_LD_W_ABS, _arg_low(1)),
            _insn(_JEQ_K, _TIOCSTI, 0, 1),
            _deny(errno.EPERM),
            _insn(_JEQ_K, _TIOCLINUX, 0, 1),
            _deny(errno.EPERM),
            reload_nr,
        ],
    )
    if not unix_sockets:
        prog += _when_nr(
            n["socket"],
            [
                _insn(_LD_W_ABS, _arg_low(0)),
                _insn(_JEQ_K, _AF_UNIX, 0, 1),
                _deny(errno.EAFNOSUPPORT),
                reload_nr,
            ],
        )
    prog.append(_insn(_RET_K, _RET_ALLOW))
    return b"".join(prog)
