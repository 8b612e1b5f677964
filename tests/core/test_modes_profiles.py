"""The closed vocabularies, the tool catalogue and the capability profiles match SPEC §2-§4 and
the tool-input contract of §11 to the letter."""

from __future__ import annotations

import pytest

from control_center.core.modes import Autonomy, Effect, Mode, Tier, Transport, WorktreePosture, parse_enum
from control_center.core.profiles import (
    ASK_USER,
    DISPATCH_DEFAULT_MODE,
    MODE_VERBS,
    OPERATOR_MODES,
    PR_SPACE_MODE,
    PROFILES,
    WORLD_CHANGING_EFFECTS,
    profile_for,
)
from control_center.core.tools import CATALOGUE, tool

# -- vocabularies ---------------------------------------------------------------------------------


def test_exactly_four_modes_with_contract_values() -> None:
    assert [m.value for m in Mode] == ["chat", "review", "plan", "orchestrate"]


def test_autonomy_levels_and_transports_use_the_cli_spelling() -> None:
    assert [a.value for a in Autonomy] == ["ask", "auto_edit", "auto", "yolo"]
    assert {t.value for t in Transport} == {"builtin", "claude-code", "codex"}


def test_tiers_are_ordered_read_write_execute() -> None:
    assert Tier.READ < Tier.WRITE < Tier.EXECUTE
    assert [t.label for t in sorted(Tier)] == ["read", "write", "execute"]


def test_parse_enum_is_exact_and_names_the_allowed_values() -> None:
    assert parse_enum(Mode, "plan", "mode") is Mode.PLAN
    with pytest.raises(
        ValueError, match=r"unknown mode 'Plan'; expected one of: chat, review, plan, orchestrate"
    ):
        parse_enum(Mode, "Plan", "mode")
    with pytest.raises(ValueError, match="unknown autonomy level 'never'"):
        parse_enum(Autonomy, "never", "autonomy level")


# -- effect classes (SPEC §4) ---------------------------------------------------------------------


def test_world_changing_effects_are_the_twelve_of_spec_4() -> None:
    assert {
        Effect.FILE_DELETE,
        Effect.WORKTREE_WRITE,
        Effect.OUTSIDE_WRITE,
        Effect.COMMIT,
        Effect.PUSH,
        Effect.PR_CREATE,
        Effect.PR_PUBLISH,
        Effect.VENDOR_SYNC,
        Effect.PACKAGE_INSTALL,
        Effect.PROCESS_SPAWN,
        Effect.WORKSPACE_MUTATION,
        Effect.ENCLOSURE_CONTROL,
    } == WORLD_CHANGING_EFFECTS
    assert Effect.NETWORK_EGRESS not in WORLD_CHANGING_EFFECTS
    assert Effect.SECRET_ACCESS not in WORLD_CHANGING_EFFECTS
    assert set(Effect) == WORLD_CHANGING_EFFECTS | {Effect.NETWORK_EGRESS, Effect.SECRET_ACCESS}


# -- the tool catalogue (SPEC §4 table) -----------------------------------------------------------

_R, _W, _X = Tier.READ, Tier.WRITE, Tier.EXECUTE
EXPECTED_TOOLS: dict[str, tuple[Tier, frozenset[Effect]]] = {
    "read_file": (_R, frozenset()),
    "list_files": (_R, frozenset()),
    "search_files": (_R, frozenset()),
    "git_status": (_R, frozenset()),
    "git_diff": (_R, frozenset()),
    "git_log": (_R, frozenset()),
    "fetch_url": (_R, frozenset({Effect.NETWORK_EGRESS})),
    "ask_user": (_R, frozenset()),
    "report_progress": (_R, frozenset()),
    "plan_respond": (_R, frozenset()),
    "write_file": (_W, frozenset({Effect.WORKTREE_WRITE})),
    "edit_file": (_W, frozenset({Effect.WORKTREE_WRITE})),
    "delete_file": (_W, frozenset({Effect.FILE_DELETE})),
    "git_commit": (_W, frozenset({Effect.COMMIT})),
    "add_review_node": (_W, frozenset()),
    "finalize_review": (_W, frozenset()),
    "confirm_review_node": (_W, frozenset()),
    "create_ticket": (_W, frozenset()),
    "post_message": (_W, frozenset()),
    "run_command": (_X, frozenset({Effect.PROCESS_SPAWN})),
    "git_push": (_X, frozenset({Effect.PUSH})),
    "create_pr": (_X, frozenset({Effect.PR_CREATE})),
    "install_package": (_X, frozenset({Effect.PACKAGE_INSTALL})),
    "submit_plan": (_R, frozenset()),
    "exit_plan_mode": (_R, frozenset()),
    "propose_orchestration": (_R, frozenset()),
}


