"""Which layers hold per mode x transport (SPEC §9): one pure function the CLI, the turn's start
event, the UI and the README share."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_center.core.guarantees import Layer, guarantee_for, layers_line, operator_note, readme_table
from control_center.core.modes import Mode, Transport
from control_center.core.profiles import profile_for

READ_ONLY = [Mode.PLAN, Mode.REVIEW, Mode.ORCHESTRATE]


@pytest.mark.parametrize("mode", READ_ONLY)
def test_claude_code_read_only_modes_hold_the_os_layer_only_where_bubblewrap_works(mode: Mode) -> None:
    boxed = guarantee_for(profile_for(mode), Transport.CLAUDE_CODE, os_layer=True)
    assert Layer.OS_LAYER in boxed.layers
    assert Layer.HOOK in boxed.layers
    assert boxed.hook_alone is False
    bare = guarantee_for(profile_for(mode), Transport.CLAUDE_CODE, os_layer=False)
    assert Layer.OS_LAYER not in bare.layers
    assert bare.hook_alone is True
    assert "hook alone" in bare.summary
    assert "hook alone" in (operator_note(profile_for(mode), Transport.CLAUDE_CODE, False) or "")


def test_agent_mode_on_claude_code_claims_nothing_but_the_prompt() -> None:
    g = guarantee_for(profile_for(Mode.CHAT), Transport.CLAUDE_CODE, os_layer=True)
    assert g.layers == (Layer.PROMPT,)
    assert g.hook_alone is False


@pytest.mark.parametrize("mode", list(Mode))
def test_builtin_never_relies_on_the_hook(mode: Mode) -> None:
    for os_layer in (True, False):
        g = guarantee_for(profile_for(mode), Transport.BUILTIN, os_layer)
        assert Layer.HOOK not in g.layers
        assert {Layer.SURFACE, Layer.GATE, Layer.GUARDRAIL} <= set(g.layers)
        assert (Layer.OS_LAYER in g.layers) is (os_layer and profile_for(mode).read_only)


def test_the_builtin_note_appears_only_when_something_is_missing() -> None:
    assert operator_note(profile_for(Mode.PLAN), Transport.BUILTIN, True) is None
    assert operator_note(profile_for(Mode.CHAT), Transport.BUILTIN, False) is None
    assert operator_note(profile_for(Mode.PLAN), Transport.BUILTIN, False) is not None


def test_the_readme_table_has_a_row_per_mode_and_transport() -> None:
    table = readme_table(True)
    assert table.count("\n") == 1 + len(Mode) * len(Transport)
    assert "| Plan | claude-code |" in table
    assert "OS layer" in table


def test_the_readme_says_per_mode_and_transport_what_guarantee_for_says() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for mode in Mode:
        profile = profile_for(mode)
        for transport in Transport:
            with_os = layers_line(guarantee_for(profile, transport, True))
            without = layers_line(guarantee_for(profile, transport, False))
            row = f"| {profile.label} | {transport.value} | {with_os} | {without} |"
            assert row in readme, f"the README's guarantee table lacks or contradicts: {row}"
