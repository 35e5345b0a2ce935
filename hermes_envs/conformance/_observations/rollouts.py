"""Rollouts through the real agent loop and the fake model: the probe items, one rollout of an item with a given
responder, and the session's one run of every probe (the canned ones of :mod:`hermes_envs.conformance._probes` and
one per recorded cassette) on every probe item."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_envs.conformance._findings import Skip
from hermes_envs.conformance._observations.training import TrainingScan
from hermes_envs.conformance._probes import PROBES, Responder
from hermes_envs.conformance._session import EnvSession
from hermes_envs.env._prompt import format_prompt_of, initial_messages_of


def check_rollouts_possible(s: EnvSession) -> None:
    """Skip rollout-based checks when the env's tools cannot be resolved (HC802 says so) or its configured
    tool-call parser does not exist (HC801 says so)."""
    if s.is_hermes_env():
        s.tools()
    name = getattr(getattr(s.env(), "config", None), "tool_call_parser", None)
    if not name:
        return
    from hermes_envs.parsers import get_parser

    try:
        get_parser(name)
    except KeyError:
        raise Skip(
            f"the env's tool_call_parser {name!r} does not exist, so every rollout with text would "
            "crash (see HC801)"
        ) from None


def probe_items(s: EnvSession) -> list[Any]:
    """A few training items to run probes on (the first ones of the cycle)."""
    check_rollouts_possible(s)
    items = list(s.observe(TrainingScan).items)
    if not items:
        raise Skip("no training item could be obtained from get_next_item (see HC202/HC203)")
    items = items[: s.settings.probe_items]
    problem = prompt_problem(s, items)
    if problem:
        raise Skip(f"{problem}, so no rollout can be built from it (see HC301)")
    return items


def prompt_problem(s: EnvSession, items: list[Any]) -> str | None:
    """Why the user prompt of a rollout cannot be built for ``items`` (format_prompt raises or returns no str),
    or None. Rollout checks then skip instead of reporting the crash as their own (HC301 reports it)."""
    if not s.is_hermes_env():
        return None
    env = s.env()
    for item in items:
        try:
            prompt = format_prompt_of(env, item)
        except Exception as exc:
            return f"format_prompt(item) raised {type(exc).__name__}: {exc}"
        if not isinstance(prompt, str):
            if asyncio.iscoroutine(prompt):
                prompt.close()  # never awaited by anyone: close it so Python does not warn
            return f"format_prompt(item) returned a {type(prompt).__name__}, not a str"
    return None


def run_probe(
    s: EnvSession, item: Any, responder: Responder, max_turns: int, name: str, phase: str = "probes"
) -> tuple[Any, str]:
    """One rollout of ``item`` through the real agent loop, the fake model answering with ``responder``.

    Returns ``(AgentResult, task_id)``; the task's sandbox is left for the reward to inspect (clean it up).
    """
    from hermes_envs.agent import HermesAgentLoop

    env = s.env()
    schemas, names = s.tools()
    messages = initial_messages_of(env, item)
    task_id = f"probe-{name}-{uuid.uuid4().hex[:8]}"
    loop = HermesAgentLoop(
        env.server,
        schemas,
        names,
        max_turns=max_turns,
        task_id=task_id,
        temperature=1.0,
        tool_call_parser=getattr(env.config, "tool_call_parser", "hermes"),
    )
    with s.responding(responder):
        result = s.run_env(lambda _env: loop.run(messages), phase=phase)
    return result, task_id


def cassette_files(s: EnvSession) -> list[Path]:
    """Cassettes that drive extra probes: ``settings.cassettes``, else the env's default cassette folder."""
    if s.settings.cassettes is not None:
        return [Path(p) for p in s.settings.cassettes]
    folder = s.path.parent / "cassettes" / s.path.stem
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


#: A probe: (name, a factory of its responder, max turns, what it stands for).
Probe = tuple[str, Callable[..., Responder], int, str]  # (a factory may bind its responder as a default)


def cassette_probes(s: EnvSession) -> tuple[list[Probe], list[str]]:
    """One probe per recorded cassette: a real model's replies (nearest recorded reply for requests the
    recording never saw), so its quirks reach the same reward checks as the synthetic probes; and what went
    wrong reading the cassettes that could not be read."""
    from hermes_envs.testing.cassettes import cassette_responder

    probes: list[Probe] = []
    errors: list[str] = []
    for path in cassette_files(s):
        try:
            responder = cassette_responder(path, strict=False)
        except Exception as exc:  # an unreadable cassette is the recording's problem, not a check crash
            errors.append(f"{path}: {type(exc).__name__}: {exc}")
            continue
        max_turns = min(getattr(getattr(s.env(), "config", None), "max_agent_turns", 6) or 6, 6)
        probes.append((f"cassette:{path.name}", lambda r=responder: r, max_turns, f"replay of {path.name}"))
    return probes, errors


@dataclass(frozen=True)
class ProbeRun:
    """One probe's rollout of one probe item: ``result`` is the AgentResult, ``task_id`` its sandbox's id."""

    probe: str
    item: Any
    result: Any
    task_id: str
    about: str


@dataclass(frozen=True)
class ProbeTranscripts:
    """Every probe run on every probe item through the real agent loop and the fake server, once per session;
    ``cassette_errors`` names the recorded cassettes that could not be read (their probes are left out)."""

    runs: tuple[ProbeRun, ...]
    cassette_errors: tuple[str, ...]

    @classmethod
    def build(cls, s: EnvSession) -> ProbeTranscripts:
        out: list[ProbeRun] = []
        probes: list[Probe] = [
            (name, factory, turns, about) for name, (factory, turns, about) in PROBES.items()
        ]
        recorded, errors = cassette_probes(s)
        probes += recorded
        for item in probe_items(s):
            for probe, factory, max_turns, about in probes:
                result, task_id = run_probe(s, item, factory(), max_turns, probe)
                out.append(ProbeRun(probe=probe, item=item, result=result, task_id=task_id, about=about))
        return cls(runs=tuple(out), cassette_errors=tuple(errors))
