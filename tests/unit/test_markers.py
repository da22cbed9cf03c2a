"""Marker blocks: text outside is untouched, and every malformed case is an error, not a guess."""

from __future__ import annotations

import pytest

from reconciler.render.markers import MarkerError, begin_marker, end_marker, replace_block

OPEN, CLOSE = "<!-- reconciler:leaderboard tb -->", "<!-- /reconciler:leaderboard tb -->"


def test_the_block_content_is_replaced_and_the_rest_kept_byte_for_byte() -> None:
    text = f"# Title\n\nintro\n{OPEN}\nold table\n{CLOSE}\n\noutro  \n"
    assert (
        replace_block(text, "tb", "| new |", path="README.md")
        == f"# Title\n\nintro\n{OPEN}\n| new |\n{CLOSE}\n\noutro  \n"
    )


def test_replacing_twice_gives_the_same_bytes() -> None:
    text = f"a\n{OPEN}\n{CLOSE}\nb\n"
    once = replace_block(text, "tb", "table", path="f.md")
    assert replace_block(once, "tb", "table", path="f.md") == once


def test_a_block_at_the_end_of_a_file_without_a_newline_works() -> None:
    assert replace_block(f"x\n{OPEN}{CLOSE}", "tb", "t", path="f.md") == f"x\n{OPEN}\nt\n{CLOSE}"


def test_other_blocks_are_left_alone() -> None:
    other = "<!-- reconciler:leaderboard hle -->\nkeep\n<!-- /reconciler:leaderboard hle -->"
    text = f"{other}\n{OPEN}\n{CLOSE}\n"
    assert replace_block(text, "tb", "t", path="f.md").startswith(other)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("no markers here\n", "no marker block 'tb'"),
        (f"{OPEN}\n{CLOSE}\n{OPEN}\n{CLOSE}\n", "appears 2 times (lines 1, 3)"),
        (f"{OPEN}\nno end\n", "never closed"),
        (f"{CLOSE}\n", "has no opening marker"),
        (
            f"{OPEN}\n<!-- reconciler:leaderboard hle -->\n<!-- /reconciler:leaderboard hle -->\n{CLOSE}\n",
            "cannot nest",
        ),
    ],
    ids=["missing", "doubled", "unclosed", "close-only", "nested"],
)
def test_a_malformed_marker_block_is_an_error_naming_the_file(text: str, fragment: str) -> None:
    with pytest.raises(MarkerError) as caught:
        replace_block(text, "tb", "t", path="README.md")
    assert "README.md" in caught.value.message and fragment in caught.value.message


def test_generated_text_carrying_a_marker_comment_is_refused() -> None:
    # a template that writes a closing marker would break the block for every later render
    doc = f"intro\n{begin_marker('x')}\nold\n{end_marker('x')}\noutro\n"
    forged = f"table\n{end_marker('x')}\ninjected outside the block\n{begin_marker('other')}"
    with pytest.raises(MarkerError, match="contains a marker comment"):
        replace_block(doc, "x", forged, path="NOTES.md")
