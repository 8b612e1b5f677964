"""Property tests: over every mode x autonomy x transport the surface, the approval gate, the
guardrail and the system prompt agree with the capability profile (SPEC §3, §4)."""

from __future__ import annotations

import re
from dataclasses import replace
from types import MappingProxyType

from hypothesis import given
from hypothesis import strategies as st

from control_center.core.modes import Autonomy, Effect, Mode, Tier, Transport
from control_center.core.profiles import (
    ASK_USER,
    MODE_VERBS,
    PROFILES,
    WORLD_CHANGING_EFFECTS,
    CapabilityProfile,
    profile_for,
)
from control_center.core.surface import (
    Allow,
    Deny,
    build_system_prompt,
    bypasses_gate,
    guardrail,
    materialize_surface,
    needs_approval,
)
from control_center.core.tools import CATALOGUE, ToolSpec, tool

modes = st.sampled_from(list(Mode))
autonomies = st.sampled_from(list(Autonomy))
transports = st.sampled_from(list(Transport))
catalogue_tools = st.sampled_from(list(CATALOGUE.values()))
READ_ONLY_MODES = (Mode.PLAN, Mode.REVIEW, Mode.ORCHESTRATE)


def _names(mode: Mode, autonomy: Autonomy, transport: Transport) -> set[str]:
    return {t.name for t in materialize_surface(profile_for(mode), autonomy, transport)}


def _prompt(mode: Mode, autonomy: Autonomy, transport: Transport) -> str:
    p = profile_for(mode)
    return build_system_prompt(p, materialize_surface(p, autonomy, transport), autonomy, transport)


def _synthetic(tier: Tier, *effects: Effect, name: str = "synthetic_tool") -> ToolSpec:
    return ToolSpec(name, tier, frozenset(effects), "a tool no catalogue has", MappingProxyType({}))


# -- the surface ----------------------------------------------------------------------------------


@given(modes, autonomies, transports)
def test_surface_is_catalogue_ordered_unique_and_autonomy_blind(
    mode: Mode, autonomy: Autonomy, transport: Transport
) -> None:
    surface = materialize_surface(profile_for(mode), autonomy, transport)
    names = [t.name for t in surface]
    assert len(names) == len(set(names))
    assert names == [n for n in CATALOGUE if n in set(names)]
    # Autonomy decides approvals, never visibility.
    for other in Autonomy:
        assert materialize_surface(profile_for(mode), other, transport) == surface


@given(st.sampled_from(READ_ONLY_MODES), autonomies, transports)
def test_read_only_modes_carry_no_world_changing_tool(
    mode: Mode, autonomy: Autonomy, transport: Transport
) -> None:
    profile = profile_for(mode)
    for spec in materialize_surface(profile, autonomy, transport):
        assert not spec.effects & WORLD_CHANGING_EFFECTS, spec.name
        assert spec.tier < Tier.EXECUTE, spec.name
        if mode is Mode.REVIEW:
            # Capped below execute; at the write tier only the curated review/ticket/comms list.
            if spec.tier >= Tier.WRITE:
                assert profile.allowlist is not None
                assert spec.name in profile.allowlist
        else:
            assert spec.tier is Tier.READ, f"{spec.name} on the {mode} surface"


@given(autonomies, transports)
def test_plan_and_orchestrate_surfaces_hold_no_write_tool(autonomy: Autonomy, transport: Transport) -> None:
    for mode in (Mode.PLAN, Mode.ORCHESTRATE):
        names = _names(mode, autonomy, transport)
        for writer in ("write_file", "edit_file", "delete_file", "git_commit", "run_command", "git_push"):
            assert writer not in names


@given(autonomies, transports)
def test_review_surface_is_exactly_the_curated_write_tools(autonomy: Autonomy, transport: Transport) -> None:
    profile = profile_for(Mode.REVIEW)
    surface = materialize_surface(profile, autonomy, transport)
    writers = {t.name for t in surface if t.tier >= Tier.WRITE}
    assert writers == profile.allowlist


