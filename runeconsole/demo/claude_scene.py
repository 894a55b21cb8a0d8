"""The Claude Code part of the fixed demo scene: what the hooks and status lines reported
of some agents (activity, tokens, context, cost against the budgets, the plan's headroom),
an AskUserQuestion call relayed to the console and a permission request waiting for the
operator."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import Any

from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.budgets import booking
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.permissions import files as permission_files
from runeconsole.services.claude.permissions import rules as permission_rules
from runeconsole.services.claude.questions import elicitation, relay_files
from runeconsole.services.registry import Registry

HOOK_AGENT = ("claude", "shop-7f3a91c2", None)  # a session started by hand, seen by its hooks
ASKER = "orchestrator-search"
ASK_CALL: dict[str, Any] = {
    "questions": [
        {
            "question": "Which index layout should search use?",
            "header": "Index",
            "multiSelect": False,
            "options": [
                {"label": "Inverted index", "description": "fast lookups, larger on disk"},
                {"label": "Trigram index", "description": "substring search, slower builds"},
            ],
        },
        {
            "question": "Which checks should run before the merge?",
            "header": "Checks",
            "multiSelect": True,
            "options": [
                {"label": "lint", "description": "ruff"},
                {"label": "unit", "description": "pytest, 40 s"},
                {"label": "e2e", "description": "browser suite, 6 min"},
            ],
        },
    ]
}
ASK_TASK = "ask-toolu_01DemoSearchLayout"

# key -> (activity, waiting for, context left %, tokens in all)
HOOKED: dict[str, tuple[str, str | None, int, int]] = {
    "orchestrator-auth": ("busy", None, 12, 1_482_000),
    ASKER: ("waiting", "Which index layout should search use? (+1 more)", 58, 642_300),
    "worker-parser": ("busy", None, 41, 318_900),
    "worker-tokens": ("idle", None, 23, 204_100),
    "claude-shop-7f3a91c2": ("waiting", "Claude needs your permission", 78, 41_200),
}


# key -> (dollars before today, dollars today, estimated): one near its budget, one held
SPENT: dict[str, tuple[float, float, bool]] = {
    "orchestrator-auth": (28.80, 12.40, False),  # 82 % of per_agent_usd
    ASKER: (0.0, 6.35, False),
    "worker-parser": (1.20, 1.90, False),
    "worker-tokens": (0.0, 20.45, False),  # past per_day_usd: held
    "claude-shop-7f3a91c2": (0.0, 0.42, True),  # no status line yet: estimated
}
BUDGETS = {"per_agent_usd": 50.0, "per_day_usd": 20.0, "fleet_day_usd": None}
PLAN = {"five_hour": {"used_percentage": 42}, "seven_day": {"used_percentage": 17}}


def tokens(total: int) -> dict[str, int]:
    """A plausible split of ``total`` (most of a long session is read from the cache)."""
    parts = {"input": total * 4 // 100, "output": total * 2 // 100}
    parts["cache_creation"] = total * 9 // 100
    parts["cache_read"] = total - sum(parts.values())
    return {name: parts[name] for name in ("input", "output", "cache_read", "cache_creation")}


def feed_hooks(registry: Registry) -> None:
    """Write what the hooks and status lines would have into those agents' identities
    (and their spending into the ledgers, as the status line books it)."""
    now = registry.clock.now()
    for key, (activity, waiting_for, left, total) in HOOKED.items():
        fields: dict[str, Any] = {"role": key.split("-")[0]}
        before, today, estimated = SPENT[key]
        for session, usd, when in (("s0", before, now - timedelta(days=1)), ("s1", today, now)):
            if usd:
                entry = booking.Entry(registry.paths, key, fields, {})
                booking.book(entry, session, usd, estimated, when, BUDGETS)
        registry.update(
            key,
            {
                "activity": activity,
                "waiting_for": waiting_for,
                "context_left_percent": left,
                "tokens": tokens(total),
                **({"cost": fields["cost"]} if "cost" in fields else {}),
                **({"rate_limits": {**PLAN, "reported_at": iso_z(now)}} if key == ASKER else {}),
            },
        )


def relay_call(paths: ProjectPaths, now: datetime) -> None:
    """The asker's two-question call, as its hook writes it for the console."""
    relay_files.write_call(
        paths,
        relay_files.parse_call(ASK_CALL),
        task_id=ASK_TASK,
        key=ASKER,
        now=now,
        wait_seconds=300,
        session_id="6c1f0e5a-demo",
        tool_use_id="toolu_01DemoSearchLayout",
    )


