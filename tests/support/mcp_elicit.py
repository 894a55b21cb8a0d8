"""A tiny stdio MCP server whose one tool, ``deploy``, asks the user where to deploy
through an elicitation (``elicitation/create`` with a form schema: a text, an integer
with bounds, a boolean with a default and an enum with labels), then returns what the
client answered as the tool's result: ``elicitation answer: {…}``.

JSON-RPC a line, as MCP's stdio transport has it; enough of the protocol for Claude
Code to list the tool and call it. Run as ``python -m tests.support.mcp_elicit`` (with
this checkout importable: the form is the demo's).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from runeconsole.demo.claude_scene import ELICIT_REQUEST

SCHEMA = ELICIT_REQUEST["requested_schema"]  # the demo's form: text, integer, yes/no, choice
MESSAGE = "Where should this deploy go?"
TOOL = {
    "name": "deploy",
    "description": "Deploy, asking the user where",
    "inputSchema": {"type": "object", "properties": {}},
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    calls: dict[int, Any] = {}  # our elicitation request id -> the tools/call it serves
    next_id = 1000
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            version = message.get("params", {}).get("protocolVersion", "2025-06-18")
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "deploy", "version": "1.0"},
            }
            send({"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            next_id += 1
            calls[next_id] = ident
            params = {"message": MESSAGE, "requestedSchema": SCHEMA}
            send(
                {"jsonrpc": "2.0", "id": next_id, "method": "elicitation/create", "params": params}
            )
        elif ident in calls and method is None:
            said = message.get("result") or message.get("error")
            text = "elicitation answer: " + json.dumps(said, sort_keys=True)
            result = {"content": [{"type": "text", "text": text}]}
            send({"jsonrpc": "2.0", "id": calls.pop(ident), "result": result})
        elif ident is not None and method:
            send({"jsonrpc": "2.0", "id": ident, "result": {}})


if __name__ == "__main__":
    main()
