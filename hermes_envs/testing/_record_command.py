"""``hermes-envs record``: its arguments, the run through :func:`~hermes_envs.testing.recording.run_rollouts`, and
the end-of-run summary (a rich table of rewards per item, then totals, cassette, drift and lint)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hermes_envs.testing.recording import Provider, RolloutRun, default_cassette_for_env, run_rollouts

__all__ = ["add_record_arguments", "print_summary", "record_main"]


def _item_label(item: Any) -> str:
    if isinstance(item, dict):
        for key in ("question", "prompt", "instruction", "task", "input"):
            if isinstance(item.get(key), str):
                return item[key]
    text = item if isinstance(item, str) else json.dumps(item, default=repr)
    return str(text)


def print_summary(run: RolloutRun, console: Any = None) -> None:
    """The end-of-run summary: a table of rewards per item, then totals, cassette, drift and lint."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(stderr=True)
    table = Table(title=f"{run.env}: rewards per item", show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("item")
    table.add_column("rewards")
    table.add_column("mean", justify="right")
    for i, (item, rewards) in enumerate(zip(run.items, run.rewards)):
        label = _item_label(item)
        mean = f"{sum(rewards) / len(rewards):.3f}" if rewards else "-"
        table.add_row(
            str(i),
            label[:60] + ("…" if len(label) > 60 else ""),
            " ".join(f"{r:g}" for r in rewards) or "(no rollout)",
            mean,
        )
    console.print(table)
    for line in run.summary_lines():
        console.print(line, markup=False, highlight=False)


def add_record_arguments(parser: Any) -> None:
    """Arguments of ``hermes-envs record``."""
    parser.add_argument("env", metavar="ENV_FILE", help="environment file (ENV_FILE::Class picks one class)")
    parser.add_argument("--items", type=int, default=1, help="items (groups) to run (default: %(default)s)")
    parser.add_argument("--group-size", type=int, default=None, help="rollouts per item (default: the env's)")
    parser.add_argument("--max-turns", type=int, default=None, help="cap on agent turns per rollout")
    parser.add_argument(
        "--openai.base_url", dest="base_url", required=True, help="OpenAI-compatible base URL"
    )
    parser.add_argument(
        "--openai.model_name", dest="model", required=True, help="model name sent to the provider"
    )
    parser.add_argument(
        "--openai.api_key-env",
        dest="api_key_env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default: %(default)s)",
    )
    parser.add_argument(
        "--cassette",
        default=None,
        metavar="PATH",
        help="cassette to write (default: <env folder>/cassettes/<env stem>/<name>.yaml)",
    )
    parser.add_argument(
        "--name", default="rollouts", help="cassette name in the default folder (default: %(default)s)"
    )
    parser.add_argument(
        "--record-mode",
        default="rewrite",
        choices=["rewrite", "all", "new_episodes", "once"],
        help="vcrpy record mode; rewrite starts the cassette afresh (default: %(default)s)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def record_main(args: Any) -> int:
    """``hermes-envs record``: run real rollouts, write the cassette, print the summary.

    Exit 1 when a request failed (the cassette is then left as it was), on secrets or misses, or with no rollout."""
    from hermes_envs.errors import HermesEnvsError

    env, _, class_name = str(args.env).partition("::")
    cassette = Path(args.cassette) if args.cassette else default_cassette_for_env(env, args.name)
    from hermes_envs.testing.recording import ProviderProbeError

    try:
        provider = Provider.from_env(args.base_url, args.model, args.api_key_env)
        if provider.key_note:
            print(f"hermes-envs record: note: {provider.key_note}", file=sys.stderr)
        run = run_rollouts(
            env,
            items=args.items,
            provider=provider,
            cassette=cassette,
            record_mode=args.record_mode,
            group_size=args.group_size,
            max_turns=args.max_turns,
            class_name=class_name or None,
            progress=not args.no_progress,
        )
    except ProviderProbeError as exc:  # a failed recording, found before any rollout: exit 1 as one
        print(f"hermes-envs record: {exc}", file=sys.stderr)
        return 1
    except HermesEnvsError as exc:
        print(f"hermes-envs record: {exc}", file=sys.stderr)
        return 2
    print_summary(run)
    c = run.cassette
    if c is not None and c.failures:
        print(f"hermes-envs record: {c.failure_message()}", file=sys.stderr)
    return 1 if (c is not None and (c.failures or c.findings or c.misses)) or not run.rollouts else 0
