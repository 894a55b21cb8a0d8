"""The demo's plan: two harness DOT pipelines as the claude-code-harness writes them.

``shop-v2`` is worked by the demo cast (nodes ``impl_auth``, ``impl_billing``,
``impl_search``, the orchestrators' and runners' node ids) and waits at its human gate
``review`` (active, with the runner's gate marker); ``docs-refresh`` has not started.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.timeutil import iso_z

SHOP = """digraph "PRD-SHOP-V2" {{
    graph [
        label="Shop v2: accounts, billing, search"
        prd_ref="PRD-SHOP-V2"
        cobuilder_root="{root}"
    ];
    node [fontname="Helvetica" fontsize=11];

    start [shape=Mdiamond handler="start" status="validated" style=filled fillcolor=lightgreen];
    impl_auth [
        shape=box handler="codergen" label="Refresh tokens" bead_id="bd-101"
        worker_type="backend-solutions-engineer" status="accepted" style=filled
        fillcolor=palegreen acceptance="AC-1 [auto]: tokens refresh before expiry"
    ];
    impl_billing [
        shape=box handler="codergen" label="Invoice totals" bead_id="bd-102"
        worker_type="backend-solutions-engineer" status="active" style=filled
        fillcolor=lightblue acceptance="AC-2 [auto]: totals match the ledger"
    ];
    impl_search [
        shape=box handler="codergen" label="Index layout" bead_id="bd-103"
        worker_type="frontend-dev-expert" status="impl_complete" style=filled
        fillcolor=lightsalmon acceptance="AC-3 [auto]: search answers in 200 ms"
    ];
    review [
        shape=hexagon handler="wait.human" label="Release review" gate="business"
        mode="business" status="active" style=filled fillcolor=lightblue
        acceptance="AC-4 [manual]: a person has tried checkout end to end"
    ];
    decide [shape=diamond handler="conditional" label="Approved?" status="pending"];
    finalize [shape=Msquare handler="exit" label="FINALIZE" status="pending"];

    start -> impl_auth;
    start -> impl_billing;
    start -> impl_search;
    impl_auth -> review;
    impl_billing -> review;
    impl_search -> review;
    review -> decide;
    decide -> finalize [label="approved" condition="pass"];
    decide -> impl_billing [label="rework" condition="fail" style="dashed"];
}}
"""

DOCS = """digraph "PRD-DOCS" {{
    graph [label="Docs refresh" prd_ref="PRD-DOCS" cobuilder_root="{root}"];
    start [shape=Mdiamond handler="start" status="pending"];
    write_docs [shape=box handler="codergen" label="Write the guide" bead_id="bd-201"
        worker_type="technical-writer" status="pending"];
    check_links [shape=parallelogram handler="tool" command="make linkcheck" status="pending"];
    finalize [shape=Msquare handler="exit" status="pending"];
    start -> write_docs -> check_links -> finalize;
}}
"""


def write_pipelines(root: Path, now: datetime) -> list[Path]:
    """Both pipelines under ``root/.pipelines/pipelines``, the gate's marker beside."""
    directory = root / ".pipelines" / "pipelines"
    written = []
    for name, text in (("shop-v2", SHOP), ("docs-refresh", DOCS)):
        path = directory / f"{name}.dot"
        atomic_write_bytes(path, text.format(root=root).encode())
        written.append(path)
    marker = {
        "node_id": "review",
        "gate_type": "wait.human",
        "summary_ref": "",
        "mode": "business",
        "epic_id": "",
        "timestamp": iso_z(now),
    }
    atomic_write_bytes(
        directory / "signals" / "shop-v2" / "review.gate-wait", json.dumps(marker).encode()
    )
    return written
