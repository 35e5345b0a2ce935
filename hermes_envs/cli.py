"""hermes-envs: demo, check, fake-server, record, lint-cassettes, view, tokenizer-path (one line each below).

``check`` runs the same conformance runner as ``pytest --hermes-conformance``; ``fake-server`` serves a script so
``python my_env.py process|serve ...`` can run against it offline.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from hermes_envs.conformance._runner import ConformanceReport

#: ``hermes-envs check`` exits as ``pytest --hermes-conformance`` does on the same targets.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_ENV = 0, 1, 4, 5


class _Parser(argparse.ArgumentParser):
    """argparse, exiting with the documented usage status (4, as pytest's usage errors) instead of its own 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _summary(report: ConformanceReport, seconds: float) -> str:
    """The closing line of ``check``: how many checks failed, warned, passed and were skipped, and the time."""
    counts: dict[str, int] = {}
    for env in report.envs:
        for outcome in env.outcomes:
            counts[outcome.status.value] = counts.get(outcome.status.value, 0) + 1
    skipped = counts.get("skipped", 0) + counts.get("not_applicable", 0)
    envs = len(report.envs)
    parts = [
        f"{counts.get('failed', 0)} failed",
        f"{counts.get('warned', 0)} warned",
        f"{counts.get('passed', 0)} passed",
        f"{skipped} skipped",
    ]
    return f"== {', '.join(parts)} ({envs} env{'s' if envs != 1 else ''}) in {seconds:.1f} s =="


@contextlib.contextmanager
def _loading() -> Iterator[None]:
    """No garbage collection while the block imports, then the imported objects frozen out of the collector's sight.

    ``check`` imports atroposlib, transformers, openai and wandb: about 160,000 objects the collector tracks, which
    live until the process ends. Collecting while they load, then walking them again on every later full
    collection (the checks allocate a lot; hypothesis forces a ``gc.collect()``) cost about a quarter of a check's
    time beyond the import. They are never garbage, so ``gc.freeze()`` loses nothing; what the checks create is
    collected as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


def _no_env(args: argparse.Namespace) -> int:
    """Say that the paths hold no environment; the exit status (0 with ``--no-env-ok``, else 5)."""
    print(
        "hermes-envs check: no environment found in " + ", ".join(args.paths) + " (no .py file defining "
        "a class that derives from an *Env base)."
        + (
            " Nothing to check (--no-env-ok)."
            if args.no_env_ok
            else " Fix: name an env file, or the folder that holds them."
        ),
        file=sys.stderr,
    )
    return EXIT_OK if args.no_env_ok else EXIT_NO_ENV


def _check(args: argparse.Namespace) -> int:
    # The settings and the env files are read before the kit (the session, the checks, atroposlib: ~5 s of CPU) is
    # imported: paths with no environment (a pre-commit hook's helper modules) end here at the CLI's start-up.
    from hermes_envs.conformance._targets import (
        discover,
        load_settings,
        parse_overrides,
        refuse_report_over_input,
    )
    from hermes_envs.errors import HermesEnvsError

    ids = lambda v: [x.strip() for x in v.split(",") if x.strip()] if v else None  # noqa: E731
    start = time.perf_counter()
    try:
        if args.report:
            refuse_report_over_input(args.report, args.paths)
        with _loading():  # (select / ignore import the catalogue to check their ids)
            settings = load_settings(
                **parse_overrides(args.set),
                select=ids(args.select),
                ignore=ids(args.ignore),
                slow=args.slow or None,
                env=getattr(args, "env", None) or None,
                config=args.config,
                items=args.items,
                thorough=args.thorough or None,
            )
        if not discover(args.paths, cli=True):
            return _no_env(args)
    except HermesEnvsError as exc:
        print(f"hermes-envs check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with _loading():
        from hermes_envs._quiet import captured
        from hermes_envs.conformance._runner import run_conformance

    library_output = io.StringIO()
    try:
        # What the env's libraries print while it runs (atroposlib's eval tables) is not the check's output: kept
        # out of the report unless -v, and shown when the run itself crashes.
        with captured(library_output, verbose=args.verbose):
            report = run_conformance(args.paths, settings, cli=True)
    except HermesEnvsError as exc:
        print(f"hermes-envs check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BaseException:
        sys.stderr.write(library_output.getvalue()[-4000:])
        raise
    if not report.envs:
        return _no_env(args)
    print(report.to_text())
    if args.report:
        report.write(args.report)
        from hermes_envs.conformance._replay import write_counterexamples

        written = write_counterexamples(report.envs, settings, Path(args.report).parent)
        if written:
            print(
                f"counterexamples: {len(written)} file(s) in {Path(args.report).parent} (hermes-envs replay FILE)"
            )
    print(_summary(report, time.perf_counter() - start))
    return EXIT_FAILED if report.failed else EXIT_OK


def _replay(args: argparse.Namespace) -> int:
    with _loading():
        from hermes_envs._quiet import captured
        from hermes_envs.conformance._replay import replay

    library_output = io.StringIO()
    try:
        with captured(library_output, verbose=False):
            code, text = replay(args.file)
    except (OSError, ValueError, KeyError) as exc:
        print(
            f"hermes-envs replay: {args.file} should be a counterexample file written by `hermes-envs check "
            f"--report`; reading it raised {type(exc).__name__}: {exc}. Fix: pass one of the <env>-<check>-<n>.json "
            "files next to the report.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(text)
    return code


def _demo(args: argparse.Namespace) -> int:
    from hermes_envs.demo import main

    return main(args.out, verbose=args.verbose)


def _fake_server(args: argparse.Namespace) -> int:
    from hermes_envs.demo import register_example_policies
    from hermes_envs.testing.fake_server.cli import run

    register_example_policies()  # --policy arithmetic / file_task / file_task_mixed / judge

    return run(args)


def _record(args: argparse.Namespace) -> int:
    from hermes_envs.testing._record_command import record_main

    return record_main(args)


def _lint_cassettes(args: argparse.Namespace) -> int:
    from hermes_envs.testing._secret_lint import main as lint_main

    return lint_main(args.paths)


def _view(args: argparse.Namespace) -> int:
    from hermes_envs.errors import HermesEnvsError
    from hermes_envs.viewer import write_view

    tokenizer = None if args.tokenizer == "none" else args.tokenizer
    try:
        page = write_view(args.path, args.out, tokenizer=tokenizer)
    except HermesEnvsError as exc:
        print(f"hermes-envs view: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(page)
    return 0


def _tokenizer_path(args: argparse.Namespace) -> int:
    from hermes_envs.testing.offline import offline_tokenizer_path

    print(offline_tokenizer_path())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``hermes-envs`` command."""
    parser = _Parser(prog="hermes-envs", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="gate the example env and run it under atroposlib process, offline")
    demo.add_argument(
        "--out", default="demo-output", help="folder for the report, JSONL and HTML (default: %(default)s)"
    )
    demo.add_argument(
        "-v", "--verbose", action="store_true", help="print every check and what the libraries print"
    )
    demo.set_defaults(func=_demo)

    chk = sub.add_parser(
        "check",
        help="run the conformance checks on env files or folders (exit 1 on errors)",
        description="Run the conformance checks on every env class of the given files or folders, as "
        "`pytest --hermes-conformance PATH` does. Exit status as pytest's: 0 every check passed, 1 a check "
        "failed, 4 a usage error (a missing path, a bad setting), 5 no environment found.",
    )
    chk.add_argument(
        "paths", nargs="+", metavar="PATH", help="env files or folders (PATH::Class picks one class)"
    )
    chk.add_argument("--select", help="comma-separated check ids or prefixes to run")
    chk.add_argument("--ignore", help="comma-separated check ids or prefixes to skip")
    chk.add_argument("--slow", action="store_true", help="also run the slow checks (HC503: a `process` run)")
    chk.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override one [tool.hermes-conformance] setting, e.g. --set control_ceiling=0.3",
    )
    chk.add_argument(
        "--items",
        metavar="FILE.jsonl",
        help="items (one JSON object a line) the checks run on when setup() cannot load the env's own data "
        "offline (a Hub dataset); findings made on them say so",
    )
    chk.add_argument(
        "--config",
        metavar="FILE.yaml",
        help="a `process --config` YAML file: its env: section sets env config fields (--env.* wins)",
    )
    chk.epilog = (
        "Env config fields are set as `process` takes them: --env.FIELD VALUE (or --env.FIELD=VALUE), e.g. "
        "--env.dataset_name data/train.jsonl."
    )
    chk.add_argument(
        "--report",
        metavar="FILE",
        help="also write the report (.json or Markdown; never one of the PATHs), and each error's "
        "counterexample next to it (<folder of FILE>/<env>-<check>-<n>.json, for `hermes-envs replay`)",
    )
    chk.add_argument(
        "--thorough",
        action="store_true",
        help="run the costlier oracles in full (HC413 on every proven item, HC412 with 5x the examples)",
    )
    chk.add_argument(
        "--no-env-ok",
        action="store_true",
        help="skip named files that define no env class, and exit 0 (not 5) when no environment is found "
        "(for a pre-commit hook, which also passes helper modules)",
    )
    chk.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show what the env and its libraries print while checked",
    )
    chk.set_defaults(func=_check)

    rep = sub.add_parser(
        "replay",
        help="rerun one error finding from its counterexample file (exit 1: it reproduces, 0: it is gone)",
        description="Rerun the counterexample `hermes-envs check --report DIR/report.json` wrote for one error "
        "finding (DIR/<env>-<check>-<n>.json) against the env: exit 1 when the violation reproduces, 0 when it "
        "no longer does.",
    )
    rep.add_argument("file", metavar="FILE", help="a counterexample file written next to a report")
    rep.set_defaults(func=_replay)

    from hermes_envs.testing.fake_server.cli import add_arguments

    fake = sub.add_parser(
        "fake-server", help="serve a fake OpenAI-compatible model from a script until interrupted"
    )
    add_arguments(fake)
    for action in fake._actions:  # the example policies registered by _fake_server, named in --help too
        if action.dest == "policy" and action.help:
            action.help += (
                "; or a fake model solving an example: arithmetic, file_task, file_task_mixed, judge"
            )
    fake.set_defaults(func=_fake_server)

    from hermes_envs.testing._record_command import add_record_arguments

    rec = sub.add_parser("record", help="run real rollouts of an env against a provider and write a cassette")
    add_record_arguments(rec)
    rec.set_defaults(func=_record)

    lint = sub.add_parser("lint-cassettes", help="fail (exit 1) when a cassette holds a key-like string")
    lint.add_argument("paths", nargs="+", metavar="PATH", help="cassette files or folders")
    lint.set_defaults(func=_lint_cassettes)

    view = sub.add_parser(
        "view", help="write one self-contained HTML page of the rollouts in a process-mode groups JSONL"
    )
    view.add_argument("path", metavar="JSONL", help="the file of --env.data_path_to_save_groups")
    view.add_argument(
        "-o", "--out", metavar="HTML", help="the page to write (default: JSONL's name + .view.html)"
    )
    view.add_argument(
        "--tokenizer",
        default="offline",
        metavar="FOLDER",
        help="tokenizer folder to decode the tokens with: 'offline' (the shipped one, default), a folder with "
        "tokenizer.json, or 'none' to show token ids",
    )
    view.set_defaults(func=_view)

    tok = sub.add_parser(
        "tokenizer-path", help="print the folder of the offline tokenizer (for --env.tokenizer_name)"
    )
    tok.set_defaults(func=_tokenizer_path)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; for ``check``, ``--env.FIELD VALUE`` options first (as atroposlib's ``process`` takes them),
    which argparse cannot declare."""
    env: dict[str, object] = {}
    if argv and argv[0] == "check":
        from hermes_envs.conformance._targets import parse_env_options
        from hermes_envs.errors import ConfigError

        try:
            argv, env = parse_env_options(argv)
        except ConfigError as exc:
            parser.error(str(exc))
    args = parser.parse_args(argv)
    if args.command == "check":
        args.env = env
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hermes-envs`` console script.

    Called with ``argv`` (from a test or another program), it gives the objects it froze back to the collector
    when done; the command's own process keeps them frozen to its end, which also spares the collections the
    interpreter runs while it shuts down (about as long as the import's own collections). The command's own
    process of ``check`` also ends without tearing its modules down (:func:`_exit_now`).
    """
    # transformers says "PyTorch was not found" on import; the tokenizer-only use here never needs PyTorch.
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    try:
        with (
            _loading()
        ):  # the parser imports the fake server's and the recorder's options (aiohttp, pydantic)
            args = _parse(build_parser(), list(sys.argv[1:] if argv is None else argv))
        code = int(args.func(args) or 0)
        if argv is None and args.func is _check:
            _exit_now(code)
        return code
    finally:
        if argv is not None:
            gc.unfreeze()


def _exit_now(code: int) -> None:
    """End the process as the interpreter would, minus its last step: non-daemon threads joined and ``atexit``
    handlers run (sandboxes cleaned up, logs flushed, coverage saved), output flushed, then ``os._exit``.

    What is skipped is the module teardown: a check has imported ~2,000 modules (atroposlib, transformers, openai)
    whose objects would be freed one by one, about 0.05x of a check's CPU for memory the kernel reclaims at once.
    ``threading._shutdown`` and ``atexit._run_exitfuncs`` are the interpreter's own first two steps of an exit
    (private names; without them this is an ordinary return)."""
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if (
        shutdown is None or run_exitfuncs is None
    ):  # pragma: no cover - another interpreter: exit the usual way
        return
    shutdown()
    run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
