"""Which ``git`` command lines only read, for the hook (SPEC §9).

git reads its configuration from the repository it opens, and a configuration can name programs
(``core.fsmonitor``, ``core.pager``, diff drivers): so every way of opening another repository
(``-C``, ``--git-dir``, ``--work-tree``, ``GIT_DIR``, a change of directory into a bare repository
committed in the change) is refused, as are ``-c`` and the options that run a pager or write.
git's option parser accepts unambiguous prefixes of long options (``--out=`` is ``--output=``),
so a long option that a forbidden one starts with is refused too."""

from __future__ import annotations

from control_center.harness.transports.command_rules import Denied


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GLOBAL_FLAGS = _names(
    """
    --no-pager -P --no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs
    --icase-pathspecs --no-optional-locks --version --no-advice
    """
)
_GLOBAL_FORBIDDEN = {
    "-c": "can make git run other programs",
    "--config-env": "can make git run other programs",
    "--exec-path": "can make git run other programs",
    "-C": "opens another repository, whose configuration can run programs",
    "--git-dir": "opens another repository, whose configuration can run programs",
    "--work-tree": "opens another repository, whose configuration can run programs",
    "--bare": "opens another repository, whose configuration can run programs",
    "--namespace": "is refused",
    "--super-prefix": "is refused",
    "-p": "runs a pager program",
    "--paginate": "runs a pager program",
}
READ = _names(
    """
    status diff log show blame annotate shortlog rev-parse rev-list ls-files ls-tree cat-file
    describe grep diff-tree diff-files diff-index merge-base name-rev show-ref for-each-ref
    whatchanged count-objects cherry range-diff version var check-ignore check-attr show-branch
    """
)
MUTATING = _names(
    """
    commit push add reset checkout switch restore merge rebase apply am cherry-pick revert stash
    tag branch clean rm mv fetch pull clone init gc prune update-ref update-index submodule
    worktree config remote notes filter-branch replace bisect format-patch archive reflog
    commit-tree write-tree read-tree symbolic-ref maintenance repack lfs help
    """
)
#: Long options of reading subcommands that write a file or run a program.
_SUB_FORBIDDEN = {
    "--output": "writes a file",
    "--ext-diff": "runs an external diff program",
    "--open-files-in-pager": "runs a pager program",
}
#: Real options that a forbidden one is a prefix of, and that write nothing.
_SUB_HARMLESS = _names("--output-indicator-new --output-indicator-old --output-indicator-context")
_CONFIG_READ_ACTIONS = _names(
    "--get --get-all --get-regexp --get-urlmatch -l --list --get-color --get-colorbool"
)
_CONFIG_READ_FLAGS = _names(
    """
    --global --system --local --worktree --bool --int --bool-or-int --path --expiry-date --null -z
    --name-only --show-origin --show-scope --includes --no-includes
    """
)
_CONFIG_READ_VALUED = _names("--type --default")
_BRANCH_VALUE_OPTS = _names("--contains --no-contains --merged --no-merged --points-at --sort --format")
_BRANCH_LIST_OPTS = _names(
    """
    -a --all -r --remotes -v -vv --verbose --show-current -l --list --no-color --color --column
    --no-column -i --ignore-case --omit-empty
    """
)


def check_git(args: list[str]) -> None:
    """Raise Denied unless ``git ARGS`` only reads the repository it runs in."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        t = args[i]
        name = t.split("=", 1)[0]
        for opt, reason in _GLOBAL_FORBIDDEN.items():
            if name == opt or (name.startswith("--") and len(name) > 2 and opt.startswith(name)):
                raise Denied(f"`git {t}` {reason}")
            if opt in ("-c", "-C") and t.startswith(opt):
                raise Denied(f"`git {t}` {reason}")
        if t not in _GLOBAL_FLAGS:
            raise Denied(f"`git {t}` is not a git option this check knows")
        i += 1
    if i >= len(args):
        return  # `git` alone prints its usage
    sub, rest = args[i], args[i + 1 :]
    for t in rest:
        if t == "--":
            break
        name = t.split("=", 1)[0]
        if name.startswith("--") and len(name) > 2 and name not in _SUB_HARMLESS:
            for opt, reason in _SUB_FORBIDDEN.items():
                if opt.startswith(name) or name.startswith(opt):
                    raise Denied(f"`git {sub} {t}` {reason}")
        if sub == "grep" and t.startswith("-") and not t.startswith("--") and "O" in t:
            raise Denied(f"`git grep {t}` runs a pager program (-O)")
    if sub in READ:
        return
    first = rest[0] if rest else ""
    if sub == "branch":
        _branch(rest)
        return
    if sub == "tag":
        if not rest or (first in ("-l", "--list") and all(not t.startswith("-") for t in rest[1:])):
            return
        raise Denied("`git tag` with arguments creates or deletes tags (only listing is read-only)")
    if sub == "stash" and first in ("list", "show"):
        return
    if sub == "remote" and all(t in ("-v", "--verbose") for t in rest):
        return
    if sub == "remote" and first in ("get-url", "show") and all(not t.startswith("-") for t in rest[1:]):
        return
    if (
        sub == "worktree"
        and first == "list"
        and all(t in ("--porcelain", "-v", "--verbose", "-z") for t in rest[1:])
    ):
        return
    if sub == "notes" and first in ("", "list", "show"):
        return
    if sub == "reflog" and first in ("", "show"):
        return
    if sub == "config":
        _config(rest)
        return
    if sub in MUTATING:
        raise Denied(f"`git {sub}` changes the repository or runs other programs")
    raise Denied(f"`git {sub}` is not a known read-only git command")


def _branch(rest: list[str]) -> None:
    expect_value = False
    listing = "--list" in rest or "-l" in rest
    for t in rest:
        if expect_value:
            expect_value = False
        elif t in _BRANCH_VALUE_OPTS:
            expect_value = True
        elif t.split("=", 1)[0] in _BRANCH_VALUE_OPTS or t in _BRANCH_LIST_OPTS:
            continue
        elif not t.startswith("-") and listing:
            continue  # a pattern for --list
        else:
            raise Denied(f"`git branch {t}` changes branches (only listing is read-only)")


def _config(rest: list[str]) -> None:
    """Only reading actions, with no file other than the repository's own."""
    action = rest[0] in ("get", "list") if rest else False
    operands = 0
    i = 0
    while i < len(rest):
        t = rest[i]
        i += 1
        if t in ("get", "list") and i == 1:
            continue
        if t in _CONFIG_READ_ACTIONS:
            action = True
            continue
        if t in _CONFIG_READ_FLAGS:
            continue
        if t.split("=", 1)[0] in _CONFIG_READ_VALUED:
            if "=" not in t:
                i += 1
            continue
        if t.startswith("-"):
            raise Denied(f"`git config {t}` could change the configuration or read another file")
        operands += 1
    if not action:
        raise Denied("`git config` without --get or --list would change the configuration")
    if operands > 2:
        raise Denied("`git config` with more operands than a read takes would change the configuration")
