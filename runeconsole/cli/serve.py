"""``runeconsole serve``: the console (a project's, or a fleet's) in a browser."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from pathlib import Path

from runeconsole.cli.common import (
    DEFAULT_FLEET,
    add_fleet_option,
    fleet_sources,
    resolve_root,
)
from runeconsole.core.errors import InvalidInput
from runeconsole.core.fleet_file import default_fleet_path
from runeconsole.core.paths import ProjectPaths

DEFAULT_PORT = 8422


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    sub = subparsers.add_parser(
        "serve",
        parents=[common],
        help="serve the console to a browser (a token guards it)",
        description="Serve the console to a browser through textual-serve. Each browser "
        "session gets its own console; the link printed on start carries the access token "
        "(kept 0600 in the state directory), which the browser swaps for a cookie.",
    )
    add_fleet_option(sub, "serve the fleet console of a fleet file instead of one project")
    sub.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    sub.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (8422; 0: any free)")
    sub.add_argument("--tls-cert", metavar="FILE", help="TLS certificate (PEM): serve HTTPS")
    sub.add_argument("--tls-key", metavar="FILE", help="its private key (PEM)")
    sub.add_argument(
        "--insecure-remote",
        action="store_true",
        help="allow a non-loopback --host without TLS (everything crosses the network in "
        "clear text)",
    )
    sub.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers use when a proxy stands in front (e.g. tailscale serve's "
        "https://host.tailnet.ts.net/): its pages may open the WebSocket, and the printed "
        "link and notifications name it",
    )
    sub.add_argument(
        "--no-monitor", action="store_true", help="the served consoles run no tmux monitor"
    )
    sub.add_argument(
        "--max-sessions", type=int, default=8, help="browser sessions open at once (8)"
    )
    sub.add_argument(
        "--json", action="store_true", help="print where it serves as one JSON line on start"
    )
    sub.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from runeconsole.services.serving.access import Access, origin_of
    from runeconsole.services.serving.bind import plan_bind
    from runeconsole.services.serving.record import announced, user_state_dir
    from runeconsole.services.serving.token import load_or_create_token

    plan = plan_bind(
        args.host, cert=args.tls_cert, key=args.tls_key, insecure_remote=args.insecure_remote
    )
    public = origin_of(args.public_url) if args.public_url else None
    if args.public_url and public is None:
        raise InvalidInput(f"--public-url {args.public_url}: not an http(s) URL")
    if args.fleet:
        fleet = default_fleet_path() if args.fleet == DEFAULT_FLEET else Path(args.fleet)
        fleet_sources(str(fleet))  # a bad fleet file is refused before anything listens
        what, state_dir = ["--fleet", str(fleet.expanduser().resolve())], user_state_dir()
    else:
        root = resolve_root(args)
        what, state_dir = ["--root", str(root)], ProjectPaths(root).state
    argv = [sys.executable, "-P", "-m", "runeconsole", "console", *what]
    if args.no_monitor:
        argv.append("--no-monitor")
    token = load_or_create_token(state_dir)

    from runeconsole.web.app import ServedConsole
    from runeconsole.web.run import serve, tls_context

    console = ServedConsole(
        argv,
        Access(token, public_origins=(public,) if public else ()),
        title=f"runeconsole {Path(what[1]).name}",
        secure=plan.tls,
        max_sessions=max(1, args.max_sessions),
    )
    tls = tls_context(args.tls_cert, args.tls_key) if plan.tls else None
    if plan.warning:
        print(f"\n{'!' * 78}\n{plan.warning}\n{'!' * 78}\n", file=sys.stderr, flush=True)

    def ready(bound: str) -> None:
        url = f"{public}/" if public else bound
        stack.enter_context(announced(state_dir, url))
        link = f"{url}?token={token}"
        if args.json:
            shown = {"url": url, "link": link, "listening": bound, "serves": what[1]}
            print(json.dumps(shown), flush=True)
        else:
            print(f"runeconsole serves {what[1]} at\n\n    {link}\n", flush=True)
            print(f"The token is kept in {state_dir / 'serve-token'}. ctrl+c stops.", flush=True)

    with contextlib.ExitStack() as stack:
        asyncio.run(serve(console, plan, args.port, tls=tls, on_ready=ready))
    return 0
