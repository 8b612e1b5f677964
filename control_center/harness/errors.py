"""The harness's one-line error for a turn that cannot start or resume."""

from __future__ import annotations

from control_center.core.errors import OperatorError


class HarnessError(OperatorError):
    """A turn that cannot start or resume; one clear line for the operator."""
