"""The Changes value: what a panel asks of it, and two changes as one."""

from __future__ import annotations

from control_center.core.op_changes import EVERY, EVERYTHING, Changes, keys
from control_center.store.changes import ChangeBatch


def test_an_empty_value_is_false_and_any_part_makes_it_true() -> None:
    assert not Changes()
    assert Changes(rules=True)
    assert Changes(error="no")
    assert Changes(expiring=((object(), "expires in 1 min"),))
    assert Changes(spaces=keys("s1"))
    assert not Changes(spaces=keys(None))
    assert Changes(presence=())  # nobody else here any more is news


def test_a_panel_is_concerned_by_its_space_and_by_every_space_only() -> None:
    mine = Changes(messages=keys("s1"), pipelines=keys("s1"))
    assert mine.conversation_of("s1")
    assert not mine.conversation_of("s2")
    assert mine.pipelines_of("s1")
    assert not mine.pipelines_of("s2")
    assert Changes(pipelines=keys("")).pipelines_of("s2")  # a pipeline of no space: any panel
    assert EVERYTHING.conversation_of("s2")
    assert EVERYTHING.pipelines_of("s2")
    assert not Changes(turns=keys("s1")).space_list()
    assert Changes(rules=True).rule_list()
    assert not Changes(rules=True).inbox()
    assert Changes(approvals=keys("a1")).rule_list()  # a scoped grant makes a rule


def test_two_changes_as_one_keep_every_part_and_the_later_payload() -> None:
    first = Changes(spaces=keys("s1"), error="one", states={"s1": "old"})
    second = Changes(spaces=keys("s2"), approvals=EVERY, error="two", states={"s1": "new"})
    both = first | second
    assert both.spaces == {"s1", "s2"}
    assert both.approvals == EVERY
    assert both.error == "one; two"
    assert both.states == {"s1": "new"}


def test_another_processes_changes_are_the_same_value() -> None:
    batch = ChangeBatch({"approval": {"s1"}, "message": {"c1", "c-thread"}, "plan": {"s2"}})
    changes = batch.as_changes({"c1": "s1"})
    assert changes.approvals == EVERY  # the row names its space; the Inbox reads what moved
    assert changes.turns == {"s1", "s2"}
    assert changes.messages == {"s1"}  # a thread's conversation is no space's
    assert changes.pipelines == {"s2"}
    assert not changes.spaces
    assert ChangeBatch({"*": {""}}).as_changes({}) == EVERYTHING
    assert ChangeBatch({"grant_rule": {"s1"}}).as_changes({}).rules
