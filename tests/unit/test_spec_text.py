"""What counts as a spec file's text (specs/loader.parse_document, used for files on disk and for
`plan --base` revisions alike): anything else is one diagnostic at the file's first line."""

from __future__ import annotations

from reconciler.specs.diagnostics import Diagnostic
from reconciler.specs.loader import parse_document

SPEC = b'[experiment]\nbenchmark = "terminal-bench-2-1"\n'


def test_a_byte_order_mark_is_named_with_the_way_to_save_the_file_again() -> None:
    found = parse_document(b"\xef\xbb\xbf" + SPEC, "specs/runs/bom.toml")
    assert isinstance(found, Diagnostic)
    assert found.render() == (
        "specs/runs/bom.toml:1:1: (file): starts with a byte-order mark, which TOML does not allow:"
        " save it as UTF-8 without BOM"
    )


def test_the_same_text_without_the_mark_parses() -> None:
    found = parse_document(SPEC, "specs/runs/plain.toml")
    assert not isinstance(found, Diagnostic)
    assert found.data == {"experiment": {"benchmark": "terminal-bench-2-1"}}


def test_a_mark_further_in_is_text_like_any_other() -> None:
    found = parse_document(SPEC + '[env]\nNOTE = "\ufeff"\n'.encode(), "specs/runs/inside.toml")
    assert not isinstance(found, Diagnostic)
    assert found.data["env"] == {"NOTE": "\ufeff"}
