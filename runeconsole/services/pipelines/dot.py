"""Graphviz DOT, as far as a pipeline needs it: the graph's attributes, its nodes with
theirs, and its edges with theirs, in the order written.

The harness writes one dialect (``digraph "PRD" { graph [...]; node [...]; id [...];
a -> b [...]; }``, ``//`` comments) but a person edits these files by hand, so the
grammar here is DOT's own: quoted and bare ids, ``a -> b -> c`` chains, ``{a b} -> c``,
``subgraph`` blocks (their statements kept, the block itself flattened), ``graph`` /
``node`` / ``edge`` defaults (a node or edge written after ``node [...]`` takes those
attributes unless it sets its own), ``a = b`` graph attributes, ``//``, ``/* */`` and
``#`` comments, ``;`` and ``,`` separators, ``+``-joined strings and ``<html>`` ids.

Anything else is a ``DotError`` saying where: a file cut in the middle of a rewrite
ends before its closing brace and is never read as a graph with fewer nodes.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

MAX_NESTING = 64  # subgraphs inside subgraphs: deeper is refused, not recursed into

# An id starts with a letter, '_' or any character past ASCII and goes on with those,
# digits and '.': written as what it is not (ASCII's other characters), a class that
# compiles in well under a millisecond; ``A-Za-z_\x80-\U0010ffff`` took 6-30 ms at import.
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/|^[ \t]*\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<html><)
  | (?P<arrow>->|--)
  | (?P<punct>[{}\[\];,=:+])
  | (?P<id>[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f][^\x00-\x2d\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]*
          |-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
    """,
    re.VERBOSE | re.DOTALL | re.MULTILINE,
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
KEYWORDS = frozenset({"graph", "digraph", "subgraph", "node", "edge", "strict"})


class DotError(ValueError):
    """Not a DOT graph; the message says what and on which line."""


@dataclass
class Graph:
    name: str
    directed: bool
    attrs: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


@dataclass(frozen=True)
class _Token:
    kind: str  # "id" (a bare, quoted or html id), "arrow", or the punctuation itself
    text: str
    line: int


def _unquote(text: str) -> str:
    """A quoted DOT string's value: ``\\"`` is a quote; other escapes (``\\n``, ``\\l``)
    stay as written, as Graphviz keeps them for labels."""
    return _ESCAPE.sub(lambda m: m.group(1) if m.group(1) == '"' else m.group(0), text[1:-1])


def _html(text: str, start: int, line: int) -> tuple[str, int]:
    """An ``<...>`` id with nested angle brackets; its text and where it ends."""
    depth, at = 0, start
    while at < len(text):
        char = text[at]
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                return text[start + 1 : at], at + 1
        at += 1
    raise DotError(f"line {line}: an <html> id is not closed")


def tokens(text: str) -> list[_Token]:
    found: list[_Token] = []
    at, line, size = 0, 1, len(text)
    while at < size:
        match = _TOKEN.match(text, at)
        if match is None:
            raise DotError(f"line {line}: unexpected {text[at]!r}")
        kind = match.lastgroup or ""
        if kind == "html":
            value, end = _html(text, at, line)
            found.append(_Token("id", value, line))
            line += text.count("\n", at, end)
            at = end
            continue
        piece = match.group()
        if kind == "string":
            found.append(_Token("id", _unquote(piece), line))
        elif kind == "id":
            found.append(_Token("id", piece, line))
        elif kind in ("arrow", "punct"):
            found.append(_Token("arrow" if kind == "arrow" else piece, piece, line))
        line += piece.count("\n")
        at = match.end()
    return _joined(found)


