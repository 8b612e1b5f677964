"""Projections of a capability profile: the tool surface, the approval gate, the guardrail and
the system-prompt block. Pure functions of (profile, autonomy, transport) so they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from control_center.core.modes import Autonomy, Effect, Tier, Transport, WorktreePosture
from control_center.core.profiles import ASK_USER, MODE_VERBS, CapabilityProfile
from control_center.core.tools import ToolSpec, catalogue
from control_center.core.transports import transport_spec


def _on_surface(spec: ToolSpec, profile: CapabilityProfile, transport: Transport) -> bool:
    if spec.name in profile.pinned:
        return True
    if spec.name in MODE_VERBS and spec.name not in profile.own_verbs:
        return False
    if spec.tier > profile.max_tier:
        return False
    if spec.name in profile.denylist:
        return False
    if spec.effects & profile.denied_effects:
        return False
    # Allowlists restrict the write tier and above on the built-in harness. On a transport whose
    # agent has tools of its own (Claude Code, Codex) an omitted tool is refused whatever its tier.
    omitted = profile.allowlist is not None and spec.name not in profile.allowlist
    return not (omitted and (transport_spec(transport).external or spec.tier > Tier.READ))


def materialize_surface(
    profile: CapabilityProfile, autonomy: Autonomy, transport: Transport = Transport.BUILTIN
) -> tuple[ToolSpec, ...]:
    """The tools the model sees this turn, in catalogue order. ``autonomy`` decides approvals,
    never visibility; it is an input so every projection shares one signature."""
    del autonomy
    return tuple(spec for spec in catalogue().values() if _on_surface(spec, profile, transport))


def bypasses_gate(spec: ToolSpec, profile: CapabilityProfile) -> bool:
    """Pinned verbs and ``ask_user`` skip the approval wrapper and the guardrail."""
    return spec.name in profile.pinned or spec.name == ASK_USER


def needs_approval(spec: ToolSpec, profile: CapabilityProfile, autonomy: Autonomy) -> bool:
    """The per-call approval gate (SPEC §4). Durable approvals are never decided here."""
    if bypasses_gate(spec, profile) or not spec.effects:
        return False
    match autonomy:
        case Autonomy.ASK:
            return True
        case Autonomy.AUTO_EDIT:
            return bool(spec.effects - {Effect.WORKTREE_WRITE})
        case Autonomy.AUTO | Autonomy.YOLO:
            return False
        case _:
            assert_never(autonomy)


@dataclass(frozen=True)
class Allow:
    pass


@dataclass(frozen=True)
class Deny:
    reason: str
    effects: frozenset[Effect]


GuardrailOutcome = Allow | Deny


def guardrail(spec: ToolSpec, profile: CapabilityProfile) -> GuardrailOutcome:
    """Runs after the gate: denied effect classes are refused whatever approvals said."""
    if bypasses_gate(spec, profile):
        return Allow()
    denied = spec.effects & profile.denied_effects
    if denied:
        names = ", ".join(sorted(e.value for e in denied))
        reason = f"{spec.name} is refused in {profile.label} mode: its effects ({names}) are denied"
        return Deny(reason, denied)
    return Allow()


def build_system_prompt(
    profile: CapabilityProfile,
    tools: tuple[ToolSpec, ...],
    autonomy: Autonomy,
    transport: Transport = Transport.BUILTIN,
) -> str:
    """The capability preamble (naming exactly ``tools``) plus the mode's guidance lines whose
    named tools are all present."""
    names = {t.name for t in tools}
    posture = (
        "read-only: you cannot change files, commit or run commands that change anything"
        if profile.posture is WorktreePosture.READ_ONLY
        else "writable"
    )
    lines = [
        f"# Mode: {profile.label}",
        f"The worktree is {posture}.",
        "Tools available this turn (and no others):",
    ]
    lines += [f"- {t.name} ({t.tier.label}): {t.description}" for t in tools]
    if not tools:
        lines.append("- none")
    lines.append("")
    lines += [g.text for g in profile.guidance if g.names <= names]
    if profile.clarifying_hint and autonomy is not Autonomy.YOLO and ASK_USER in names:
        lines.append(profile.clarifying_hint)
    if transport_spec(transport).external and profile.read_only:
        lines.append("This mode is enforced by convention on this transport: do not modify anything.")
    return "\n".join(lines)
