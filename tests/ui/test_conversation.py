"""Conversation model and view: streaming, scale, painting every kind, painted buttons."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QAbstractItemModelTester, QTest
from PySide6.QtWidgets import QStyleOptionViewItem

from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.ui.conversation import ConversationModel, ConversationView, ItemRole

DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old\n+new\n same\n"


def one_of_each() -> list[TranscriptItem]:
    tool = ToolView("c1", "edit_file", {"path": "x.py"}, "done", result="ok", diff=DIFF)
    return [
        TranscriptItem("u1", ItemKind.USER, "hello"),
        TranscriptItem(
            "a1", ItemKind.ASSISTANT, "Some **markdown**\n\n- a\n- b\n\n```\ncode\n```", thread_count=1
        ),
        TranscriptItem("th", ItemKind.THINKING, "thinking about it"),
        TranscriptItem("t1", ItemKind.TOOL, tool=tool),
        TranscriptItem(
            "ap",
            ItemKind.APPROVAL,
            "Run git push",
            data={"approval_id": "A1", "status": "pending", "tool": "git_push"},
        ),
        TranscriptItem("q1", ItemKind.QUESTION, "YAML or TOML?"),
        TranscriptItem("nu", ItemKind.NUDGE, "No plan exists yet."),
        TranscriptItem("no", ItemKind.NOTE, "Mode changed"),
        TranscriptItem("er", ItemKind.ERROR, "boom"),
        TranscriptItem(
            "pl", ItemKind.PLAN, data={"plan_id": "P1", "goal": "g", "node_count": 3, "status": "pending"}
        ),
        TranscriptItem("pr", ItemKind.PROPOSAL, data={"goal": "team", "status": "pending"}),
    ]


@pytest.fixture
def model() -> ConversationModel:
    m = ConversationModel()
    QAbstractItemModelTester(m, QAbstractItemModelTester.FailureReportingMode.Fatal, m)
    return m


@pytest.fixture
def view(qtbot, model: ConversationModel) -> ConversationView:
    v = ConversationView()
    qtbot.addWidget(v)
    v.setModel(model)
    v.resize(700, 900)
    v.show()
    qtbot.waitExposed(v)
    return v


def test_model_basic_operations(model: ConversationModel) -> None:
    model.set_items(one_of_each())
    assert model.rowCount() == 11
    assert model.item(0).id == "u1"
    assert model.index(0).data(ItemRole).text == "hello"
    assert model.index(0).data(Qt.ItemDataRole.DisplayRole) == "hello"
    model.append_item(TranscriptItem("u2", ItemKind.USER, "again"))
    assert model.rowCount() == 12
    assert model.row_of("u2") == 11
    done = TranscriptItem("t1", ItemKind.TOOL, tool=ToolView("c1", "edit_file", {}, "error", is_error=True))
    model.replace_item(done)
    tool = model.item(3).tool
    assert tool is not None
    assert tool.status == "error"
    assert "edit_file" in model.index(3).data(Qt.ItemDataRole.DisplayRole)


def test_append_text_updates_only_its_row(model: ConversationModel) -> None:
    model.set_items(one_of_each())
    seen: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom, _roles=None: seen.append((top.row(), bottom.row())))
    model.append_text("a1", " more")
    model.append_text("a1", " and more")
    model.append_text("missing", "x")  # unknown ids are ignored
    assert seen == [(1, 1), (1, 1)]
    assert model.item(1).text.endswith(" more and more")
    assert model.item(0).text == "hello"


def test_hundred_thousand_items(qtbot) -> None:
    # No model tester here: it re-checks the whole model on every change, O(n) per token.
    model = ConversationModel()
    view = ConversationView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(700, 900)
    view.show()
    items = [
        TranscriptItem(f"i{n}", ItemKind.USER if n % 2 else ItemKind.NOTE, f"message {n}")
        for n in range(100_000)
    ]
    start = time.perf_counter()
    model.set_items(items)
    elapsed = time.perf_counter() - start
    assert model.rowCount() == 100_000
    assert model.row_of("i99999") == 99_999
    assert elapsed < 2.0
    # Streaming into the last of 100k rows is a dict lookup, not a scan.
    model.append_item(TranscriptItem("live", ItemKind.ASSISTANT, ""))
    start = time.perf_counter()
    for _ in range(200):
        model.append_text("live", "tok ")
    assert time.perf_counter() - start < 1.0
    assert model.item(100_000).text.count("tok") == 200
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 100_000 * 10, timeout=20_000)


def test_size_hints_for_every_kind(model: ConversationModel, view: ConversationView) -> None:
    model.set_items(one_of_each())
    delegate = view.delegate()
    option = QStyleOptionViewItem()
    for row in range(model.rowCount()):
        hint = delegate.sizeHint(option, model.index(row))
        assert hint.height() > 10, model.item(row).kind
        assert hint.width() > 0


def test_size_hint_is_cached_and_tracks_streaming(model: ConversationModel, view: ConversationView) -> None:
    model.set_items([TranscriptItem("a", ItemKind.ASSISTANT, "short")])
    delegate = view.delegate()
    option = QStyleOptionViewItem()
    before = delegate.sizeHint(option, model.index(0)).height()
    assert delegate.sizeHint(option, model.index(0)).height() == before
    model.append_text("a", "\n\n" + "\n\n".join(f"paragraph {n}" for n in range(10)))
    assert delegate.sizeHint(option, model.index(0)).height() > before


def test_clicking_painted_buttons_emits_signals(
    model: ConversationModel, view: ConversationView, qtbot
) -> None:
    model.set_items(one_of_each())
    view.scrollToTop()
    qtbot.wait(1)  # let the batched layout run

    def click(row: int, name: str) -> None:
        view.scrollTo(model.index(row))
        rect = view.hit_rect(row, name)
        assert rect is not None, name
        QTest.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center()
        )

    with qtbot.waitSignal(view.approval_decision_requested) as grant:
        click(4, "grant")
    assert grant.args == ["A1", "grant"]
    with qtbot.waitSignal(view.approval_decision_requested) as reject:
        click(4, "reject")
    assert reject.args == ["A1", "reject"]
    with qtbot.waitSignal(view.answer_requested) as answer:
        click(5, "answer")
    assert answer.args == ["q1"]
    with qtbot.waitSignal(view.open_plan_requested) as plan:
        click(9, "open_plan")
    assert plan.args == ["P1"]
    with qtbot.waitSignal(view.open_thread_requested) as thread:
        click(1, "thread")
    assert thread.args == ["a1"]


def test_decided_approval_has_no_buttons(model: ConversationModel, view: ConversationView) -> None:
    model.set_items(
        [TranscriptItem("ap", ItemKind.APPROVAL, "x", data={"approval_id": "A", "status": "granted"})]
    )
    assert view.hit_rect(0, "grant") is None
    assert view.hit_rect(0, "reject") is None


def test_tool_row_expands_on_click(model: ConversationModel, view: ConversationView, qtbot) -> None:
    model.set_items(one_of_each())
    option = QStyleOptionViewItem()
    collapsed = view.delegate().sizeHint(option, model.index(3)).height()
    view.scrollTo(model.index(3))
    rect = view.hit_rect(3, "toggle")
    assert rect is not None
    QTest.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center()
    )
    assert view.is_expanded("t1")
    expanded = view.delegate().sizeHint(option, model.index(3)).height()
    assert expanded > collapsed * 3  # input, diff and result lines
    view.set_expanded("t1", False)
    assert view.delegate().sizeHint(option, model.index(3)).height() == collapsed


def test_follows_stream_unless_scrolled_up(model: ConversationModel, view: ConversationView, qtbot) -> None:
    model.set_items([TranscriptItem(f"n{i}", ItemKind.NOTE, f"note {i}") for i in range(300)])
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    model.append_item(TranscriptItem("live", ItemKind.ASSISTANT, "start"))
    for i in range(20):
        model.append_text("live", f"\n\nline {i}")
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert view.is_following()
    bar.setValue(0)
    assert not view.is_following()
    model.append_text("live", "\n\nmore\n\nand more")
    qtbot.wait(150)
    assert bar.value() == 0


def test_paint_every_kind_smoke(model: ConversationModel, view: ConversationView) -> None:
    model.set_items(one_of_each())
    view.set_expanded("t1", True)
    view.set_expanded("th", True)
    image = view.grab()
    assert not image.isNull()


STREAMED_REPLY = (
    "# Plan\n\nFirst I read **parser.py**; then:\n\n- split the lexer\n- keep `tokens`\n\n"
    "```python\ndef parse(x):\n\n    return x\n```\n\n1. one\n2. two\n\n> quoted *text*\n\n"
    "A last paragraph with a [link](https://example.com) and trailing text"
)


@pytest.mark.parametrize("chunk", [1, 3, 7, 40])
def test_a_streamed_reply_renders_like_the_whole_reply(
    model: ConversationModel, view: ConversationView, chunk: int
) -> None:
    """Appending parses only the open paragraph; the result must equal a parse of the whole."""
    model.set_items([TranscriptItem("live", ItemKind.ASSISTANT, "")])
    delegate = view.delegate()
    option = QStyleOptionViewItem()
    for start in range(0, len(STREAMED_REPLY), chunk):
        model.append_text("live", STREAMED_REPLY[start : start + chunk])
        delegate.sizeHint(option, model.index(0))  # lays the document out, as the view does
    streamed = delegate._doc(model.item(0), 600)
    whole = delegate._new_doc()
    whole.setMarkdown(STREAMED_REPLY)
    assert streamed.toMarkdown().replace("\u200b", "") == whole.toMarkdown()
    assert streamed.blockCount() == whole.blockCount()


def test_streaming_reparses_only_the_open_paragraph(model: ConversationModel, view: ConversationView) -> None:
    model.set_items([TranscriptItem("live", ItemKind.ASSISTANT, "")])
    delegate = view.delegate()
    for n in range(200):
        model.append_text("live", f"paragraph {n} " + "word " * 20 + "\n\n")
        delegate._doc(model.item(0), 600)
    state = delegate._docs["live"]
    assert state.settled == len(model.item(0).text)  # every closed paragraph is parsed for good
    first = state.doc.begin()
    model.append_text("live", "tail")
    delegate._doc(model.item(0), 600)
    assert delegate._docs["live"].doc.begin() == first  # the same document, appended to


def test_a_streamed_chunk_is_one_change_of_the_document(
    model: ConversationModel, view: ConversationView
) -> None:
    """The document re-lays out what changed once per change: the open paragraph removed, the
    settled and open text appended and their code blocks tinted are one change, however many
    code lines it holds (a change per step and per code line, each laid out again in a grown
    reply, were most of a long reply's streaming time). Code blocks are still tinted."""
    model.set_items([TranscriptItem("live", ItemKind.ASSISTANT, "")])
    delegate = view.delegate()
    text = "intro\n\n" + "```python\n" + "".join(f"line_{i} = {i}\n" for i in range(30)) + "```\n\nafter"
    model.append_text("live", text[:5])
    doc = delegate._doc(model.item(0), 600)
    changes: list[int] = []
    doc.contentsChange.connect(lambda *_: changes.append(1))
    for start in range(5, len(text), 60):
        model.append_text("live", text[start : start + 60])
        changes.clear()
        assert delegate._doc(model.item(0), 600) is doc
        assert len(changes) == 1
    assert doc.availableUndoSteps() == 0  # nothing kept to undo a stream
    tinted = [
        doc.findBlockByNumber(n).blockFormat().background().style() != Qt.BrushStyle.NoBrush
        for n in range(doc.blockCount())
    ]
    assert sum(tinted) == 30


def test_a_decided_card_says_what_became_of_it_with_the_whole_reason(
    model: ConversationModel, view: ConversationView
) -> None:
    from control_center.ui.conversation import _card_footer, _card_title

    reason = "the operator stopped the turn while it waited, " * 4
    data = {"approval_id": "A", "tool": "write_file", "summary": "Write out.txt"}
    pending = TranscriptItem(
        "ap", ItemKind.APPROVAL, "Write out.txt waits", data={**data, "status": "pending"}
    )
    rejected = TranscriptItem(
        "ap",
        ItemKind.APPROVAL,
        "x",
        data={**data, "status": "rejected", "decided_by": "ann", "reason": reason},
    )
    withdrawn = TranscriptItem(
        "ap",
        ItemKind.APPROVAL,
        "x",
        data={
            **data,
            "status": "rejected",
            "decided_by": "control-center",
            "reason": reason,
            "withdrawn": True,
        },
    )
    assert _card_title(pending) == "Approval needed · write_file"
    assert _card_title(rejected) == "Rejected · write_file"
    assert _card_title(withdrawn) == "Withdrawn · write_file"
    assert _card_footer(withdrawn).startswith("Withdrawn")
    # The reason wraps onto as many lines as it needs (it was cut to one line).
    model.set_items([rejected])
    delegate = view.itemDelegate()
    footer = delegate.layout_for(rejected, 420).rects["footer"]
    assert footer.height() >= 3 * view.fontMetrics().height()
