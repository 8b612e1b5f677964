"""The pure tool implementations by catalogue name (tools that need no database or UI)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from control_center.harness.tools import files, git, shell, web
from control_center.harness.tools.base import ToolContext, ToolOutput

ToolFn = Callable[[ToolContext, dict[str, Any]], ToolOutput]

PURE_TOOLS: Mapping[str, ToolFn] = MappingProxyType(
    {
        "read_file": files.read_file,
        "list_files": files.list_files,
        "search_files": files.search_files,
        "write_file": files.write_file,
        "edit_file": files.edit_file,
        "delete_file": files.delete_file,
        "git_status": git.git_status,
        "git_diff": git.git_diff,
        "git_log": git.git_log,
        "git_commit": git.git_commit,
        "run_command": shell.run_command,
        "fetch_url": web.fetch_url,
    }
)
