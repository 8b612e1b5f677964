"""Every transport's facts, declared once (SPEC §9): its name and labels, what it needs
installed, which model providers its endpoint may come from, whether its agent's own tools are
outside our surface, where its driver lives, and what holds for a turn on it (per read-only or
Agent mode, with or without the OS layer).

The surface, the guarantees, ``surface --json``, the widgets and the CLI read this table; a new
transport is one declaration here (and a name in ``modes.Transport``) plus its driver module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from control_center.core.guarantees import Guarantee, Layer
from control_center.core.modes import Transport

_VERBS = (Layer.SURFACE, Layer.GATE, Layer.GUARDRAIL)


@dataclass(frozen=True)
class Holds:
    """What holds in one cell of a transport's table (read-only or not × OS layer or not)."""

    layers: tuple[Layer, ...]
    summary: str
    #: The composer's line; None: the layers ("Holding: …"); "" : no line at all.
    note: str | None = None
    #: The read-only posture rests on the command-line hook alone (no OS layer on this host).
    hook_alone: bool = False


@dataclass(frozen=True)
class TransportSpec:
    name: Transport
    #: The short name (the composer's picker).
    label: str
    #: Settings ▸ Transport's entry: the name and what enforces a read-only mode on it.
    settings_label: str
    #: Its agent runs in a process of its own with tools of its own: they are outside our
    #: surface (an allowlist refuses an omitted tool whatever its tier; only verbs are ours).
    external: bool
    #: What must be installed for a turn to start ("" for nothing), said by ``doctor``.
    needs: str
    #: Model providers the mode's endpoint may come from ("*": any).
    providers: tuple[str, ...]
    #: ``module:Class`` of its driver (the harness imports it on first use).
    driver: str
    #: (read-only mode, OS layer) -> what holds.
    holds: Mapping[tuple[bool, bool], Holds]
    #: The CLI version its tests ran against (None: nothing to pin).
    tested_version: str | None = None
    #: The settings key naming its CLI (None: it starts no CLI), the command looked up on PATH
    #: without it, and ``module:function`` resolving it (``(path, None)`` or ``(None, problem)``).
    cli_setting: str | None = None
    cli_command: str = ""
    find_cli: str = ""
    #: How the tested version is installed.
    install: str = ""

    def guarantee(self, read_only: bool, os_layer: bool) -> Guarantee:
        cell = self.holds[(read_only, os_layer)]
        return Guarantee(cell.layers, cell.summary, cell.hook_alone)


BUILTIN = TransportSpec(
    name=Transport.BUILTIN,
    label="Built-in harness",
    settings_label="Built-in harness (full enforcement)",
    external=False,
    needs="",
    providers=("*",),
    driver="control_center.harness.loop:BuiltinDriver",
    holds={
        (False, True): Holds(
            (*_VERBS, Layer.PROMPT),
            "Built-in harness: surface, gate and guardrail hold; commands run in a sandbox that "
            "sees neither the workspace nor your home or keyring.",
            note="",
        ),
        (False, False): Holds(
            (*_VERBS, Layer.PROMPT), "Built-in harness: surface, gate and guardrail hold.", note=""
        ),
        (True, True): Holds(
            (*_VERBS, Layer.OS_LAYER, Layer.PROMPT),
            "Built-in harness: surface, gate and guardrail hold; commands run on a read-only file system.",
            note="",
        ),
        (True, False): Holds(
            (*_VERBS, Layer.PROMPT),
            "Built-in harness: surface, gate and guardrail hold; bubblewrap is not available, "
            "so commands are not run on a read-only file system.",
        ),
    },
)

