"""Line comments on a diff: rows to file lines (one file or many), the comment on chosen rows, and
how a comment follows its lines through a later change (untouched, moved, edited, deleted)."""

from __future__ import annotations

from control_center.core.change_comments import (
    comment_on_rows,
    comment_rows,
    compose_comments,
    diff_rows,
    follow,
)

DIFF = "\n".join(
    [
        "diff --git a/a.py b/a.py",
        "--- a/a.py",
        "+++ b/a.py",
        "@@ -1,3 +1,3 @@",
        " one",
        "-two",
        "+TWO",
        " three",
        "diff --git a/b.py b/b.py",
        "--- a/b.py",
        "+++ b/b.py",
        "@@ -4,2 +4,3 @@",
        " four",
        "+four and a half",
        " five",
        "",
    ]
)


def test_rows_of_a_many_file_diff_name_their_file_and_line() -> None:
    rows = diff_rows(DIFF)
    assert rows[5] is not None
    assert (rows[5].path, rows[5].kind, rows[5].number) == ("a.py", "-", 2)
    assert rows[6] is not None
    assert (rows[6].path, rows[6].kind, rows[6].number) == ("a.py", "+", 2)
    assert rows[13] is not None
    assert (rows[13].path, rows[13].number) == ("b.py", 5)
    assert rows[0] is None
    assert rows[11] is None


def test_a_comment_keeps_to_the_first_file_and_quotes_its_rows() -> None:
    c = comment_on_rows("", DIFF, range(5, 15), "why?")
    assert c is not None
    assert (c.path, c.start, c.end, c.old) == ("a.py", 2, 3, False)
    assert c.quote == ("-two", "+TWO", " three")
    assert c.track == (1, 3)
    removed = comment_on_rows("", DIFF, [5], "gone?")
    assert removed is not None
    assert removed.old
    assert removed.anchor == "a.py:2 (old lines)"
    assert removed.track == (1, 1)  # where the removed line was, between new lines 1 and 2
    assert comment_rows(DIFF, "b.py", 5, 5, False) == [13]
    assert comment_on_rows("", DIFF, [0, 1, 2], "header") is None
    assert "`a.py:2-3`" in compose_comments([c])


FILE = [f"line {n}" for n in range(1, 11)]


def test_untouched_lines_stay_and_lines_added_above_move_the_anchor() -> None:
    assert follow(FILE, FILE, (3, 5), FILE[3:5]).track == (3, 5)
    below = [*FILE[:8], "new", *FILE[8:]]
    assert follow(FILE, below, (3, 5), FILE[3:5]).track == (3, 5)
    above = ["a", "b", *FILE]
    moved = follow(FILE, above, (3, 5), FILE[3:5])
    assert moved.track == (5, 7)
    assert not moved.moved
    adjacent = [*FILE[:3], "right before", *FILE[3:]]
    assert follow(FILE, adjacent, (3, 5), FILE[3:5]).track == (4, 6)


def test_an_edit_or_a_deletion_of_the_lines_touches_them() -> None:
    edited = [*FILE[:4], "line 5, better", *FILE[5:]]
    assert follow(FILE, edited, (3, 5), FILE[3:5]).track is None
    inside = [*FILE[:4], "between", *FILE[4:]]
    assert follow(FILE, inside, (3, 5), FILE[3:5]).track is None
    deleted = [*FILE[:3], *FILE[5:]]
    assert follow(FILE, deleted, (3, 5), FILE[3:5]).track is None
    assert follow(FILE, None, (3, 5), FILE[3:5]).track is None  # the file is gone


def test_a_block_cut_and_pasted_elsewhere_stays_open_there() -> None:
    pasted = [*FILE[:3], *FILE[5:], *FILE[3:5]]
    moved = follow(FILE, pasted, (3, 5), FILE[3:5])
    assert moved.moved
    assert moved.track == (8, 10)


def test_a_comment_on_removed_lines_is_touched_only_at_its_place() -> None:
    elsewhere = [*FILE, "eleven"]
    assert follow(FILE, elsewhere, (4, 4), []).track == (4, 4)
    shifted = ["zero", *FILE]
    assert follow(FILE, shifted, (4, 4), []).track == (5, 5)
    put_back = [*FILE[:4], "restored", *FILE[4:]]
    assert follow(FILE, put_back, (4, 4), []).track is None
