"""The DOT parser: every DOT the harness wrote reads as the harness's own parser read it,
DOT's grammar as a person writes it by hand, and bad input: an empty file, a file cut at
any byte (as the harness CLI's in-place rewrite leaves it for a moment) is never a graph
with fewer nodes: it is the whole graph or a ``DotError``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.core.errors import UnreadableFile
from runeconsole.services.pipelines.dot import MAX_NESTING, DotError, parse
from runeconsole.services.pipelines.store import read_plan
from tests.support.pipelines import AT_GATE, FIXTURES, PIPELINES, WRITTEN

# Each fixture DOT: (nodes, edges, the nodes' statuses in the order written).
EXPECTED = {
    "auth-demo": (
        5,
        5,
        {
            "start": "validated",
            "finalize": "accepted",
            "impl_auth": "impl_complete",
            "review_auth": "validated",
            "decide_auth": "pending",
        },
    ),
    "engine-demo": (5, 5, {"start": "validated", "review": "pending", "finalize": "pending"}),
    "engine-fallthrough-demo": (5, 5, {"start": "validated", "review": "pending"}),
    "gate-cli-demo": (
        5,
        5,
        {"validate_graph": "accepted", "review": "validated", "decide": "validated"},
    ),
    "gate-demo": (5, 5, {"review": "validated", "decide": "pending", "finalize": "pending"}),
    "gate-pass-demo": (5, 5, {"review": "accepted", "decide": "validated"}),
    "gate-reject-demo": (5, 5, {"review": "active", "decide": "pending"}),
    "tdd-ci-demo": (22, 27, {"start": "pending", "pipeline_exit": "pending"}),
}


def fixture_dot(stem: str, source: Path = WRITTEN) -> str:
    return (source / PIPELINES / f"{stem}.dot").read_text()


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_every_dot_the_harness_wrote_parses_with_its_nodes_edges_and_statuses(stem: str) -> None:
    nodes, edges, statuses = EXPECTED[stem]
    graph = parse(fixture_dot(stem))
    assert graph.directed
    assert graph.name.startswith("PRD-")
    assert (len(graph.nodes), len(graph.edges)) == (nodes, edges)
    for node, status in statuses.items():
        assert graph.nodes[node]["status"] == status


def test_the_dot_at_the_gate_has_its_gate_active() -> None:
    graph = parse(fixture_dot("gate-demo", AT_GATE))
    assert graph.nodes["review"]["status"] == "active"
    assert graph.nodes["review"]["handler"] == "wait.human"


@pytest.mark.parametrize(("letter", "stem"), [("A", "auth-demo"), ("G", "tdd-ci-demo")])
def test_it_reads_what_the_harness_parser_read_with_the_defaults_applied(
    letter: str, stem: str
) -> None:
    said = json.loads((FIXTURES / "cli-stdout" / f"{letter}-parse.json").read_text())
    graph = parse(fixture_dot(stem))
    assert graph.name == said["graph_name"]
    assert graph.attrs == said["graph_attrs"]
    assert list(graph.nodes) == [node["id"] for node in said["nodes"]]
    moved = {"status", "fillcolor"}  # A was parsed before its transitions
    for node in said["nodes"]:
        expected = {**said["defaults"]["node"], **node["attrs"]}
        ours = graph.nodes[node["id"]]
        if letter == "A":
            expected = {k: v for k, v in expected.items() if k not in moved}
            ours = {k: v for k, v in ours.items() if k not in moved}
        assert ours == expected, node["id"]
    assert graph.edges == [
        (edge["src"], edge["dst"], {**said["defaults"]["edge"], **edge["attrs"]})
        for edge in said["edges"]
    ]


# -- DOT's grammar ------------------------------------------------------------------------


def test_quoted_ids_keep_their_spaces_and_escaped_quotes() -> None:
    graph = parse(r'digraph "my plan" { "a node" [label="say \"hi\"\nthere"]; "a node" -> b }')
    assert graph.name == "my plan"
    assert graph.nodes["a node"]["label"] == 'say "hi"\\nthere'  # \n kept, as Graphviz does
    assert graph.edges == [("a node", "b", {})]


def test_a_chain_of_edges_is_an_edge_between_each_pair() -> None:
    graph = parse("digraph { a -> b -> c [condition=fail] }")
    assert list(graph.nodes) == ["a", "b", "c"]
    assert graph.edges == [("a", "b", {"condition": "fail"}), ("b", "c", {"condition": "fail"})]
    assert graph.nodes["a"] == {}  # an edge's attributes are not its nodes'


def test_a_group_on_either_side_of_an_edge_joins_every_member() -> None:
    graph = parse("digraph { {a b} -> c; d -> {e; f} }")
    assert [(s, t) for s, t, _ in graph.edges] == [
        ("a", "c"),
        ("b", "c"),
        ("d", "e"),
        ("d", "f"),
    ]


def test_subgraphs_are_flattened_and_keep_their_statements() -> None:
    graph = parse(
        """digraph G {
            subgraph cluster_one { label="stage 1"; a [status=active]; a -> b }
            subgraph { c }
            b -> c
        }"""
    )
    assert list(graph.nodes) == ["a", "b", "c"]
    assert graph.nodes["a"] == {"status": "active"}
    assert "label" not in graph.attrs  # a subgraph's own attributes are not the graph's
    assert [(s, t) for s, t, _ in graph.edges] == [("a", "b"), ("b", "c")]


def test_defaults_apply_to_what_follows_them_unless_it_sets_its_own() -> None:
    graph = parse(
        """digraph {
            early
            node [status=pending shape=box]
            edge [style=dashed]
            late
            set [status=active]
            late -> set
            subgraph { node [shape=diamond]; inner }
            after
        }"""
    )
    assert graph.nodes["early"] == {}
    assert graph.nodes["late"] == {"status": "pending", "shape": "box"}
    assert graph.nodes["set"] == {"status": "active", "shape": "box"}
    assert graph.nodes["inner"] == {"status": "pending", "shape": "diamond"}
    assert graph.nodes["after"] == {"status": "pending", "shape": "box"}  # the block's own ended
    assert graph.edges == [("late", "set", {"style": "dashed"})]


def test_graph_attributes_come_from_graph_blocks_and_assignments() -> None:
    graph = parse('digraph { graph [prd_ref="PRD-1"]; label = "Plan"; rankdir=LR; a }')
    assert graph.attrs == {"prd_ref": "PRD-1", "label": "Plan", "rankdir": "LR"}


def test_every_kind_of_comment_is_skipped() -> None:
    graph = parse(
        "# a preprocessor line\n"
        "digraph { // a line comment\n"
        "    a /* a block\n"
        "    comment -> x */ -> b\n"
        "# a preprocessor line inside, at the line's start (as Graphviz wants it)\n"
        "}"
    )
    assert list(graph.nodes) == ["a", "b"]
    assert graph.edges == [("a", "b", {})]


def test_a_hash_inside_a_line_is_not_a_comment() -> None:
    with pytest.raises(DotError, match="unexpected '#'"):
        parse("digraph { a # b\n }")


def test_plus_joins_quoted_strings() -> None:
    graph = parse('digraph { a [label="one " + "two" + "three"] }')
    assert graph.nodes["a"]["label"] == "one twothree"
    with pytest.raises(DotError, match="'\\+' joins two strings only"):
        parse("digraph { a [label=+] }")


def test_html_ids_keep_their_nested_brackets() -> None:
    graph = parse("digraph { a [label=<<b>bold</b> <i>x</i>>] }")
    assert graph.nodes["a"]["label"] == "<b>bold</b> <i>x</i>"
    with pytest.raises(DotError, match="not closed"):
        parse("digraph { a [label=<<b>bold</b>] }")


def test_ports_are_not_part_of_a_node_id() -> None:
    graph = parse("digraph { a:out:s -> b:in }")
    assert list(graph.nodes) == ["a", "b"]


def test_keywords_are_any_case_and_strict_is_allowed() -> None:
    graph = parse("STRICT DiGraph x { NODE [shape=box]; a }")
    assert graph.directed and graph.name == "x"
    assert graph.nodes["a"] == {"shape": "box"}
    assert not parse("graph { a -- b }").directed


def test_an_attribute_without_a_value_is_true_and_separators_are_optional() -> None:
    graph = parse("digraph { a [filled; color=red, bold] }")
    assert graph.nodes["a"] == {"filled": "true", "color": "red", "bold": "true"}


def test_numbers_and_unicode_are_ids() -> None:
    graph = parse("digraph { 1 -> -2.5 -> étape_é }")
    assert list(graph.nodes) == ["1", "-2.5", "étape_é"]


def test_a_node_written_again_adds_to_its_attributes() -> None:
    graph = parse("digraph { a [status=pending label=A]; a [status=active] }")
    assert graph.nodes["a"] == {"status": "active", "label": "A"}


# -- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("// only a comment\n", "empty"),
        ("{ a -> b }", "not a DOT graph"),
        ("digraph", "the file ends inside the graph"),
        ("digraph {", "the file ends inside the graph"),
        ("digraph { a -> }", "expected 'id'"),
        ("digraph { a } b", "text after the graph"),
        ("digraph { node -> a }", "where a node id belongs"),
        ('digraph { a [label="open] }', "unexpected '\"'"),
        ("digraph { a [x=1 }", "expected 'id'"),
        ("digraph { a = }", "expected 'id'"),
        ("digraph { /* open }", "unexpected '/'"),
        ("digraph { a @ b }", "unexpected '@'"),
    ],
)
def test_what_is_not_a_whole_graph_is_a_dot_error(text: str, said: str) -> None:
    with pytest.raises(DotError, match=said):
        parse(text)


def test_an_error_says_its_line() -> None:
    with pytest.raises(DotError, match=r"^line 3: "):
        parse("digraph {\n  a\n  b @ c\n}")


def test_subgraphs_nested_too_deep_are_refused_not_recursed_into() -> None:
    deep = "digraph { " + "{ " * (MAX_NESTING + 2) + "a" + " }" * (MAX_NESTING + 2) + " }"
    with pytest.raises(DotError, match="nested more than"):
        parse(deep)
    fine = "digraph { " + "{ " * MAX_NESTING + "a" + " }" * MAX_NESTING + " }"
    assert list(parse(fine).nodes) == ["a"]


def test_a_dot_cut_at_any_byte_is_the_whole_graph_or_an_error() -> None:
    whole = fixture_dot("gate-demo", AT_GATE)
    full = parse(whole)
    for end in range(len(whole)):
        try:
            graph = parse(whole[:end])
        except DotError:
            continue
        assert (graph.nodes, graph.edges) == (full.nodes, full.edges), end
        assert whole[end:].strip() == "", end  # only trailing white space was cut


def test_the_largest_dot_cut_anywhere_is_never_a_smaller_graph(tmp_path: Path) -> None:
    """The 22-node template (with non-ASCII text): every 13th byte and each of its last
    300, read as the store reads a file (a cut inside a character is unreadable, too)."""
    data = (WRITTEN / PIPELINES / "tdd-ci-demo.dot").read_bytes()
    full = read_plan(WRITTEN / PIPELINES / "tdd-ci-demo.dot")
    path = tmp_path / "cut.dot"
    for end in sorted({*range(0, len(data), 13), *range(len(data) - 300, len(data))}):
        path.write_bytes(data[:end])
        try:
            plan = read_plan(path)
        except (DotError, UnreadableFile):
            continue
        assert len(plan.nodes) == len(full.nodes) and plan.edges == full.edges, end


def test_a_graph_with_no_nodes_is_not_a_plan(tmp_path: Path) -> None:
    path = tmp_path / "empty-graph.dot"
    path.write_text('digraph "PRD-X" { graph [label="x"] }')
    with pytest.raises(DotError, match="no nodes"):
        read_plan(path)
    path.write_bytes(b"")
    with pytest.raises(UnreadableFile, match="empty"):
        read_plan(path)
    path.write_bytes(b'digraph { a [label="\xff"] }')
    with pytest.raises(UnreadableFile, match="not UTF-8"):
        read_plan(path)
    with pytest.raises(UnreadableFile):
        read_plan(tmp_path / "missing.dot")