@given(autonomies, transports)
def test_chat_surface_is_everything_but_other_modes_verbs(autonomy: Autonomy, transport: Transport) -> None:
    expected = {n for n in CATALOGUE if n not in MODE_VERBS} | {"report_progress"}
    assert _names(Mode.CHAT, autonomy, transport) == expected
    assert {"run_command", "write_file", "git_push", "install_package"} <= expected


@given(modes, autonomies, transports)
def test_output_verb_is_on_the_surface_and_bypasses_gate_and_guardrail(
    mode: Mode, autonomy: Autonomy, transport: Transport
) -> None:
    profile = profile_for(mode)
    if profile.output_verb is None:
        return
    verb = tool(profile.output_verb)
    assert verb in materialize_surface(profile, autonomy, transport)
    assert bypasses_gate(verb, profile)
    assert not needs_approval(verb, profile, autonomy)
    assert guardrail(verb, profile) == Allow()


@given(modes, autonomies)
def test_pinned_verbs_survive_any_profile_restriction(mode: Mode, autonomy: Autonomy) -> None:
    # Even a profile that caps every tier, denies every effect and names nothing keeps its
    # deliverable and ask_user: no setting can silence a mode's deliverable.
    base = profile_for(mode)
    strangled = replace(
        base,
        allowlist=frozenset(),
        denylist=frozenset(CATALOGUE),
        denied_effects=frozenset(Effect),
    )
    for transport in Transport:
        names = {t.name for t in materialize_surface(strangled, autonomy, transport)}
        assert names == set(base.pinned)
        for name in names:
            assert guardrail(tool(name), strangled) == Allow()
            assert not needs_approval(tool(name), strangled, autonomy)


@given(modes, autonomies, transports)
def test_ask_user_is_everywhere_and_never_asks(mode: Mode, autonomy: Autonomy, transport: Transport) -> None:
    profile = profile_for(mode)
    ask = tool(ASK_USER)
    assert ask.tier is Tier.READ
    assert ask in materialize_surface(profile, autonomy, transport)
    assert bypasses_gate(ask, profile)
    assert not needs_approval(ask, profile, autonomy)
    assert guardrail(ask, profile) == Allow()


@given(modes, autonomies, transports)
def test_every_surface_tool_passes_the_guardrail(
    mode: Mode, autonomy: Autonomy, transport: Transport
) -> None:
    profile = profile_for(mode)
    for spec in materialize_surface(profile, autonomy, transport):
        assert not spec.effects & profile.denied_effects, spec.name
        assert guardrail(spec, profile) == Allow(), spec.name


@given(modes, catalogue_tools)
def test_guardrail_refuses_exactly_the_denied_effects(mode: Mode, spec: ToolSpec) -> None:
    profile = profile_for(mode)
    outcome = guardrail(spec, profile)
    denied = spec.effects & profile.denied_effects
    if denied and not bypasses_gate(spec, profile):
        assert isinstance(outcome, Deny)
        assert outcome.effects == denied
        assert spec.name in outcome.reason
        assert all(e.value in outcome.reason for e in denied)
    else:
        assert outcome == Allow()


@given(modes, st.sets(st.sampled_from([Effect.NETWORK_EGRESS, Effect.SECRET_ACCESS]), min_size=1))
def test_network_and_secrets_are_never_denied(mode: Mode, effects: set[Effect]) -> None:
    profile = profile_for(mode)
    assert guardrail(_synthetic(Tier.READ, *effects), profile) == Allow()
    assert not profile.denied_effects & {Effect.NETWORK_EGRESS, Effect.SECRET_ACCESS}


@given(st.sampled_from(READ_ONLY_MODES), st.sampled_from(sorted(WORLD_CHANGING_EFFECTS)))
def test_read_only_guardrail_denies_every_world_changing_effect_even_on_a_network_tool(
    mode: Mode, effect: Effect
) -> None:
    outcome = guardrail(_synthetic(Tier.READ, Effect.NETWORK_EGRESS, effect), profile_for(mode))
    assert isinstance(outcome, Deny)
    assert outcome.effects == {effect}


# -- the approval gate (SPEC §4 table) ------------------------------------------------------------