def _joined(found: list[_Token]) -> list[_Token]:
    """``"a" + "b"`` is one string (DOT's concatenation); a ``+`` anywhere else is an
    error."""
    joined: list[_Token] = []
    at = 0
    while at < len(found):
        token = found[at]
        if token.kind == "+":
            after = found[at + 1] if at + 1 < len(found) else None
            if not joined or joined[-1].kind != "id" or after is None or after.kind != "id":
                raise DotError(f"line {token.line}: '+' joins two strings only")
            joined[-1] = _Token("id", joined[-1].text + after.text, joined[-1].line)
            at += 2
            continue
        joined.append(token)
        at += 1
    return joined


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = tokens(text)
        self.at = 0
        self.graph = Graph("", True)

    # -- tokens ----------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> _Token | None:
        index = self.at + ahead
        return self.items[index] if index < len(self.items) else None

    def line(self) -> int:
        token = self.peek()
        return token.line if token else (self.items[-1].line if self.items else 1)

    def take(self, kind: str | None = None) -> _Token:
        token = self.peek()
        if token is None:
            raise DotError(f"line {self.line()}: the file ends inside the graph (cut short?)")
        if kind is not None and token.kind != kind:
            raise DotError(f"line {token.line}: expected {kind!r}, found {token.text!r}")
        self.at += 1
        return token

    def accept(self, kind: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == kind:
            self.at += 1
            return True
        return False

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == "id" and token.text.lower() == word:
            self.at += 1
            return True
        return False

    # -- grammar ---------------------------------------------------------------------------

    def parse(self) -> Graph:
        if not self.items:
            raise DotError("the file is empty")
        self.keyword("strict")
        if self.keyword("digraph"):
            self.graph.directed = True
        elif self.keyword("graph"):
            self.graph.directed = False
        else:
            raise DotError(f"line {self.line()}: not a DOT graph (no 'digraph' or 'graph')")
        token = self.peek()
        if token is not None and token.kind == "id":
            self.graph.name = self.take().text
        self.take("{")
        self.statements({}, {}, depth=0)
        self.take("}")
        rest = self.peek()
        if rest is not None:
            raise DotError(f"line {rest.line}: text after the graph's closing brace")
        return self.graph

    def statements(
        self, node_defaults: dict[str, str], edge_defaults: dict[str, str], *, depth: int
    ) -> list[str]:
        """Statements up to the closing brace; the node ids they name (for ``{a b} -> c``)."""
        if depth > MAX_NESTING:
            raise DotError(f"line {self.line()}: subgraphs nested more than {MAX_NESTING} deep")
        node_defaults, edge_defaults = dict(node_defaults), dict(edge_defaults)
        named: list[str] = []
        while True:
            token = self.peek()
            if token is None or token.kind == "}":
                return named
            if self.accept(";"):
                continue
            word = token.text.lower() if token.kind == "id" else ""
            following = self.peek(1)
            if (
                word in ("graph", "node", "edge")
                and following is not None
                and following.kind == "["
            ):
                self.take()
                attrs = self.attr_lists()
                if word == "graph":
                    if depth == 0:
                        self.graph.attrs.update(attrs)
                elif word == "node":
                    node_defaults.update(attrs)
                else:
                    edge_defaults.update(attrs)
                continue
            if token.kind == "id" and following is not None and following.kind == "=":
                self.take()
                self.take("=")
                value = self.take("id").text
                if depth == 0:
                    self.graph.attrs[token.text] = value
                continue
            named.extend(self.node_or_edge(node_defaults, edge_defaults, depth))

    def operand(
        self, node_defaults: dict[str, str], edge_defaults: dict[str, str], depth: int
    ) -> list[str]:
        """One side of an edge: a node id (with an optional port) or a subgraph."""
        token = self.peek()
        if token is not None and (
            token.kind == "{" or (token.kind == "id" and token.text.lower() == "subgraph")
        ):
            if token.kind == "id":
                self.take()
                if (name := self.peek()) is not None and name.kind == "id":
                    self.take()
            self.take("{")
            named = self.statements(node_defaults, edge_defaults, depth=depth + 1)
            self.take("}")
            return named
        node = self.take("id").text
        if node.lower() in KEYWORDS:
            raise DotError(
                f"line {token.line if token else self.line()}: {node!r} where a node id belongs"
            )
        while self.accept(":"):  # a port (and compass point): not part of the node's id
            self.take("id")
        return [node]

    def node_or_edge(
        self, node_defaults: dict[str, str], edge_defaults: dict[str, str], depth: int
    ) -> list[str]:
        ends = [self.operand(node_defaults, edge_defaults, depth)]
        while self.accept("arrow"):
            ends.append(self.operand(node_defaults, edge_defaults, depth))
        token = self.peek()
        attrs = self.attr_lists() if token is not None and token.kind == "[" else {}
        for group in ends:
            for node in group:
                self._node(node, node_defaults, attrs if len(ends) == 1 else {})
        for left, right in itertools.pairwise(ends):
            for source in left:
                for target in right:
                    self.graph.edges.append((source, target, {**edge_defaults, **attrs}))
        return [node for group in ends for node in group]

    def _node(self, node: str, defaults: dict[str, str], attrs: dict[str, str]) -> None:
        known = self.graph.nodes.get(node)
        if known is None:
            self.graph.nodes[node] = {**defaults, **attrs}
        else:
            known.update(attrs)

    def attr_lists(self) -> dict[str, str]:
        attrs: dict[str, str] = {}
        while self.accept("["):
            while not self.accept("]"):
                name = self.take("id").text
                if self.accept("="):
                    attrs[name] = self.take("id").text
                else:
                    attrs[name] = "true"
                self.accept(",") or self.accept(";")
        return attrs


def parse(text: str) -> Graph:
    """The graph in ``text``; ``DotError`` (with the line) for anything that is not one."""
    return _Parser(text).parse()
