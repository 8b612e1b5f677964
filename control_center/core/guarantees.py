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
    PROMPT = "prompt"  # the mode's guidance in the system prompt


LAYER_LABELS: dict[Layer, str] = {
    Layer.SURFACE: "surface",
    Layer.GATE: "gate",
    Layer.GUARDRAIL: "guardrail",
    Layer.OS_LAYER: "OS layer",
    Layer.HOOK: "hook",
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
    run the OS layer."""
    read_only = profile.read_only
    if transport is Transport.BUILTIN:
        layers = [Layer.SURFACE, Layer.GATE, Layer.GUARDRAIL]
        if read_only and os_layer:
            layers.append(Layer.OS_LAYER)
        layers.append(Layer.PROMPT)
        if not read_only and os_layer:
            summary = (
                "Built-in harness: surface, gate and guardrail hold; commands run in a sandbox that "
                "sees neither the workspace nor your home or keyring."
            )
        elif not read_only:
            summary = "Built-in harness: surface, gate and guardrail hold."
        elif os_layer:
            summary = (
                "Built-in harness: surface, gate and guardrail hold; commands run on a read-only file system."
            )
        else:
            summary = (
                "Built-in harness: surface, gate and guardrail hold; bubblewrap is not available, "
                "so commands are not run on a read-only file system."
            )
        return Guarantee(tuple(layers), summary)
    if not read_only:
        boxed = (
            " Claude and its commands run in a sandbox that sees neither the workspace nor your home "
            "or keyring, and the API key stays on the host."
            if os_layer
            else " The API key stays on the host."
        )
        return Guarantee(
            (Layer.PROMPT,),
            "Claude Code in Agent mode: Claude's own permission mode and the prompt; nothing is refused."
            + boxed,
        )
    # Surface, gate and guardrail hold for the mode's verbs, served over MCP by the product; Claude's
    # own tools cannot be made invisible or gated by us, so for them the OS layer or the hook holds.
    verbs = (Layer.SURFACE, Layer.GATE, Layer.GUARDRAIL)
    if os_layer:
        return Guarantee(
            (*verbs, Layer.OS_LAYER, Layer.HOOK, Layer.PROMPT),
            "Claude Code under the OS layer: the file system is read-only for Claude and every command "
            "it runs, and its network reaches the model endpoint's Messages API (the API key stays on "
            "the host) and the turn's MCP server alone; the "
            "mode's verbs (over MCP) pass our surface, gate and guardrail; the hook checks command "
            "lines too.",
        )
    return Guarantee(
        (*verbs, Layer.HOOK, Layer.PROMPT),
        "Claude Code without the OS layer (bubblewrap missing or not working here): the mode's verbs "
        "pass our surface, gate and guardrail, but for Claude's own tools and commands the guarantee "
        "is the hook alone — a command-line check, not a boundary.",
        hook_alone=True,
    )


def layers_line(guarantee: Guarantee) -> str:
    """``surface · gate · guardrail · OS layer · hook · prompt`` for what holds."""
    return " · ".join(LAYER_LABELS[layer] for layer in guarantee.layers)


def operator_note(profile: CapabilityProfile, transport: Transport, os_layer: bool) -> str | None:
    """The composer's line under the input: always on Claude Code, and on the built-in harness
    only when a read-only mode runs without its OS layer."""
    g = guarantee_for(profile, transport, os_layer)
    if transport is Transport.BUILTIN and (not profile.read_only or os_layer):
        return None
    if g.hook_alone:
        return f"No OS layer here: for Claude's own tools the hook alone holds ({layers_line(g)})."
    if transport is Transport.CLAUDE_CODE and not profile.read_only:
        return "Claude Code in Agent mode: nothing is refused (prompt only)."
    return f"Holding: {layers_line(g)}."


def readme_table(os_layer: bool) -> str:
    """The per mode × transport table (README, SPEC §9), from the same function as the UI."""
    rows = ["| mode | transport | layers that hold |", "| --- | --- | --- |"]
    for mode in Mode:
        profile = profile_for(mode)
        for transport in Transport:
            g = guarantee_for(profile, transport, os_layer)
            rows.append(f"| {profile.label} | {transport.value} | {layers_line(g)} |")
    return "\n".join(rows)