def _expected_approval(spec: ToolSpec, autonomy: Autonomy) -> bool:
    if not spec.effects:
        return False
    if autonomy is Autonomy.ASK:
        return True
    if autonomy is Autonomy.AUTO_EDIT:
        return bool(spec.effects - {Effect.WORKTREE_WRITE})
    return False


@given(modes, autonomies, catalogue_tools)
def test_needs_approval_follows_the_autonomy_table(mode: Mode, autonomy: Autonomy, spec: ToolSpec) -> None:
    profile = profile_for(mode)
    expected = False if bypasses_gate(spec, profile) else _expected_approval(spec, autonomy)
    assert needs_approval(spec, profile, autonomy) is expected


@given(
    modes,
    autonomies,
    st.sets(st.sampled_from(list(Effect))),
    st.sampled_from(list(Tier)),
)
def test_needs_approval_on_any_effect_combination(
    mode: Mode, autonomy: Autonomy, effects: set[Effect], tier: Tier
) -> None:
    spec = _synthetic(tier, *effects)
    assert needs_approval(spec, profile_for(mode), autonomy) is _expected_approval(spec, autonomy)


def test_needs_approval_table_spot_checks() -> None:
    chat = profile_for(Mode.CHAT)
    write, run, fetch, read = tool("write_file"), tool("run_command"), tool("fetch_url"), tool("read_file")
    assert needs_approval(write, chat, Autonomy.ASK)
    assert not needs_approval(write, chat, Autonomy.AUTO_EDIT)
    assert needs_approval(run, chat, Autonomy.AUTO_EDIT)
    assert needs_approval(fetch, chat, Autonomy.AUTO_EDIT)
    assert not needs_approval(run, chat, Autonomy.AUTO)
    assert not needs_approval(run, chat, Autonomy.YOLO)
    for level in Autonomy:
        assert not needs_approval(read, chat, level)
        assert not needs_approval(tool("create_ticket"), profile_for(Mode.REVIEW), level)


# -- the system prompt ----------------------------------------------------------------------------


@given(modes, autonomies, transports)
def test_prompt_names_exactly_the_materialized_tools(
    mode: Mode, autonomy: Autonomy, transport: Transport
) -> None:
    names = _names(mode, autonomy, transport)
    prompt = _prompt(mode, autonomy, transport)
    for name in names:
        assert re.search(rf"^- {re.escape(name)} \(", prompt, re.MULTILINE), f"{name} not listed"
    for name in set(CATALOGUE) - names:
        assert not re.search(rf"\b{re.escape(name)}\b", prompt), f"off-surface {name} named in {mode} prompt"
    assert f"# Mode: {profile_for(mode).label}" in prompt


@given(modes, autonomies, transports)
def test_prompt_lists_each_tool_with_its_tier(mode: Mode, autonomy: Autonomy, transport: Transport) -> None:
    profile = profile_for(mode)
    tools = materialize_surface(profile, autonomy, transport)
    listed = re.findall(
        r"^- (\w+) \((\w+)\):", build_system_prompt(profile, tools, autonomy, transport), re.M
    )
    assert listed == [(t.name, t.tier.label) for t in tools]


@given(autonomies, transports)
def test_yolo_drops_plan_modes_clarifying_hint(autonomy: Autonomy, transport: Transport) -> None:
    hint = profile_for(Mode.PLAN).clarifying_hint
    assert hint
    prompt = _prompt(Mode.PLAN, autonomy, transport)
    if autonomy is Autonomy.YOLO:
        assert hint not in prompt
    else:
        assert hint in prompt


def test_prompt_with_no_tools_names_none_and_hides_guidance_for_missing_tools() -> None:
    plan = profile_for(Mode.PLAN)
    prompt = build_system_prompt(plan, (), Autonomy.ASK)
    assert "- none" in prompt
    for name in CATALOGUE:
        assert not re.search(rf"\b{name}\b", prompt), name
    # The clarifying hint names ask_user, so it goes when ask_user is not offered.
    assert plan.clarifying_hint not in prompt


