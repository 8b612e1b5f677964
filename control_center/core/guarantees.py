"""Which enforcement layers hold for a mode on a transport (SPEC §9), as one pure function.

The turn's start event, ``surface --json``, the UI and the README all say the same thing because
they all ask this function. ``os_layer`` is whether bubblewrap works on this host (probed by the
harness); the core only says what follows from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from control_center.core.modes import Mode, Transport
from control_center.core.profiles import CapabilityProfile, profile_for


class Layer(StrEnum):
    SURFACE = "surface"  # tools the model cannot see
    GATE = "gate"  # calls that wait for the operator
    GUARDRAIL = "guardrail"  # effect classes refused before a call runs
    # bubblewrap: the file system read-only for every process (on Claude Code also a network of
    # its own that reaches only the model endpoint and the turn's MCP server)
    OS_LAYER = "os_layer"
    HOOK = "hook"  # the PreToolUse command-line check
    AGENT_SANDBOX = "agent_sandbox"  # the agent's own sandbox (Codex's read-only/workspace-write)
    PROMPT = "prompt"  # the mode's guidance in the system prompt


LAYER_LABELS: dict[Layer, str] = {
    Layer.SURFACE: "surface",
    Layer.GATE: "gate",
    Layer.GUARDRAIL: "guardrail",
    Layer.OS_LAYER: "OS layer",
    Layer.HOOK: "hook",
    Layer.AGENT_SANDBOX: "agent sandbox",
    Layer.PROMPT: "prompt",
}


@dataclass(frozen=True)
class Guarantee:
    layers: tuple[Layer, ...]
    #: One sentence for the operator: what holds, and where it is only the hook.
    summary: str
    #: The read-only posture rests on the command-line hook alone (no OS layer on this host).
    hook_alone: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "layers": [layer.value for layer in self.layers],
            "summary": self.summary,
            "hook_alone": self.hook_alone,
        }


def guarantee_for(profile: CapabilityProfile, transport: Transport, os_layer: bool) -> Guarantee:
    """What holds for a turn in ``profile``'s mode on ``transport``, given whether the host can
    run the OS layer (each transport's table is in ``core.transports``)."""
    from control_center.core.transports import transport_spec

    return transport_spec(transport).guarantee(profile.read_only, os_layer)


def layers_line(guarantee: Guarantee) -> str:
    """``surface · gate · guardrail · OS layer · hook · prompt`` for what holds."""
    return " · ".join(LAYER_LABELS[layer] for layer in guarantee.layers)


def operator_note(profile: CapabilityProfile, transport: Transport, os_layer: bool) -> str | None:
    """The composer's line under the input, as the transport declares it (None: no line)."""
    from control_center.core.transports import transport_spec

    g = guarantee_for(profile, transport, os_layer)
    note = transport_spec(transport).holds[(profile.read_only, os_layer)].note
    if note is None:
        return f"Holding: {layers_line(g)}."
    return note or None


def readme_table(os_layer: bool) -> str:
    """The per mode × transport table (README, SPEC §9), from the same function as the UI."""
    rows = ["| mode | transport | layers that hold |", "| --- | --- | --- |"]
    for mode in Mode:
        profile = profile_for(mode)
        for transport in Transport:
            g = guarantee_for(profile, transport, os_layer)
            rows.append(f"| {profile.label} | {transport.value} | {layers_line(g)} |")
    return "\n".join(rows)
