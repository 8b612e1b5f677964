"""The base of every operator-facing error: its message is one clear line, shown as is by the
CLI and the app (never a traceback)."""

from __future__ import annotations


class OperatorError(Exception):
    pass