@given(st.sampled_from(READ_ONLY_MODES), autonomies)
def test_claude_code_read_only_prompt_says_guidance_only(mode: Mode, autonomy: Autonomy) -> None:
    assert "by convention" in _prompt(mode, autonomy, Transport.CLAUDE_CODE)
    assert "by convention" not in _prompt(mode, autonomy, Transport.BUILTIN)
    assert "read-only" in _prompt(mode, autonomy, Transport.BUILTIN)


@given(autonomies, transports)
def test_chat_prompt_is_writable(autonomy: Autonomy, transport: Transport) -> None:
    prompt = _prompt(Mode.CHAT, autonomy, transport)
    assert "The worktree is writable." in prompt
    assert "by convention" not in prompt


# -- mode verbs and the allowlist -----------------------------------------------------------------


@given(modes, autonomies, transports)
def test_mode_verbs_appear_only_on_their_own_modes_surface(
    mode: Mode, autonomy: Autonomy, transport: Transport
) -> None:
    profile = profile_for(mode)
    on_surface = _names(mode, autonomy, transport) & MODE_VERBS
    assert on_surface == profile.own_verbs
    for other in PROFILES.values():
        if other.mode is not mode:
            assert not on_surface & other.own_verbs


@given(autonomies)
def test_review_read_tools_reachable_on_builtin_but_not_on_claude_code(autonomy: Autonomy) -> None:
    profile = profile_for(Mode.REVIEW)
    assert profile.allowlist is not None
    reads = {n for n, s in CATALOGUE.items() if s.tier is Tier.READ and n not in MODE_VERBS}
    unlisted_reads = reads - profile.allowlist
    assert {"read_file", "git_diff", "fetch_url"} <= unlisted_reads
    builtin = _names(Mode.REVIEW, autonomy, Transport.BUILTIN)
    claude = _names(Mode.REVIEW, autonomy, Transport.CLAUDE_CODE)
    assert unlisted_reads <= builtin
    assert not (unlisted_reads - profile.pinned) & claude
    # On Claude Code only the allowlist and the pinned tools remain.
    assert claude == set(profile.allowlist) | set(profile.pinned)


# -- arbitrary profiles: the projections follow the declaration, not the mode's name --------------

_restrictions = st.fixed_dictionaries(
    {
        "max_tier": st.sampled_from(list(Tier)),
        "allowlist": st.none() | st.frozensets(st.sampled_from(list(CATALOGUE))),
        "denylist": st.frozensets(st.sampled_from(list(CATALOGUE))),
        "denied_effects": st.frozensets(st.sampled_from(list(Effect))),
    }
)


@given(modes, _restrictions, autonomies, transports)
def test_surface_of_any_profile_obeys_its_restrictions(
    mode: Mode, restrictions: dict[str, object], autonomy: Autonomy, transport: Transport
) -> None:
    profile: CapabilityProfile = replace(profile_for(mode), **restrictions)  # type: ignore[arg-type]
    surface = materialize_surface(profile, autonomy, transport)
    names = {t.name for t in surface}
    assert profile.pinned <= names
    for spec in surface:
        if spec.name in profile.pinned:
            continue
        assert spec.tier <= profile.max_tier
        assert spec.name not in profile.denylist
        assert not spec.effects & profile.denied_effects
        assert spec.name not in MODE_VERBS or spec.name in profile.own_verbs
        if profile.allowlist is not None and spec.name not in profile.allowlist:
            assert transport is Transport.BUILTIN
            assert spec.tier is Tier.READ
        assert guardrail(spec, profile) == Allow()
    # Conversely, a tool that breaks no rule is on the surface.
    for spec in CATALOGUE.values():
        allowed = (
            spec.tier <= profile.max_tier
            and spec.name not in profile.denylist
            and not spec.effects & profile.denied_effects
            and (spec.name not in MODE_VERBS or spec.name in profile.own_verbs)
            and (
                profile.allowlist is None
                or spec.name in profile.allowlist
                or (transport is Transport.BUILTIN and spec.tier is Tier.READ)
            )
        )
        assert (spec.name in names) is (allowed or spec.name in profile.pinned), spec.name
