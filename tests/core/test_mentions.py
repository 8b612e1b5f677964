"""The composer's pure parts: mentions found in a message, fuzzy file ranking, custom command
files (front matter, bounds, hostile content) and which modes a repository command may pick."""

from __future__ import annotations

import pytest

from control_center.core.mentions import (
    MAX_COMMAND_BYTES,
    CommandFileError,
    FileIndex,
    mentioned_paths,
    parse_command_file,
    split_command,
)
from control_center.core.modes import Mode
from control_center.core.profiles import OPERATOR_MODES, no_wider

MODES = {"chat": "chat", "agent": "chat", "plan": "plan"}


def test_mentions_are_words_that_start_with_at() -> None:
    text = "see @src/app.py, and @README.md. mail me@host.org or `@x` @src/app.py"
    assert mentioned_paths(text) == ["src/app.py", "README.md"]
    assert mentioned_paths("@a\n@b/c.txt)") == ["a", "b/c.txt"]


def test_ranking_prefers_the_file_name_then_the_path_then_scattered_letters() -> None:
    paths = [
        "docs/notes/mapping_app.md",
        "src/app.py",
        "tests/test_app.py",
        "a/p/p/x.py",
        "apps/main.py",
        "src/application.py",
    ]
    index = FileIndex(paths)
    assert index.search("app") == [
        "src/app.py",
        "src/application.py",
        "tests/test_app.py",
        "docs/notes/mapping_app.md",
        "apps/main.py",
        "a/p/p/x.py",
    ]
    assert index.search("APP.py")[:2] == ["src/app.py", "tests/test_app.py"]  # case-insensitive
    assert index.search("zzz") == []
    assert index.search("") == paths[:50]


def test_ranking_narrows_as_the_query_grows_and_widens_on_backspace() -> None:
    index = FileIndex([f"pkg/mod{i}.py" for i in range(500)] + ["README.md"])
    assert len(index.search("m", limit=1000)) == 501
    assert index.search("mod12", limit=1000)[:2] == ["pkg/mod12.py", "pkg/mod120.py"]
    assert index.search("mod123", limit=1000) == ["pkg/mod123.py"]
    assert index.search("readme") == ["README.md"]  # not narrowed from "mod123"
    assert index.search("re[") == []  # regex syntax is text


def test_a_command_file_is_front_matter_and_a_body() -> None:
    data = b"---\ndescription: Fix a bug\nmode: plan\nmodel: claude-haiku-4-5\n---\nFix $ARGUMENTS\n"
    command = parse_command_file("fix", "repository", data, MODES)
    assert (command.description, command.mode, command.model) == ("Fix a bug", "plan", "claude-haiku-4-5")
    assert command.expand(" the parser ") == "Fix the parser"
    agent = parse_command_file("go", "operator", b"---\nmode: Agent\n---\nGo", MODES)
    assert agent.mode == "chat"
    plain = parse_command_file("hello", "operator", b"Say hello.", MODES)
    assert plain.mode is None
    assert plain.expand("") == "Say hello."
    assert plain.expand("to Ann") == "Say hello.\n\nto Ann"


@pytest.mark.parametrize(
    ("name", "data", "error"),
    [
        ("Bad Name", b"x", "a name is lower-case"),
        ("big", b"x" * (MAX_COMMAND_BYTES + 1), "over 16 KiB"),
        ("bin", b"\xff\xfe", "not UTF-8"),
        ("nul", b"a\x00b", "not text"),
        ("open", b"---\ndescription: x\nbody", "no closing ---"),
        ("keys", b"---\nallowed-tools: Bash\n---\nx", "unknown front matter line"),
        ("mode", b"---\nmode: review\n---\nx", "mode 'review' is not one of"),
        ("yolo", b"---\nmode: yolo\n---\nx", "mode 'yolo' is not one of"),
        ("model", b"---\nmodel: $(rm -rf /)\n---\nx", "is not a model id"),
        ("empty", b"---\ndescription: x\n---\n\n", "the body is empty"),
    ],
)
def test_a_bad_command_file_is_refused_in_one_line(name: str, data: bytes, error: str) -> None:
    with pytest.raises(CommandFileError, match=error) as caught:
        parse_command_file(name, "repository", data, MODES)
    assert "\n" not in str(caught.value)


def test_split_command() -> None:
    assert split_command("/plan-this the parser\nand more") == ("plan-this", "the parser\nand more")
    assert split_command("/Compact") == ("compact", "")
    assert split_command("/usr/bin is a folder") is None
    assert split_command("hello /plan") is None


def test_a_repository_command_may_only_narrow_the_mode() -> None:
    assert no_wider(Mode.PLAN, Mode.CHAT)
    assert not no_wider(Mode.CHAT, Mode.PLAN)
    assert not no_wider(Mode.CHAT, Mode.ORCHESTRATE)
    assert all(no_wider(m, m) for m in OPERATOR_MODES)
