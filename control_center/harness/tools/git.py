"""Git tools in the space's worktree: status, diff, log (read) and commit (write)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from control_center.harness import sandbox
from control_center.harness.environment import scrubbed_environ
from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput
from control_center.harness.tools.paths import resolve_in_worktree

OUTPUT_CAP_CHARS = 100_000
GIT_TIMEOUT_S = 120.0
DEFAULT_LOG_COUNT = 20
MAX_LOG_COUNT = 500


def _git(ctx: ToolContext, *args: str, read: bool = True) -> subprocess.CompletedProcess[str]:
    argv = ["git", "--no-pager", "-c", "color.ui=false", "-C", str(Path(ctx.worktree).resolve()), *args]
    argv = sandbox.wrap_argv(argv, ctx.worktree, ctx.read_only, hidden=ctx.hidden)
    env = scrubbed_environ(allow=ctx.env_allow, extra={"GIT_TERMINAL_PROMPT": "0"})
    if read:
        # Reads must not take the index lock (refreshing stat data); they would fail in a
        # read-only sandbox and race a concurrent writer.
        env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        return subprocess.run(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError as exc:
        raise ToolError("git is not installed (not found on PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise ToolError(f"git {args[0]} timed out after {GIT_TIMEOUT_S:g} s") from exc


def _checked(ctx: ToolContext, *args: str, read: bool = True) -> str:
    done = _git(ctx, *args, read=read)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip() or f"exit code {done.returncode}"
        raise ToolError(f"git {args[0]} failed: {message}")
    return done.stdout


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP_CHARS:
        return text
    return text[:OUTPUT_CAP_CHARS] + f"\n[truncated: showed {OUTPUT_CAP_CHARS} of {len(text)} characters]"


def _ref(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"argument {key!r} must be a string")
    # A leading dash would be parsed as an option (e.g. --output=FILE writes anywhere).
    if value.startswith("-") or "\x00" in value or any(c.isspace() for c in value):
        raise ToolError(f"{key} {value!r} is not a valid git ref")
    return value


def git_status(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    out = _checked(ctx, "status", "--short", "--branch")
    lines = out.rstrip("\n").splitlines()
    if len(lines) <= 1:
        lines.append("(working tree clean)")
    return ToolOutput(_cap("\n".join(lines)))


def git_diff(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    base, head = _ref(args, "base"), _ref(args, "head")
    path = args.get("path") or None
    staged = bool(args.get("staged", False))
    if base is None and head is None and not staged and path is None:
        # A PR space: with no arguments the interesting diff is the PR's, not the working tree's.
        base, head = ctx.extras.get("base") or None, ctx.extras.get("head") or None
        base = _ref({"base": base}, "base")
        head = _ref({"head": head}, "head")
    if head is not None and base is None:
        raise ToolError("'head' needs a 'base' to diff against")
    cmd = ["diff"]
    if path is not None:
        if not isinstance(path, str):
            raise ToolError("argument 'path' must be a string")
        resolve_in_worktree(ctx.worktree, path, must_exist=False)
        cmd.insert(0, "--literal-pathspecs")
    if staged:
        if head is not None:
            raise ToolError("'staged' cannot be combined with 'head'")
        cmd.append("--cached")
    if base is not None and head is not None:
        # Three dots: what head changed since it forked from base, as a PR shows it.
        cmd.append(f"{base}...{head}")
    elif base is not None:
        cmd.append(base)
    if path is not None:
        cmd += ["--", path]
    out = _checked(ctx, *cmd)
    return ToolOutput(_cap(out) if out.strip() else "(no differences)", data={"diff": _cap(out)})


def git_log(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    raw = args.get("max_count", DEFAULT_LOG_COUNT)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ToolError(f"max_count must be a positive integer, got {raw!r}")
    cmd = ["log", f"--max-count={min(raw, MAX_LOG_COUNT)}", "--date=short", "--format=%h %ad %an: %s"]
    ref = _ref(args, "ref")
    if ref is not None:
        cmd += [ref, "--"]
    done = _git(ctx, *cmd)
    if done.returncode != 0:
        if "does not have any commits" in done.stderr:
            return ToolOutput("(no commits yet)")
        raise ToolError(f"git log failed: {done.stderr.strip() or done.returncode}")
    return ToolOutput(_cap(done.stdout.rstrip("\n")) or "(no commits)")


def git_commit(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    message = args.get("message")
    if not isinstance(message, str) or not message.strip():
        raise ToolError("missing required argument 'message' (a non-empty string)")
    _checked(ctx, "add", "-A", read=False)
    # Exit 0 from `diff --cached --quiet` means nothing is staged: say so instead of git's error.
    if _git(ctx, "diff", "--cached", "--quiet", read=False).returncode == 0:
        raise ToolError("nothing to commit: the working tree has no changes")
    out = _checked(ctx, "commit", "-m", message, read=False)
    sha = _checked(ctx, "rev-parse", "HEAD").strip()
    return ToolOutput(_cap(out.strip()), data={"commit": sha})
