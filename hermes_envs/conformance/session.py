"""One environment class under test: import it offline, build it against the fake server, run checks on it.

An :class:`EnvSession` owns a private event loop, a :class:`FakeOpenAIServer` whose answers are switched per probe,
and a cache of what was observed (training items, eval prompts, probe transcripts), so each observation is made
once however many checks read it. Checks learn about the env by its behaviour: training items are what
``get_next_item`` returns, eval items what ``evaluate()`` sends to the model, tools what the requests offer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hermes_envs.conformance.findings import Blocked, Finding, NotApplicable, Outcome, Skip, Status
from hermes_envs.conformance.probes import PROBES, Responder
from hermes_envs.conformance.registry import CHECKS, all_checks
from hermes_envs.conformance.watchdog import LoopWatchdog
from hermes_envs.errors import EnvLoadError

T = TypeVar("T")

#: How many get_next_item calls we make at most while looking for the end of the training cycle.
MAX_ITEMS_SCANNED = 2000
#: Calls made after the same item came back twice in a row, before calling get_next_item stuck (HC203).
STUCK_CALLS = 8
#: The metric the wandb_log spy passes in, to see whether an override hands it on to the base class.
PROBE_METRIC = "hermes_conformance/probe"
#: What the fake model answers in evaluate() after calling the tools: a judge's prompt quotes it.
EVAL_ANSWER = "I don't know."


@dataclass
class Settings:
    """Knobs of a conformance run (from ``[tool.hermes-conformance]``, markers or the CLI)."""

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    group_size: int = 2
    probe_items: int = 2
    #: HC406: the highest mean score a negative control (do nothing, refuse, echo, spam tools) may get.
    control_ceiling: float = 0.2
    #: HC205: setup() taking longer than this is reported (a warning).
    setup_seconds: float = 30.0
    #: setup() is abandoned after this long (HC201 then reports the timeout).
    setup_timeout: float = 300.0
    #: HC408: the event loop blocked longer than this by the env's code is reported.
    blocking_seconds: float = 0.5
    #: HC601: how many different items run concurrently against one at a time.
    concurrency_items: int = 3
    #: Run the slow checks too (HC503: a one-step ``process`` run in a subprocess, a few seconds).
    slow: bool = False
    #: HC412: how many transcripts the hypothesis search of the reward tries per gold and direction (the bound that
    #: makes one env give the same findings on a fast laptop and a loaded CI runner), its seed (the report names
    #: it, so a finding can be reproduced), and a safety cap in seconds for a very slow reward only.
    fuzz_seconds: float = 30.0
    fuzz_examples: int = 40
    fuzz_seed: int = 0
    #: Ids named on the command line (--hermes-select / --select): they run even if the env ignores them.
    forced: list[str] = field(default_factory=list)
    #: Recorded cassettes whose real-model replies also drive the reward probes. Default: every cassette in
    #: ``<env folder>/cassettes/<env file stem>/`` (where ``hermes-envs record`` writes).
    cassettes: list[str] | None = None


class RoutingPolicy:
    """The fake server's policy: delegates to whichever responder the session has switched on."""

    def __init__(self) -> None:
        self.current: Responder | None = None

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.current is None:
            return {"content": "I don't know."}
        return self.current(body)