def test_catalogue_holds_the_minimum_set_with_tiers_and_effects() -> None:
    missing = set(EXPECTED_TOOLS) - set(CATALOGUE)
    assert not missing, f"catalogue lacks {sorted(missing)}"
    for name, (tier, effects) in EXPECTED_TOOLS.items():
        spec = tool(name)
        assert spec.name == name
        assert (spec.tier, spec.effects) == (tier, effects), name
        assert spec.description.strip(), f"{name} has no description for the model"


# The §11 input contract: (required keys, optional keys) of each model-facing schema.
INPUT_KEYS: dict[str, tuple[set[str], set[str]]] = {
    "read_file": ({"path"}, set()),
    "list_files": (set(), {"path", "recursive"}),
    "search_files": ({"pattern"}, {"path"}),
    "write_file": ({"path", "content"}, set()),
    "edit_file": ({"path", "old", "new"}, set()),
    "delete_file": ({"path"}, set()),
    "run_command": ({"command"}, {"timeout_s"}),
    "ask_user": ({"question"}, set()),
    "report_progress": ({"message"}, set()),
    "plan_respond": ({"response"}, {"needs_more_exploration"}),
    "submit_plan": ({"goal", "nodes"}, set()),
    "exit_plan_mode": (set(), {"summary"}),
    "add_review_node": ({"kind", "title"}, {"priority", "confidence", "body", "anchor"}),
    "finalize_review": ({"verdict"}, {"summary"}),
    "confirm_review_node": ({"node_id"}, set()),
    "create_ticket": ({"title"}, {"body", "parent"}),
    "post_message": ({"text"}, {"to"}),
    "propose_orchestration": ({"goal", "roles", "tickets", "synthesis", "budget"}, set()),
}


@pytest.mark.parametrize("name", sorted(INPUT_KEYS))
def test_tool_input_schemas_follow_the_contract(name: str) -> None:
    required, optional = INPUT_KEYS[name]
    schema = tool(name).schema_dict()
    assert schema["type"] == "object"
    assert set(schema.get("required", [])) == required
    # Extra optional fields are fine; every contract key must be declared.
    assert required | optional <= set(schema["properties"])


def test_nested_input_contracts() -> None:
    nodes = tool("submit_plan").schema_dict()["properties"]["nodes"]
    assert nodes["type"] == "array"
    assert set(nodes["items"]["required"]) == {"key", "title", "description", "depends_on"}
    assert tool("plan_respond").schema_dict()["properties"]["needs_more_exploration"]["type"] == "boolean"
    review = tool("add_review_node").schema_dict()["properties"]
    assert set(review["kind"]["enum"]) == {"bug", "suggestion", "recommendation", "question", "ticket"}
    assert {"file", "start_line", "end_line"} <= set(review["anchor"]["properties"])
    assert set(tool("finalize_review").schema_dict()["properties"]["verdict"]["enum"]) == {
        "ship",
        "hold",
        "block",
    }
    orch = tool("propose_orchestration").schema_dict()["properties"]
    assert set(orch["roles"]["items"]["required"]) == {"name", "instructions"}
    assert {"key", "title", "role", "children"} <= set(orch["tickets"]["items"]["properties"])
    assert set(orch["synthesis"]["required"]) == {"role", "instructions"}
    assert {"max_tokens", "max_usd"} <= set(orch["budget"]["properties"])


def test_schemas_are_frozen_but_thaw_to_independent_copies() -> None:
    spec = tool("write_file")
    with pytest.raises(TypeError):
        spec.input_schema["type"] = "array"  # type: ignore[index]
    copy = spec.schema_dict()
    copy["required"].append("mode")
    assert tool("write_file").schema_dict()["required"] == ["path", "content"]


