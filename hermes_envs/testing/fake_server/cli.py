"""``hermes-envs fake-server``: serve a script (or a policy) over HTTP until interrupted."""

from __future__ import annotations

import argparse
import errno
import gc
import sys
from typing import Any

from hermes_envs.errors import ScriptError

__all__ = ["add_arguments", "main", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument(
        "--script", metavar="FILE", help="YAML or JSON script of turns (see docs/fake-server.md)"
    )
    parser.add_argument(
        "--policy",
        metavar="NAME",
        help="built-in policy answering when there is no script, or the script's misses "
        "(do_nothing, refuse, echo, answer:text=..., call_each_tool, spam_tools)",
    )
    parser.add_argument(
        "--fault",
        metavar="SPEC",
        action="append",
        default=[],
        help="server-wide fault, repeatable: KIND[:key=value,...] e.g. 429:retry_after=1,rate=0.2,seed=1",
    )
    parser.add_argument("--fault-seed", type=int, default=0, help="seed for fault rates (default 0)")
    parser.add_argument("--model", default="fake", help="model id served by /v1/models (default: fake)")
    parser.add_argument("--lenient", action="store_true", help="do not count misses as failures on exit")
    parser.add_argument(
        "--tokenizer",
        metavar="PATH",
        help="tokenizer folder for the token routes (/generate, /tokenize, usage); 'offline' = the shipped one "
        "(default: offline when installed)",
        default="offline",
    )
    parser.add_argument(
        "--web-corpus",
        nargs="?",
        const="",
        metavar="DIR",
        help="also serve a fake web corpus (a folder of .md/.html pages; no DIR: the shipped one) for the web and "
        "browser tools of env processes; the export lines to use it are printed on stderr (docs/toolsets.md)",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=1000,
        metavar="N",
        help="requests kept in memory for the exit report (default: %(default)s; the count covers them all)",
    )
    parser.add_argument(
        "--no-record",
        action="store_true",
        help="keep no request in memory (same as --history 0): flat memory for a server that runs for days",
    )
    parser.add_argument(
        "--tool-parser",
        default="hermes",
        metavar="NAME",
        help="format of tool calls in raw text on /generate and /v1/completions (default: hermes)",
    )


def _load_tokenizer(spec: str | None) -> Any:
    """The tokenizer for token routes: None for 'none', the shipped offline one for 'offline', else a folder."""
    if not spec or spec == "none":
        return None
    if spec == "offline":
        from hermes_envs.testing.offline import load_offline_tokenizer

        return load_offline_tokenizer()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(spec)


def run(args: argparse.Namespace) -> int:
    from ._faults import parse_fault
    from ._server import FakeOpenAIServer

    if not args.script and not args.policy:
        print("fake-server: give --script FILE or --policy NAME.", file=sys.stderr, flush=True)
        return 2
    try:
        faults = [parse_fault(s) for s in args.fault]
        srv = FakeOpenAIServer(
            script=args.script,
            policy=args.policy,
            strict=not getattr(args, "lenient", False),
            host=args.host,
            port=args.port,
            model=args.model,
            faults=faults,
            fault_seed=args.fault_seed,
            tool_parser=getattr(args, "tool_parser", "hermes"),
            history=0 if getattr(args, "no_record", False) else max(0, getattr(args, "history", 1000)),
        )
        # Only once the script, policy and faults are known good: the offline tokenizer imports transformers
        # (~2.5 s of CPU), which a malformed script's exit-2 message should not wait for.
        srv.tokenizer = _load_tokenizer(getattr(args, "tokenizer", None))
    except ScriptError as e:
        print(str(e), file=sys.stderr, flush=True)
        return 2
    except (ValueError, OSError) as e:
        print(f"fake-server: {e}", file=sys.stderr, flush=True)
        return 2

    if getattr(args, "web_corpus", None) is not None:
        from hermes_envs.tools.toolsets.web_server import serve_web_corpus

        try:
            serve_web_corpus(args.web_corpus, host=args.host)  # a daemon thread: it ends with this process
        except ValueError as e:
            print(f"fake-server: {e}", file=sys.stderr, flush=True)
            return 2
    # What is loaded by now (aiohttp, pydantic, the offline tokenizer through transformers: about 90 000 objects
    # the collector tracks) lives as long as the process: frozen out of the collector's sight, a full collection
    # walks only what the requests left (the records), not a 50 ms walk of the libraries every few 10 000 requests.
    gc.freeze()
    # the server runs in this (main) thread until SIGINT/SIGTERM: no server thread, no thread waiting beside it
    try:
        srv.serve_forever(on_ready=lambda: print(srv.base_url, flush=True))
    except OSError as e:
        print(_bind_error(e, args.host, args.port), file=sys.stderr, flush=True)
        return 2
    failures = srv.failures
    for f in failures:
        print(f"fake-server miss: {f}", file=sys.stderr, flush=True)
    unmatched = srv.miss_count if failures else 0
    if unmatched > len(failures):
        print(
            f"fake-server: ... and {unmatched - len(failures)} earlier miss(es) not kept (--history)",
            file=sys.stderr,
            flush=True,
        )
    print(f"fake-server: {srv.request_count} requests, {unmatched} unmatched", file=sys.stderr, flush=True)
    return 0


def _bind_error(e: OSError, host: str, port: int) -> str:
    """What a failed bind means for the user: a taken port, a privileged one, an address not on this machine."""
    where = f"{host}:{port}"
    if e.errno == errno.EADDRINUSE:
        return (
            f"fake-server: port {port} on {host} should be free; another process is listening on it.\n"
            f"Fix: pick another port (--port {port + 1 if 0 < port < 65535 else 8001}), or --port 0 for a free "
            f"one (the server prints its base URL on stdout); `ss -ltnp 'sport = :{port}'` shows who holds it."
        )
    if e.errno == errno.EACCES:
        return (
            f"fake-server: cannot listen on {where}: permission denied (ports below 1024 need root).\n"
            "Fix: pick a port above 1023, or --port 0 for a free one."
        )
    if e.errno == errno.EADDRNOTAVAIL:
        return f"fake-server: cannot listen on {where}: the address is not on this machine.\nFix: use --host 127.0.0.1."
    return f"fake-server: cannot listen on {where}: {e}.\nFix: check --host and --port."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hermes-envs fake-server", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