CLAUDE_CODE = TransportSpec(
    name=Transport.CLAUDE_CODE,
    label="Claude Code",
    settings_label="Claude Code (OS layer + hook in read-only modes)",
    external=True,
    needs="the Claude Code CLI (`claude`; packaging/install_claude_code.sh)",
    providers=("anthropic", "scripted"),
    driver="control_center.harness.transports.claude_code:ClaudeCodeDriver",
    tested_version="2.1.328",
    cli_setting="claude_cli",
    cli_command="claude",
    find_cli="control_center.harness.transports.claude_code:find_claude_cli",
    install="bash packaging/install_claude_code.sh",
    holds={
        (False, True): Holds(
            (Layer.PROMPT,),
            "Claude Code in Agent mode: Claude's own permission mode and the prompt; nothing is refused."
            " Claude and its commands run in a sandbox that sees neither the workspace nor your home "
            "or keyring, and the API key stays on the host.",
            note="Claude Code in Agent mode: nothing is refused (prompt only).",
        ),
        (False, False): Holds(
            (Layer.PROMPT,),
            "Claude Code in Agent mode: Claude's own permission mode and the prompt; nothing is refused."
            " The API key stays on the host.",
            note="Claude Code in Agent mode: nothing is refused (prompt only).",
        ),
        # Surface, gate and guardrail hold for the mode's verbs, served over MCP by the product;
        # Claude's own tools cannot be made invisible or gated by us: the OS layer or the hook holds.
        (True, True): Holds(
            (*_VERBS, Layer.OS_LAYER, Layer.HOOK, Layer.PROMPT),
            "Claude Code under the OS layer: the file system is read-only for Claude and every command "
            "it runs, and its network reaches the model endpoint's Messages API (the API key stays on "
            "the host) and the turn's MCP server alone; the "
            "mode's verbs (over MCP) pass our surface, gate and guardrail; the hook checks command "
            "lines too.",
        ),
        (True, False): Holds(
            (*_VERBS, Layer.HOOK, Layer.PROMPT),
            "Claude Code without the OS layer (bubblewrap missing or not working here): the mode's verbs "
            "pass our surface, gate and guardrail, but for Claude's own tools and commands the guarantee "
            "is the hook alone — a command-line check, not a boundary.",
            note="No OS layer here: for Claude's own tools the hook alone holds "
            "(surface · gate · guardrail · hook · prompt).",
            hook_alone=True,
        ),
    },
)

CODEX = TransportSpec(
    name=Transport.CODEX,
    label="Codex",
    settings_label="Codex (OS layer or Codex's read-only sandbox in read-only modes)",
    external=True,
    needs="the Codex CLI (`codex`; packaging/install_codex.sh)",
    providers=("openai",),
    driver="control_center.harness.transports.codex:CodexDriver",
    tested_version="0.169.0",
    cli_setting="codex_cli",
    cli_command="codex",
    find_cli="control_center.harness.transports.codex:find_codex_cli",
    install="bash packaging/install_codex.sh",
    holds={
        # Agent mode: Codex's workspace-write sandbox; each command Codex asks to run outside
        # its trusted list is an Inbox item decided by our gate (autonomy), refused by our
        # guardrail; the key stays with the host's gateway.
        (False, True): Holds(
            (Layer.GATE, Layer.AGENT_SANDBOX, Layer.PROMPT),
            "Codex in Agent mode: Codex's workspace-write sandbox; every command Codex asks to run "
            "(outside its own read-only list) waits in the Inbox as your autonomy says; the API key "
            "stays on the host.",
            note="Codex in Agent mode: its workspace-write sandbox; commands it asks for wait in the Inbox.",
        ),
        (False, False): Holds(
            (Layer.GATE, Layer.AGENT_SANDBOX, Layer.PROMPT),
            "Codex in Agent mode: Codex's workspace-write sandbox; every command Codex asks to run "
            "(outside its own read-only list) waits in the Inbox as your autonomy says; the API key "
            "stays on the host.",
            note="Codex in Agent mode: its workspace-write sandbox; commands it asks for wait in the Inbox.",
        ),
        # Codex's own sandbox does not nest inside ours (its bubblewrap needs a user namespace
        # the OS layer does not give): under the OS layer ours alone holds for its commands.
        (True, True): Holds(
            (*_VERBS, Layer.OS_LAYER, Layer.PROMPT),
            "Codex under the OS layer: the file system is read-only for Codex and every command it "
            "runs, and its network reaches the model endpoint's Responses API (the API key stays on "
            "the host) and the turn's MCP server alone; the mode's verbs (over MCP) pass our surface, "
            "gate and guardrail; Codex asks for no approval (its policy is never).",
        ),
        (True, False): Holds(
            (*_VERBS, Layer.AGENT_SANDBOX, Layer.PROMPT),
            "Codex without the OS layer (bubblewrap missing or not working here): Codex's own "
            "read-only sandbox holds for its commands, the mode's verbs pass our surface, gate and "
            "guardrail; the API key stays on the host.",
            note="No OS layer here: for Codex's own commands its read-only sandbox holds "
            "(surface · gate · guardrail · agent sandbox · prompt).",
        ),
    },
)

#: Every transport, in display order.
TRANSPORTS: Mapping[Transport, TransportSpec] = MappingProxyType(
    {spec.name: spec for spec in (BUILTIN, CLAUDE_CODE, CODEX)}
)


def transport_spec(transport: Transport) -> TransportSpec:
    return TRANSPORTS[transport]
