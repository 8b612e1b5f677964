"""Execute-tier tools that reach beyond the worktree: push, pull requests, package installs."""

from __future__ import annotations

import shlex
from typing import Any

from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput
from control_center.harness.tools.shell import run_process

_INSTALLERS: dict[str, list[str]] = {
    "pip": ["python3", "-m", "pip", "install"],
    "npm": ["npm", "install"],
}


def git_push(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    remote = str(args.get("remote") or "origin")
    argv = ["git", "push", remote]
    if args.get("branch"):
        argv.append(str(args["branch"]))
    if remote.startswith("-") or any(a.startswith("-") for a in argv[3:]):
        raise ToolError("remote and branch must not start with '-'")
    res = run_process(argv, ctx.worktree, 120, read_only=False, env={"GIT_TERMINAL_PROMPT": "0"})
    if res.exit_code != 0:
        raise ToolError(f"git push failed: {res.start_error or res.output.strip()}")
    return ToolOutput(res.output.strip() or "pushed")


def install_package(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    manager = str(args.get("manager") or "pip")
    if manager not in _INSTALLERS:
        raise ToolError(f"unknown package manager {manager!r}; expected one of: {', '.join(_INSTALLERS)}")
    name = str(args["name"])
    if not name or name.startswith("-") or any(c.isspace() for c in name):
        raise ToolError(f"invalid package name {name!r}")
    res = run_process([*_INSTALLERS[manager], name], ctx.worktree, 600, read_only=False)
    if res.exit_code != 0:
        raise ToolError(
            f"{shlex.join(_INSTALLERS[manager])} {name} failed: {res.start_error or res.output[-2000:]}"
        )
    return ToolOutput(res.output[-4000:] or f"installed {name}")


def create_pr(ctx: ToolContext, args: dict[str, Any], ws: Any) -> ToolOutput:
    """A local pull request: a review space on this worktree's branch against ``base``."""
    branch = run_process(["git", "rev-parse", "--abbrev-ref", "HEAD"], ctx.worktree, 30, read_only=False)
    head = branch.output.strip()
    if branch.exit_code != 0 or not head or head == "HEAD":
        raise ToolError("create_pr needs the worktree to be on a branch")
    base = str(args.get("base") or "HEAD")
    if base == "HEAD":
        base = ws.store.get_meta("default_branch") or _default_branch(ws)
    space = ws.open_review(base=base, head=head, name=str(args["title"]))
    return ToolOutput(f"Pull request opened as review space {space.name!r} ({space.id}): {head} → {base}")


def _default_branch(ws: Any) -> str:
    res = run_process(["git", "symbolic-ref", "--short", "HEAD"], ws.repo, 30, read_only=False)
    return res.output.strip() or "main"