# -- the profiles (SPEC §3 table) -----------------------------------------------------------------


def test_every_mode_has_exactly_one_profile() -> None:
    assert set(PROFILES) == set(Mode)
    for mode in Mode:
        assert profile_for(mode).mode is mode


def test_chat_profile() -> None:
    p = profile_for(Mode.CHAT)
    assert p.label == "Agent"
    assert p.operator_selectable
    assert p.max_tier is Tier.EXECUTE
    assert p.allowlist is None
    assert p.denied_effects == frozenset()
    assert p.output_verb is None
    assert not p.has_completion_contract
    assert p.posture is WorktreePosture.WRITABLE
    assert not p.read_only


def test_plan_profile() -> None:
    p = profile_for(Mode.PLAN)
    assert p.label == "Plan"
    assert p.operator_selectable
    assert p.max_tier is Tier.READ
    assert p.output_verb == "submit_plan"
    # exit_plan_mode is an approval gate, not an output verb.
    assert "exit_plan_mode" not in p.pinned
    assert p.pinned == {"submit_plan", ASK_USER}
    assert p.denied_effects == WORLD_CHANGING_EFFECTS
    assert p.read_only
    assert p.clarifying_hint
    assert p.nudge
    assert "submit_plan" in p.nudge
    # The reminder must allow an honest exit (SPEC §5).
    assert "no plan is needed" in p.nudge.lower()


def test_review_profile() -> None:
    p = profile_for(Mode.REVIEW)
    assert p.label == "Review"
    assert not p.operator_selectable
    assert p.max_tier is Tier.WRITE  # capped below execute
    assert p.allowlist == {
        "add_review_node",
        "finalize_review",
        "confirm_review_node",
        "create_ticket",
        "post_message",
    }
    assert p.output_verb is None  # both review verbs may be called zero times
    assert p.nudge is None
    assert p.denied_effects == WORLD_CHANGING_EFFECTS
    assert p.read_only


def test_orchestrate_profile() -> None:
    p = profile_for(Mode.ORCHESTRATE)
    assert p.label == "Orchestrate"
    assert p.operator_selectable
    assert p.max_tier is Tier.READ
    assert p.output_verb == "propose_orchestration"
    assert p.pinned == {"propose_orchestration", ASK_USER}
    assert p.denied_effects == WORLD_CHANGING_EFFECTS
    assert p.read_only
    assert p.redelivery_cooldown_s == 120.0


def test_only_output_verbs_and_ask_user_are_pinned() -> None:
    for p in PROFILES.values():
        assert ASK_USER in p.pinned
        assert p.pinned - {ASK_USER} == ({p.output_verb} if p.output_verb else set())


def test_read_only_modes_never_deny_network_or_secrets() -> None:
    for p in PROFILES.values():
        assert Effect.NETWORK_EGRESS not in p.denied_effects
        assert Effect.SECRET_ACCESS not in p.denied_effects
        if p.read_only:
            assert p.denied_effects == WORLD_CHANGING_EFFECTS


def test_mode_verbs_are_owned_by_exactly_one_mode() -> None:
    owners: dict[str, list[Mode]] = {}
    for p in PROFILES.values():
        assert p.own_verbs <= MODE_VERBS
        for verb in p.own_verbs:
            owners.setdefault(verb, []).append(p.mode)
    assert set(owners) == MODE_VERBS
    assert all(len(m) == 1 for m in owners.values()), owners
    assert owners["submit_plan"] == owners["exit_plan_mode"] == owners["plan_respond"] == [Mode.PLAN]
    assert owners["propose_orchestration"] == [Mode.ORCHESTRATE]
    assert owners["report_progress"] == [Mode.CHAT]
    # A pinned verb's tier is read (SPEC §4).
    for p in PROFILES.values():
        for verb in p.pinned:
            assert tool(verb).tier is Tier.READ


def test_operator_modes_and_system_defaults() -> None:
    assert OPERATOR_MODES == (Mode.CHAT, Mode.PLAN, Mode.ORCHESTRATE)
    assert DISPATCH_DEFAULT_MODE is Mode.CHAT
    assert PR_SPACE_MODE is Mode.REVIEW
