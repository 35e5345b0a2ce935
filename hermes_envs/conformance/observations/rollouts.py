"""Rollouts on the session: the env's tools, the probe items, and one agent-loop run per probe through the fake
model (the canned probes of :mod:`hermes_envs.conformance.probes` and every recorded cassette), cached.

:class:`Rollouts` is mixed into :class:`~hermes_envs.conformance.session.EnvSession`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_envs.conformance.findings import Blocked, Skip
from hermes_envs.conformance.probes import PROBES, Responder


class Rollouts:
    """Probe rollouts through the real agent loop, on the session they are mixed into."""

    facts: dict[str, Any]
    settings: Any
    path: Path
    tools_error: tuple[str, BaseException] | None

    def check_rollouts_possible(self) -> None:
        """Skip rollout-based checks when the env's tools cannot be resolved (HC802 says so) or its configured
        tool-call parser does not exist (HC801 says so)."""
        if self.is_hermes_env():
            self.tools()
        name = getattr(getattr(self.env(), "config", None), "tool_call_parser", None)
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

    def probe_items(self) -> list[Any]:
        """A few training items to run probes on (the first ones of the cycle)."""
        self.check_rollouts_possible()
        items = self.training_items()["items"]
        if not items:
            raise Skip("no training item could be obtained from get_next_item (see HC202/HC203)")
        items = items[: self.settings.probe_items]
        problem = self.prompt_problem(items)
        if problem:
            raise Skip(f"{problem}, so no rollout can be built from it (see HC301)")
        return items

    def prompt_problem(self, items: list[Any]) -> str | None:
        """Why the user prompt of a rollout cannot be built for ``items`` (format_prompt raises or returns no str),
        or None. Rollout checks then skip instead of reporting the crash as their own (HC301 reports it)."""
        if not self.is_hermes_env():
            return None
        env = self.env()
        for item in items:
            try:
                prompt = env.format_prompt(item)
            except Exception as exc:
                return f"format_prompt(item) raised {type(exc).__name__}: {exc}"
            if not isinstance(prompt, str):
                if asyncio.iscoroutine(prompt):
                    prompt.close()  # never awaited by anyone: close it so Python does not warn
                return f"format_prompt(item) returned a {type(prompt).__name__}, not a str"
        return None

    def tools(self) -> tuple[list[dict], set[str]]:
        """The env's tools for a group (``_resolve_tools_for_group`` when it has one, else none).

        When resolving them raises (a toolset the kit lacks, say), that one cause is kept: HC802 reports it and the
        checks that need the tools are skipped naming it."""
        if self.tools_error is not None:
            raise Blocked("the env's tools", self.tools_error[0], "HC802")
        env = self.env()
        resolve = getattr(env, "_resolve_tools_for_group", None)
        if resolve is None:
            return [], set()
        try:
            schemas, names = resolve()
        except Exception as exc:
            self.tools_error = (f"_resolve_tools_for_group() raised {type(exc).__name__}: {exc}", exc)
            raise Blocked("the env's tools", self.tools_error[0], "HC802") from None
        return list(schemas or []), set(names or [])

    def probe_transcripts(self) -> list[dict[str, Any]]:
        """Run every probe on every probe item through the real agent loop and fake server; cached.

        Each entry: ``{"probe", "item", "result", "task_id"}``. Probe results are AgentResult objects.
        """
        if "probes" in self.facts:
            return self.facts["probes"]
        out: list[dict[str, Any]] = []
        probes = [(name, factory, turns, about) for name, (factory, turns, about) in PROBES.items()]
        probes += self.cassette_probes()
        for item in self.probe_items():
            for probe, factory, max_turns, about in probes:
                result, task_id = self.run_probe(item, factory(), max_turns, probe)
                out.append(
                    {"probe": probe, "item": item, "result": result, "task_id": task_id, "about": about}
                )
        self.facts["probes"] = out
        return out

    def cassette_files(self) -> list[Path]:
        """Cassettes that drive extra probes: ``settings.cassettes``, else the env's default cassette folder."""
        if self.settings.cassettes is not None:
            return [Path(p) for p in self.settings.cassettes]
        folder = self.path.parent / "cassettes" / self.path.stem
        return sorted(folder.glob("*.yaml")) if folder.is_dir() else []

    def cassette_probes(self) -> list[tuple[str, Callable[[], Responder], int, str]]:
        """One probe per recorded cassette: a real model's replies (nearest recorded reply for requests the
        recording never saw), so its quirks reach the same reward checks as the synthetic probes."""
        from hermes_envs.testing.cassettes import cassette_responder

        probes = []
        for path in self.cassette_files():
            try:
                responder = cassette_responder(path, strict=False)
            except Exception as exc:  # an unreadable cassette is the recording's problem, not a check crash
                self.facts.setdefault("cassette_errors", []).append(f"{path}: {type(exc).__name__}: {exc}")
                continue
            max_turns = min(getattr(getattr(self.env(), "config", None), "max_agent_turns", 6) or 6, 6)
            probes.append(
                (f"cassette:{path.name}", lambda r=responder: r, max_turns, f"replay of {path.name}")
            )
        return probes

    def run_probe(
        self, item: Any, responder: Responder, max_turns: int, name: str, phase: str = "probes"
    ) -> tuple[Any, str]:
        """One rollout of ``item`` through the real agent loop, the fake model answering with ``responder``.

        Returns ``(AgentResult, task_id)``; the task's sandbox is left for the reward to inspect (clean it up).
        """
        from hermes_envs.agent import HermesAgentLoop

        env = self.env()
        schemas, names = self.tools()
        messages = self._initial_messages(env, item)
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
        with self.responding(responder):
            result = self.run_env(lambda _env: loop.run(messages), phase=phase)
        return result, task_id

    @staticmethod
    def _initial_messages(env: Any, item: Any) -> list[dict[str, Any]]:
        build = getattr(env, "initial_messages", None)
        if build is not None:
            return build(item)
        messages = []
        system = getattr(getattr(env, "config", None), "system_prompt", None)
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": env.format_prompt(item)})
        return messages