@contextlib.contextmanager
def _captured_log() -> Iterator[list[str]]:
    """Yields a list that collects the WARNING-and-above log messages emitted in the block (any logger)."""
    import logging

    records: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                records.append(f"{record.levelname} {record.name}: {record.getMessage()}"[:300])
            except Exception:  # a record whose message cannot be formatted: keep what we can
                records.append(f"{record.levelname} {record.name}: {record.msg!r}"[:300])

    handler = _Keep(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield records
    finally:
        root.removeHandler(handler)


def _item_key(item: Any) -> str:
    try:
        return json.dumps(item, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(item)


class EnvSession:
    """Everything the checks need to know about one env class, computed lazily and cached."""

    def __init__(
        self, path: str | Path, class_name: str | None = None, settings: Settings | None = None
    ) -> None:
        self.path = Path(path).resolve()
        self.class_name = class_name
        self.settings = settings or Settings()
        self.outcomes: dict[str, Outcome] = {}
        self.facts: dict[str, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: Any = None
        self._policy = RoutingPolicy()
        self._tmp: Path | None = None
        self._env: Any = None
        self.module: Any = None
        self.env_cls: type | None = None
        self.load_error: str | None = None
        #: Connections the network guard refused: (phase, attempt).
        self.blocked: list[tuple[str, Any]] = []
        #: Seconds spent per phase (import, construct, setup, items, evaluate, probes, rewards, ...).
        self.timings: dict[str, float] = {}
        self.phase = "import"
        self._watchdog: Any = None
        #: (what happened, the check that reports it, the exception) when the env could not be constructed.
        self.construct_error: tuple[str, str, BaseException] | None = None
        #: (what happened, the exception) when the env's tools could not be resolved (HC802 reports it).
        self.tools_error: tuple[str, BaseException] | None = None

    @property
    def label(self) -> str:
        """``file.py::Class`` as shown in findings."""
        return f"{self.path.name}::{self.class_name}" if self.class_name else self.path.name

    # ------------------------------------------------------------------------------------------ lifecycle
    @contextlib.contextmanager
    def offline(self) -> Iterator[None]:
        """Hub/datasets offline, wandb off, and every connection beyond loopback refused with a message (child
        processes, forks and native code confined to a loopback-only network namespace where one can be made)."""
        from hermes_envs.testing.offline import block_network, offline_mode

        guard = block_network(isolate=True)
        try:
            with offline_mode(), guard:
                yield
        finally:
            self.blocked.extend((self.phase, attempt) for attempt in guard.blocked)

    @contextlib.contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Account the block's wall time to ``phase`` (and name the phase in network / stall records)."""
        previous, self.phase = self.phase, phase
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - start
            self.phase = previous

    @property
    def watchdog(self) -> Any:
        """The event-loop watchdog (HC408): stalls longer than ``blocking_seconds`` caused by the env's code."""
        if self._watchdog is None:
            self._watchdog = LoopWatchdog(self.settings.blocking_seconds)
        return self._watchdog

    def run_async(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run a coroutine on the session's private event loop, offline."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        with self.offline():
            coro = make()
            if timeout is not None:
                coro = asyncio.wait_for(coro, timeout)
            return self._loop.run_until_complete(coro)

    def close(self) -> None:
        """Stop the fake server, close the loop, remove temp files; safe to call twice."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._loop is not None:
            # Close the env's HTTP clients on the loop they were made on, and let pending tasks finish, before the
            # loop goes: otherwise their finalizers later report "Event loop is closed".
            with contextlib.suppress(Exception):
                self._loop.run_until_complete(self._close_clients())
            with contextlib.suppress(Exception):
                pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
            self._loop = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    @contextlib.contextmanager
    def sandbox_leaks(self) -> Iterator[list[str]]:
        """Yields a list that, after the block, holds the task ids of sandboxes the block left behind (a ToolContext
        never cleaned up; HC603 reports them). They are removed then, so one leak is not reported twice."""
        from hermes_envs.tools import active_sandboxes, cleanup_sandbox

        before = set(active_sandboxes())
        leaked: list[str] = []
        try:
            yield leaked
        finally:
            leaked.extend(sorted(set(active_sandboxes()) - before))
            for task_id in leaked:
                cleanup_sandbox(task_id)

    async def _close_clients(self) -> None:
        """Close the openai clients of the env's servers (atroposlib never closes them)."""
        for server in getattr(getattr(self._env, "server", None), "servers", []) or []:
            client = getattr(server, "openai", None)
            if client is not None and hasattr(client, "close"):
                with contextlib.suppress(Exception):
                    await client.close()

    def __enter__(self) -> EnvSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def scratch_cwd(self) -> Iterator[Path]:
        """Run the block in a fresh temporary working directory, so files the env writes relative to the cwd (an
        ``eval_results.jsonl`` of its own) land there, never in the folder the user runs the check from.

        Every entry of the user's cwd is linked into it, so an evaluate() that reads ``data/eval.jsonl`` relative
        to the cwd still finds it (writes into such a linked folder do reach the real one)."""
        folder = Path(tempfile.mkdtemp(prefix="cwd-", dir=self.tmp))
        previous = os.getcwd()
        try:
            for entry in os.scandir(previous):
                try:
                    (folder / entry.name).symlink_to(entry.path, target_is_directory=entry.is_dir())
                except (
                    OSError
                ):  # a name we cannot link (permissions, odd filesystems): reads of it fail as before
                    pass
        except OSError:
            pass
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(previous)

    @property
    def tmp(self) -> Path:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="hermes-conformance-"))
        return self._tmp

    @property
    def server(self) -> Any:
        """The fake model server, started on first use (strict: no default replies)."""
        if self._server is None:
            from hermes_envs.testing.fake_server import FakeOpenAIServer

            self._server = FakeOpenAIServer(policy=self._policy, strict=True)
            self._server.start()
        return self._server

    @contextlib.contextmanager
    def responding(self, responder: Responder) -> Iterator[list[Any]]:
        """Within the block the fake model answers with ``responder``; yields the requests made in the block."""
        previous = self._policy.current
        self._policy.current = responder
        start = len(self.server.calls)
        made: list[Any] = []
        try:
            yield made
        finally:
            # Model requests on both routes: /v1/chat/completions and the plain-text /v1/completions.
            made.extend(c for c in self.server.calls[start:] if c.route.rstrip("/").endswith("completions"))
            self._policy.current = previous

    # ------------------------------------------------------------------------------------------ the env
    def load(self) -> type:
        """Import the module and pick the env class (raising EnvLoadError with the author-facing message)."""
        if self.env_cls is not None:
            return self.env_cls
        if self.load_error is not None:
            raise EnvLoadError(self.load_error)
        from hermes_envs.env import find_env_classes, import_env_module

        try:
            with self.timed("import"), self.offline():
                self.module = import_env_module(self.path)
            classes = find_env_classes(self.module)
            if self.class_name:
                match = [c for c in classes if c.__name__ == self.class_name]
                if not match:
                    names = [c.__name__ for c in classes]
                    raise EnvLoadError(
                        f"{self.path.name} should define env class {self.class_name!r}; found {names}. "
                        "Fix: check the ::ClassName part of the path."
                    )
                classes = match
            if not classes:
                raise EnvLoadError(
                    f"{self.path.name} should define a class deriving from HermesAgentBaseEnv (or atroposlib's "
                    "BaseEnv); found none. Fix: define `class MyEnv(HermesAgentBaseEnv): ...` in this file."
                )
        except EnvLoadError as exc:
            self.load_error = str(exc)
            raise
        self.env_cls = classes[0]
        self.class_name = self.env_cls.__name__
        return self.env_cls

    def config_init(self) -> tuple[Any, Any]:
        """``env_cls.config_init()``, cached."""
        if "config_init" not in self.facts:
            self.facts["config_init"] = self.load().config_init()
        return self.facts["config_init"]

    def env(self) -> Any:
        """The env instance, configured for the harness: offline tokenizer, no wandb, our fake server.

        When construction fails (``config_init`` or ``__init__`` raises), that one cause is kept: HC104 / HC109
        report it and every check that needs the instance is skipped naming it (:class:`Blocked`)."""
        if self._env is not None:
            return self._env
        if self.construct_error is not None:
            raise Blocked("the env instance", self.construct_error[0], self.construct_error[1])
        try:
            return self._construct()
        except Exception as exc:
            from hermes_envs.conformance.sites import author_site

            site = author_site(exc, self.path)
            text = f"{type(exc).__name__}: {exc}" + (f" (at {site})" if site else "")
            reported_by = "HC109" if "config_init" in self.facts else "HC104"
            what = "config_init() raised" if reported_by == "HC104" else f"{self.class_name}.__init__ raised"
            self.construct_error = (f"{what} {text}", reported_by, exc)
            raise Blocked("the env instance", self.construct_error[0], reported_by) from None

    def _construct(self) -> Any:
        from atroposlib.envs.server_handling.server_manager import APIServerConfig

        from hermes_envs.testing.offline import offline_tokenizer_path
        from hermes_envs.testing.retries import disable_client_retries

        env_cls = self.load()
        with self.timed("config_init"):
            config, _servers = self.config_init()
        overrides: dict[str, Any] = {
            "tokenizer_name": offline_tokenizer_path(),
            "use_wandb": False,
            "data_path_to_save_groups": None,
            "data_dir_to_save_evals": str(self.tmp / "evals"),
            "group_size": self.settings.group_size,
            "ensure_scores_are_not_same": False,
        }
        fields = type(config).model_fields
        config = config.model_copy(update={k: v for k, v in overrides.items() if k in fields})
        if "max_agent_turns" in fields:
            config = config.model_copy(update={"max_agent_turns": min(config.max_agent_turns, 6)})
        server_configs = [
            APIServerConfig(
                base_url=self.server.base_url,
                api_key="hermes-conformance",
                model_name="fake",
                server_type="openai",
                health_check=False,
                timeout=60,
            )
        ]
        with self.timed("construct"), self.offline():
            self._env = env_cls(config, server_configs, slurm=False, testing=False)
        disable_client_retries(getattr(self._env, "server", None))
        return self._env

    def run_env(
        self, make: Callable[[Any], Awaitable[T]], timeout: float = 120.0, phase: str | None = None
    ) -> T:
        """Run ``make(env)`` on the loop with atroposlib's retries made fast, timed under ``phase``.

        The event loop is watched meanwhile (HC408), so a stall by the env's code is recorded with its phase.
        """
        from hermes_envs.testing.retries import fast_retries

        env = self.env()
        phase = phase or self.phase
        with self.timed(phase), fast_retries():
            return self.run_async(lambda: self.watchdog.watch(phase, make(env)), timeout=timeout)

    def is_hermes_env(self) -> bool:
        """True when the env follows the agent contract (format_prompt + compute_reward(item, result, ctx))."""
        cls = self.load()
        return callable(getattr(cls, "format_prompt", None)) and callable(
            getattr(cls, "compute_reward", None)
        )

    # ------------------------------------------------------------------------------------------ observations
    def setup_done(self) -> float:
        """Run ``setup()`` once; returns the seconds it took (raises what setup raised)."""
        if "setup_seconds" not in self.facts:
            start = time.perf_counter()
            try:
                # its warnings are kept: a check that finds no data can then name what setup() said (HC202)
                with _captured_log() as self.facts["setup_log"]:
                    self.run_env(lambda env: env.setup(), timeout=self.settings.setup_timeout, phase="setup")
            except (asyncio.TimeoutError, TimeoutError):
                raise TimeoutError(
                    f"setup() did not finish within {self.settings.setup_timeout:g} s (setup_timeout)"
                ) from None
            self.facts["setup_seconds"] = time.perf_counter() - start
        return self.facts["setup_seconds"]

    def training_items(self) -> dict[str, Any]:
        """Call ``get_next_item`` until the first item comes back (a full cycle) or a cap; cached.

        Returns ``{"items": [...], "cycled": bool, "error": str | None, "calls": int}``.
        """
        if "training" in self.facts:
            return self.facts["training"]
        self.setup_done()
        items: list[Any] = []
        keys: list[str] = []
        error = None
        cycled = False
        stuck = False
        stuck_checked: list[bool] = []

        async def scan(env: Any) -> None:
            nonlocal error, cycled, stuck
            for _ in range(MAX_ITEMS_SCANNED):
                try:
                    item = await env.get_next_item()
                except Exception as exc:
                    error = f"{type(exc).__name__}: {exc}"
                    return
                if item is None:
                    return
                key = _item_key(item)
                if keys and key == keys[0]:
                    if len(keys) == 1 and not stuck_checked:
                        # The same item twice in a row: a one-item dataset, or a get_next_item that never
                        # advances. A few more calls tell them apart (a random sampler moves on).
                        stuck_checked.append(True)
                        for _ in range(STUCK_CALLS):
                            try:
                                again = await env.get_next_item()
                            except Exception as exc:
                                error = f"{type(exc).__name__}: {exc}"
                                return
                            if _item_key(again) != key:
                                items.append(again)
                                keys.append(_item_key(again))
                                break
                        else:
                            stuck = True
                            cycled = True
                            return
                        continue
                    cycled = True
                    return
                items.append(item)
                keys.append(key)

        self.run_env(scan, phase="items")
        self.facts["training"] = {
            "items": items,
            "cycled": cycled,
            "stuck": stuck,
            "error": error,
            "calls": len(items) + cycled,
        }
        return self.facts["training"]

    def eval_observation(self) -> dict[str, Any]:
        """Run ``evaluate()`` against a fake model; record what it sent, logged and returned. Cached.

        The fake model calls every offered tool on its first turn, then answers "I don't know.", so an agent loop
        shows up as a follow-up request carrying the tool results. Returns ``{"prompts": [first user message of
        each conversation], "requests": [...], "error": str|None, "returned": Any, "logged": [metrics dicts
        given to evaluate_log], "raw_prompts": [text prompts sent to /v1/completions]}``.
        """
        if "eval" in self.facts:
            return self.facts["eval"]
        from hermes_envs.conformance.probes import call_each_tool_then

        self.setup_done()
        self.check_rollouts_possible()
        env = self.env()
        error = None
        returned = None
        logged: list[Any] = []
        original_log = getattr(env, "evaluate_log", None)
        if original_log is not None:

            async def spy_log(*args: Any, **kwargs: Any) -> Any:
                logged.append(kwargs.get("metrics", args[0] if args else None))
                return await original_log(*args, **kwargs)

            env.evaluate_log = spy_log
        from hermes_envs.conformance.sites import RaisedInAuthorCode

        escaped: BaseException | None = None
        with (
            self.sandbox_leaks() as leaked,
            self.responding(call_each_tool_then(EVAL_ANSWER)) as made,
            _captured_log() as log_records,
        ):
            try:
                with self.scratch_cwd():
                    returned = self.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate")
            except Exception as exc:
                escaped = exc
                error = f"{type(exc).__name__}: {exc}"
            finally:
                if original_log is not None:
                    del env.evaluate_log
        swallowed: list[str] = []
        if not made and escaped is None:
            # Nothing asked and nothing raised: run it once more under the exception tracer (too slow to leave
            # on for a working evaluate) to name what it caught.
            trace = RaisedInAuthorCode()
            with self.sandbox_leaks(), self.responding(call_each_tool_then(EVAL_ANSWER)), self.scratch_cwd():
                with contextlib.suppress(Exception), trace:
                    self.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate-traced")
            swallowed = [f"{type(e).__name__}: {e} (at {where})" for e, where in trace.swallowed(None)]
        prompts: list[str] = []
        raw_prompts: list[str] = []  # the text prompts of /v1/completions requests (no messages there)
        for call in made:
            users = [m.get("content") for m in call.body.get("messages") or [] if m.get("role") == "user"]
            if users and isinstance(users[0], str) and users[0] not in prompts:
                prompts.append(users[0])
            raw = call.body.get("prompt")
            for text in raw if isinstance(raw, list) else [raw]:
                if isinstance(text, str) and text not in raw_prompts:
                    raw_prompts.append(text)
        self.facts["eval"] = {
            "prompts": prompts,
            "raw_prompts": raw_prompts,
            "requests": made,
            "error": error,
            "returned": returned,
            "logged": logged,
            "leaked_sandboxes": leaked,
            # What evaluate() caught and what it logged: an empty evaluate() names its real cause (HC202).
            "swallowed": swallowed,
            "log_records": log_records,
        }
        return self.facts["eval"]

    def wandb_observation(self) -> dict[str, Any]:
        """Call ``env.wandb_log({PROBE_METRIC: 1.0})`` with a spy on atroposlib's ``BaseEnv.wandb_log``. Cached.

        Then calls it as atroposlib does, with ``{}`` and with no argument. Returns ``{"calls": [metrics dicts that
        reached BaseEnv.wandb_log], "error": str|None, "bare": {"wandb_log({})": None or what went wrong, ...}}``.
        Runs after
        ``evaluate()`` so metrics an env keeps for its next wandb_log are included.
        """
        if "wandb" in self.facts:
            return self.facts["wandb"]
        from atroposlib.envs.base import BaseEnv

        self.eval_observation()
        calls: list[dict[str, Any]] = []
        original = BaseEnv.__dict__["wandb_log"]

        async def spy(env_self: Any, wandb_metrics: dict | None = None, *args: Any, **kwargs: Any) -> Any:
            calls.append(dict(wandb_metrics or {}))
            return await original(env_self, wandb_metrics, *args, **kwargs)

        error = None
        #: How atroposlib itself calls it (base.py: `await self.wandb_log({})` and `await self.wandb_log()`) ->
        #: None when that call reached BaseEnv.wandb_log, else what happened.
        bare: dict[str, str | None] = {}
        BaseEnv.wandb_log = spy  # type: ignore[method-assign]
        try:
            self.run_env(lambda env: env.wandb_log({PROBE_METRIC: 1.0}), phase="wandb_log")
            for how, args in (("wandb_log({})", ({},)), ("wandb_log()", ())):
                before = len(calls)
                try:
                    self.run_env(lambda env, args=args: env.wandb_log(*args), phase="wandb_log")
                except Exception as exc:
                    bare[how] = f"raised {type(exc).__name__}: {exc}"
                    continue
                bare[how] = None if len(calls) > before else "never reached BaseEnv.wandb_log"
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        finally:
            BaseEnv.wandb_log = original  # type: ignore[method-assign]
        self.facts["wandb"] = {"calls": calls, "error": error, "bare": bare}
        return self.facts["wandb"]

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

    # ------------------------------------------------------------------------------------------ running checks
    def selected(self) -> list[str]:
        """Ids of the checks this run executes (select / ignore applied)."""
        ids = [c.id for c in all_checks()]
        if self.settings.select:
            ids = [i for i in ids if any(i.startswith(s) for s in self.settings.select)]
        return [i for i in ids if not any(i.startswith(s) for s in self.settings.ignore)]

    def run(self, check_id: str) -> Outcome:
        """Run one check (its prerequisites first), caching the outcome."""
        if check_id in self.outcomes:
            return self.outcomes[check_id]
        info = CHECKS[check_id]
        ignored = self.env_ignores().get(check_id)
        if ignored is not None and not any(check_id.startswith(f) for f in self.settings.forced):
            outcome = Outcome(
                check_id, Status.SKIPPED, note=f"ignored by the env's conformance_ignore: {ignored}"
            )
            self.outcomes[check_id] = outcome
            return outcome
        for req in info.requires:
            if self.is_ignored(req):
                # Ignoring a check silences its findings, not the checks built on it: they run (and say what
                # they see) as if it had passed, so an ignored HC401 never turns a broken reward green.
                continue
            prior = self.run(req)
            if prior.status not in (Status.PASSED, Status.WARNED, Status.NOT_APPLICABLE):
                note = f"needs {req}, which did not pass"
                if prior.status is Status.SKIPPED and prior.note.startswith("needs "):
                    note = prior.note  # the root cause, not the chain of checks it blocked
                outcome = Outcome(check_id, Status.SKIPPED, note=note)
                self.outcomes[check_id] = outcome
                return outcome
        start = time.perf_counter()
        try:
            findings: list[Finding] = info.fn(self)
            outcome = Outcome.from_findings(check_id, findings)
        except NotApplicable as exc:
            outcome = Outcome(check_id, Status.NOT_APPLICABLE, note=str(exc))
        except Skip as exc:
            outcome = Outcome(check_id, Status.SKIPPED, note=str(exc))
        except Exception as exc:  # a check that crashes is reported against the env, with what happened
            outcome = Outcome(
                check_id,
                Status.FAILED,
                [
                    Finding(
                        check_id,
                        f"running this check on {self.label} raised {type(exc).__name__}: {exc}",
                        "see the message; if it points into hermes-envs itself, please report it.",
                    )
                ],
            )
        outcome.seconds = time.perf_counter() - start
        self.outcomes[check_id] = outcome
        return outcome

    def is_ignored(self, check_id: str) -> bool:
        """True when the run ignores ``check_id`` (settings or the env's conformance_ignore, unless forced)."""
        if any(check_id.startswith(f) for f in self.settings.forced):
            return False
        return check_id in self.env_ignores() or any(check_id.startswith(i) for i in self.settings.ignore)

    def env_ignores(self) -> dict[str, str]:
        """``conformance_ignore`` of the env class or module: ``{"HC302": "why"}`` or ``["HC302"]``.

        The env-level "marker": it beats pyproject's select, and an id named on the command line (--hermes-select)
        beats it. See docs/checks.md, "Configuration".
        """
        try:
            self.load()
        except EnvLoadError:
            return {}
        raw = getattr(self.env_cls, "conformance_ignore", None) or getattr(
            self.module, "conformance_ignore", None
        )
        if not raw:
            return {}
        if isinstance(raw, dict):
            return {str(k): str(v) for k, v in raw.items()}
        return {str(k): "no reason given" for k in raw}

    def run_all(self) -> list[Outcome]:
        """Run every selected check; one failure never hides the others."""
        return [self.run(i) for i in self.selected()]
