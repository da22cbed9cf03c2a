"""Where each key of a TOML document sits: `(key path) -> (line, col)`, both 1-based.

The standard library parser checks syntax and gives values but forgets positions; this
scanner runs only over text that already parsed, so it can stay small. It records every
table header, every key (dotted keys record each prefix), every array element and the
keys of inline tables, with array-of-tables indexes resolved as the parser does.
"""

from __future__ import annotations

import contextlib

import tomli

from .diagnostics import KeyPath

Position = tuple[int, int]

_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.col = 1
        self.positions: dict[KeyPath, Position] = {}
        self.aot_counts: dict[KeyPath, int] = {}
        # the last key or table header written on each line, even when it repeats an earlier one
        self.by_line: dict[int, tuple[KeyPath, Position]] = {}

    # --- low-level movement -------------------------------------------------
    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.text[j] if j < len(self.text) else ""

    def startswith(self, s: str) -> bool:
        return self.text.startswith(s, self.i)

    def advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self.i >= len(self.text):
                return
            if self.text[self.i] == "\n":
                self.line += 1
                self.col = 1
            else:
                self.col += 1
            self.i += 1

    def skip_inline_ws(self) -> None:
        while self.peek() in (" ", "\t"):
            self.advance()

    def skip_ws_comments_newlines(self) -> None:
        while True:
            c = self.peek()
            if c in (" ", "\t", "\r", "\n"):
                self.advance()
            elif c == "#":
                while self.peek() not in ("\n", ""):
                    self.advance()
            else:
                return

    # --- keys ---------------------------------------------------------------
    def read_key(self) -> list[tuple[str, Position]]:
        parts: list[tuple[str, Position]] = []
        while True:
            self.skip_inline_ws()
            pos = (self.line, self.col)
            c = self.peek()
            if c == '"':
                name = self.read_basic_string()
            elif c == "'":
                name = self.read_literal_string()
            else:
                start = self.i
                while self.peek() in _BARE and self.peek() != "":
                    self.advance()
                name = self.text[start : self.i]
            parts.append((name, pos))
            self.skip_inline_ws()
            if self.peek() == ".":
                self.advance()
                continue
            return parts

    def read_basic_string(self) -> str:
        if self.startswith('"""'):
            self.advance(3)
            start = self.i
            while not (self.startswith('"""') and not self.startswith('""""')) and self.peek():
                self.advance(2 if self.peek() == "\\" else 1)
            value = self.text[start : self.i]
            self.advance(3)
            return value
        self.advance()
        start = self.i
        while self.peek() not in ('"', ""):
            self.advance(2 if self.peek() == "\\" else 1)
        raw = self.text[start : self.i]
        self.advance()
        try:
            return str(tomli.loads(f'k = "{raw}"')["k"])
        except tomli.TOMLDecodeError:
            return raw

    def read_literal_string(self) -> str:
        if self.startswith("'''"):
            self.advance(3)
            start = self.i
            while not (self.startswith("'''") and not self.startswith("''''")) and self.peek():
                self.advance()
            value = self.text[start : self.i]
            self.advance(3)
            return value
        self.advance()
        start = self.i
        while self.peek() not in ("'", ""):
            self.advance()
        value = self.text[start : self.i]
        self.advance()
        return value

    # --- values -------------------------------------------------------------
    def skip_value(self, path: KeyPath) -> None:
        c = self.peek()
        if c == '"':
            self.read_basic_string()
        elif c == "'":
            self.read_literal_string()
        elif c == "[":
            self.advance()
            index = 0
            while True:
                self.skip_ws_comments_newlines()
                if self.peek() in ("]", ""):
                    self.advance()
                    return
                self.positions.setdefault((*path, index), (self.line, self.col))
                self.skip_value((*path, index))
                index += 1
                self.skip_ws_comments_newlines()
                if self.peek() == ",":
                    self.advance()
        elif c == "{":
            self.advance()
            while True:
                self.skip_inline_ws()
                if self.peek() in ("}", ""):
                    self.advance()
                    return
                parts = self.read_key()
                full = self.record_key(path, parts)
                self.skip_inline_ws()
                self.advance()  # '='
                self.skip_inline_ws()
                self.skip_value(full)
                self.skip_inline_ws()
                if self.peek() == ",":
                    self.advance()
        else:
            while self.peek() not in (",", "]", "}", "\n", "\r", "#", ""):
                self.advance()

    def record_key(self, base: KeyPath, parts: list[tuple[str, Position]]) -> KeyPath:
        path = base
        for name, pos in parts:
            path = (*path, name)
            self.positions.setdefault(path, pos)
        if parts:
            self.by_line[parts[0][1][0]] = (path, parts[0][1])
        return path

    # --- headers ------------------------------------------------------------
    def resolve(self, names: list[str]) -> KeyPath:
        """Turn header names into a concrete path, indexing arrays of tables as the parser does."""
        path: KeyPath = ()
        for name in names:
            path = (*path, name)
            if path in self.aot_counts:
                path = (*path, self.aot_counts[path] - 1)
        return path

    def scan(self) -> dict[KeyPath, Position]:
        table: KeyPath = ()
        while True:
            self.skip_ws_comments_newlines()
            if not self.peek():
                return self.positions
            pos = (self.line, self.col)
            if self.startswith("[["):
                self.advance(2)
                names = [n for n, _ in self.read_key()]
                self.advance(2)
                parent = self.resolve(names[:-1])
                aot = (*parent, names[-1])
                self.aot_counts[aot] = self.aot_counts.get(aot, 0) + 1
                self.positions.setdefault(aot, pos)
                table = (*aot, self.aot_counts[aot] - 1)
                self.positions[table] = pos
                self.by_line[pos[0]] = (table, pos)
            elif self.peek() == "[":
                self.advance()
                names = [n for n, _ in self.read_key()]
                self.advance()
                table = self.resolve(names)
                self.by_line[pos[0]] = (table, pos)
                self.positions.setdefault(table, pos)
            else:
                parts = self.read_key()
                full = self.record_key(table, parts)
                self.skip_inline_ws()
                self.advance()  # '='
                self.skip_inline_ws()
                self.skip_value(full)
            # the rest of the line is whitespace or a comment
            while self.peek() not in ("\n", ""):
                self.advance()


def key_positions(text: str) -> dict[KeyPath, Position]:
    """Positions of every key and table in `text`, which must already be valid TOML."""
    return _Scanner(text).scan()


def key_on_line(text: str, line: int) -> tuple[KeyPath, Position] | None:
    """The key or table written on `line` of text that may not parse (used to name a duplicate)."""
    head = "\n".join(text.split("\n")[:line])
    scanner = _Scanner(head)
    with contextlib.suppress(IndexError, ValueError):
        scanner.scan()
    return scanner.by_line.get(line)


def locate(positions: dict[KeyPath, Position], path: KeyPath) -> Position:
    """The position of `path`, or of its closest recorded ancestor (a missing key points at its table)."""
    probe = path
    while probe:
        if probe in positions:
            return positions[probe]
        probe = probe[:-1]
    return (1, 1)