PERMISSION_ID = "perm-20250101T120000000000-demo"
PERMISSION_AGENT = "claude-shop-7f3a91c2"
PERMISSION_INPUT = {
    "command": "rm -rf build && npm run build -- --prod",
    "description": "Clean and rebuild the production bundle",
}


def permission_request(paths: ProjectPaths, now: datetime) -> None:
    """The hand-started session's Bash call, waiting for the operator's permission (its
    hook is this process: the console treats the request as open while it runs)."""
    suggested = [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "npm run build:*"}],
            "behavior": "allow",
            "destination": "localSettings",
        }
    ]
    fields = permission_files.request_fields(
        PERMISSION_AGENT,
        "Bash",
        PERMISSION_INPUT,
        suggested,
        request_id=PERMISSION_ID,
        now=now,
        wait_seconds=120,
        session_id="7f3a91c2-demo",
        permission_mode="default",
    )
    with contextlib.suppress(FileExistsError):
        permission_files.write_request(paths, fields)
    decided_permissions(paths, now)


# (id, agent, command, decision: behavior, who, message or rule)
DECIDED = (
    ("perm-20250101T115500000000-demo", "worker-tokens", "git push --force origin main",
     ("deny", permission_files.OPERATOR, "never force-push main; open a PR")),
    ("perm-20250101T115800000000-demo", "worker-parser", "npm test",
     ("allow", permission_files.RULE, None)),
)  # fmt: skip


def decided_permissions(paths: ProjectPaths, now: datetime) -> None:
    """Earlier requests and who decided them, and the rule that decided one."""
    rule = permission_rules.add(paths, "allow", "Bash", "npm test", None, now)
    for request_id, agent, command, (behavior, by, said) in DECIDED:
        fields = permission_files.request_fields(
            agent, "Bash", {"command": command}, None, request_id=request_id,
            now=now - timedelta(minutes=5), wait_seconds=None,
        )  # fmt: skip
        decision = permission_files.decision_fields(
            request_id, behavior, by, message=said, rule=rule.id if by == "rule" else None, now=now
        )
        with contextlib.suppress(FileExistsError):
            path = permission_files.write_request(paths, fields)
            permission_files.write_decision(path, decision)


ELICIT_AGENT = "claude-shop-7f3a91c2"
ELICIT_TASK = "elicit-7f3a91c2-20250101T120000000000"
ELICIT_REQUEST = {
    "hook_event_name": "Elicitation",
    "session_id": "7f3a91c2-demo",
    "mcp_server_name": "deploy",
    "message": "Where should release 2.4 go?",
    "mode": "form",
    "requested_schema": {
        "type": "object",
        "properties": {
            "branch": {"type": "string", "title": "Branch", "description": "to deploy"},
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 9},
            "canary": {"type": "boolean", "title": "Canary first", "default": True},
            "region": {
                "type": "string",
                "title": "Region",
                "enum": ["eu", "us"],
                "enumNames": ["Europe", "America"],
            },
        },
        "required": ["branch", "region"],
    },
}


def elicitation_request(paths: ProjectPaths, now: datetime) -> None:
    """An MCP server's form, asked by the hand-started session (not in the scene itself:
    the form's snapshot and screenshot add it)."""
    request = HookPayload(ELICIT_REQUEST)
    elicitation.write_request(paths, ELICIT_AGENT, request, ELICIT_TASK, now, 300)
