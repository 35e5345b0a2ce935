"""``hermes-envs fake-server``: serve a script (or a policy) over HTTP until interrupted."""

from __future__ import annotations

import argparse
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
    from .faults import parse_fault
    from .server import FakeOpenAIServer

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
            tokenizer=_load_tokenizer(getattr(args, "tokenizer", None)),
            tool_parser=getattr(args, "tool_parser", "hermes"),
        )
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
    srv.serve_forever(on_ready=lambda: print(srv.base_url, flush=True))
    for f in srv.failures:
        print(f"fake-server miss: {f}", file=sys.stderr, flush=True)
    print(
        f"fake-server: {srv.call_count} requests, {len(srv.failures)} unmatched", file=sys.stderr, flush=True
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hermes-envs fake-server", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
