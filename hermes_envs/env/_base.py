"""``HermesAgentBaseEnv``: atroposlib's ``BaseEnv`` that runs a multi-turn tool-calling agent per rollout.

Authors implement ``setup``, ``get_next_item``, ``format_prompt``, ``compute_reward`` and ``evaluate``; this base
resolves tools once per group, runs the agent loop, hands the reward a :class:`ToolContext` on the rollout's own
sandbox, always cleans that sandbox up, and builds the tokens/masks atroposlib trains on. Unlike upstream, a reward
that raises is logged with its traceback and counted (``train/reward_errors``), not silently turned into 0.0.
Each env's tools run with its own :class:`~hermes_envs.tools.EnvRuntime` (``self.runtime``), bound where this class
drives the env (atroposlib's drivers, its own rollout methods, the agent loop on ``self.server``); an author's
methods are never rewritten. About 500 lines: every hook atroposlib calls on the env (rollout, group, process, eval
log, wandb) is a method of this one class; the helpers it can hand off live in the sibling modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import random
import time
import traceback
import uuid
import weakref
from abc import abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any

from atroposlib.envs.base import BaseEnv, ScoredDataGroup, ScoredDataItem
from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs._chat import assistant_turns
from hermes_envs._json_types import JSONObject, Message
from hermes_envs.agent import AgentResult, HermesAgentLoop
from hermes_envs.env._config import HermesAgentEnvConfig
from hermes_envs.env._display import format_trajectory
from hermes_envs.env._prompt import prompt_content
from hermes_envs.env._server_errors import (
    ProcessStop,
    close_stopped_process,
    dropped_group_message,
    eval_failure_message,
    failed_on_server,
    unreachable_message,
)
from hermes_envs.env._trajectory import managed_tokens, tokenize_transcript
from hermes_envs.env._types import Item
from hermes_envs.env.distributions import sample_toolsets
from hermes_envs.errors import ConfigError, HermesEnvsError
from hermes_envs.tools._runtime import EnvRuntime

__all__ = ["HermesAgentBaseEnv", "RewardTypeError", "current_env"]

logger = logging.getLogger(__name__)


class RewardTypeError(HermesEnvsError, TypeError):
    """``compute_reward`` returned something that is not a number."""


_CURRENT_ENV: weakref.ReferenceType[HermesAgentBaseEnv] | None = None


def _set_current_env(env: HermesAgentBaseEnv) -> None:
    global _CURRENT_ENV
    _CURRENT_ENV = weakref.ref(env)


def current_env() -> HermesAgentBaseEnv | None:
    """The most recently constructed environment of this process (None when there is none, or it is gone).

    Helpers that upstream builds without a handle on the env (e.g. ``CouncilEvaluator(model=...)``) use it to
    reach the env's own model server.
    """
    env = _CURRENT_ENV() if _CURRENT_ENV is not None else None
    return env


# The server errors of the group being collected (rollouts that ended in an API error append theirs).
_GROUP_SERVER_ERRORS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "hermes_group_server_errors", default=None
)

# The tools resolved for the group being collected, so every rollout of a group is offered the same tools.
_GROUP_TOOLS: contextvars.ContextVar[tuple[list[JSONObject], set[str]] | None] = contextvars.ContextVar(
    "hermes_group_tools", default=None
)


class HermesAgentBaseEnv(BaseEnv):  # type: ignore[misc]  # atroposlib ships no py.typed: BaseEnv is Any
    """Base class for tool-calling agent environments (see the module docstring for what it does for you)."""

    name: str | None = None
    env_config_cls = HermesAgentEnvConfig

    def __init__(
        self,
        config: HermesAgentEnvConfig,
        server_configs: Any,
        slurm: bool = False,
        testing: bool = False,
    ) -> None:
        super().__init__(config, server_configs, slurm=slurm, testing=testing)
        from hermes_envs.tools import configure_sandboxes
        from hermes_envs.tools.sandbox import install_sigterm_cleanup, set_pool_size

        configure_sandboxes(
            backend=getattr(config, "terminal_backend", "local"),
            timeout=getattr(config, "terminal_timeout", 120),
            lifetime=getattr(config, "terminal_lifetime", 3600),
            env_passthrough=tuple(getattr(config, "terminal_env_passthrough", None) or ()),
            host_paths=bool(getattr(config, "terminal_host_paths", True)),
        )
        from hermes_envs.tools.sandbox import sandbox_config
        from hermes_envs.tools.toolsets.model import endpoint_of_server

        set_pool_size(getattr(config, "tool_pool_size", 128))  # the pool that runs tools off the loop
        install_sigterm_cleanup()  # a `serve` worker stopped with SIGTERM leaves no sandbox files behind
        #: This env's own tool settings (sandbox settings; the model server that vision, delegation, moa ... tools
        #: ask), bound where the framework drives the env (run drivers, rollouts, rewards, the agent loop's tool
        #: calls, the kit), so an env built later in the same process with other settings does not change this one's.
        self.runtime = EnvRuntime(sandbox=sandbox_config(), model_endpoint=endpoint_of_server(self.server))
        # An agent loop the author builds on self.server (e.g. in evaluate) recovers text tool calls with the
        # configured parser, not a default one (HermesAgentLoop reads this when given no tool_call_parser), and runs
        # its tools with this env's runtime.
        try:
            self.server.hermes_tool_call_parser = getattr(config, "tool_call_parser", None)
            self.server.hermes_runtime = self.runtime
        except Exception:  # a server object that refuses attributes: the loop then falls back to the defaults
            pass
        self._rng = random.Random()
        self.tool_error_buffer: list[int] = []  # tool errors per rollout since the last wandb_log
        #: Upstream's names, which envs written for upstream read and write: the tools of the group being collected
        #: (set by collect_trajectories), and one ``{turn, tool, args, error, result}`` per tool error since the
        #: last wandb_log (an env's own collect_trajectory may append its own).
        self._current_group_tools: tuple[list[JSONObject], set[str]] | None = None
        self._tool_error_buffer: list[JSONObject] = []
        self.reward_error_count = 0
        self.reward_errors: list[str] = []
        self.server_error_groups = 0  # groups dropped because a rollout's model call failed
        self.eval_server_errors = 0  # rollouts of the last evaluate() call that failed on the model server
        _set_current_env(self)

    # ----------------------------------------------------------------- what subclasses write
    @abstractmethod
    def format_prompt(self, item: Item) -> str:
        """Turn a dataset item into the user message (synchronous)."""

    @abstractmethod
    async def compute_reward(self, item: Item, result: AgentResult, ctx: Any) -> float:
        """Score one rollout; ``result`` is an :class:`AgentResult` object, ``ctx`` a ToolContext on its sandbox."""

    # ----------------------------------------------------------------- runtime
    def _runtime_bound(self) -> contextlib.AbstractContextManager[object]:
        """Bind this env's runtime for the block (nothing to do when it is bound already)."""
        from hermes_envs.tools._runtime import using_runtime

        return using_runtime(getattr(self, "runtime", None))

    @contextlib.contextmanager
    def watching_evaluate(self) -> Iterator[list[AgentResult]]:
        """Around an ``evaluate()`` call: this env's runtime bound, and the eval rollouts that failed on the model
        server counted (``eval_server_errors``; ``evaluate_log`` adds ``eval/api_errors``) and reported once.

        atroposlib's drivers (``evaluate`` subcommand, evals during ``serve``) and the conformance kit enter it; a
        script that calls ``env.evaluate()`` itself enters it too to get the report.
        """
        from hermes_envs.agent._observe import watch_results

        with self._runtime_bound(), watch_results() as seen:
            try:
                yield seen
            finally:
                self._report_eval_server_errors(seen)

    async def env_manager(self) -> None:
        """atroposlib's ``serve`` loop, under this env's runtime (the rollouts and evals it starts inherit it)."""
        with self._runtime_bound():
            await super().env_manager()

    async def env_step_checks(self) -> None:
        """atroposlib's step checks; an eval they start is watched (:meth:`watching_evaluate`) until it ends."""
        from hermes_envs.agent._observe import watch_results

        before = getattr(self, "eval_runner", None)
        # the eval task atroposlib starts copies this context: its loops' results join ``seen``
        with self._runtime_bound(), watch_results() as seen:
            await super().env_step_checks()
        runner = getattr(self, "eval_runner", None)
        if runner is not None and runner is not before:
            runner.add_done_callback(lambda _task: self._report_eval_server_errors(seen))

    async def _run_evaluate(self) -> None:
        """atroposlib's ``evaluate`` subcommand: ``setup`` then ``evaluate``, watched (:meth:`watching_evaluate`)."""
        with self._runtime_bound():
            await self.setup()
            with self.watching_evaluate():
                await self.evaluate()

    # ----------------------------------------------------------------- tools
    def _resolve_tools_for_group(self) -> tuple[list[JSONObject], set[str]]:
        """Tool schemas and valid names for one group, honouring enabled/disabled toolsets and ``distribution``."""
        from hermes_envs.tools import registry

        enabled = self.config.enabled_toolsets
        if getattr(self.config, "distribution", None):
            sampled = sample_toolsets(self.config.distribution, self._rng)
            enabled = [t for t in sampled if enabled is None or t in enabled]
        schemas, names = registry.resolve(enabled, self.config.disabled_toolsets)
        return schemas, names

    def _tools(self) -> tuple[list[JSONObject], set[str]]:
        """This group's tools: those our collect_trajectories resolved (per group, even for concurrent groups),
        else ``_current_group_tools`` (an env's own collect_trajectories sets it, as upstream's does), else new."""
        return _GROUP_TOOLS.get() or self._current_group_tools or self._resolve_tools_for_group()

    def _is_managed(self) -> bool:
        """Phase 2 (exact tokens through ManagedServer) when the servers are vLLM / SGLang token endpoints."""
        servers = getattr(self.server, "servers", [])
        return bool(servers) and type(servers[0]).__name__ in ("VLLMServer", "SGLangServer")

    def _use_managed_server(self) -> bool:
        """Upstream's name for :meth:`_is_managed`: True when rollouts should go through a ManagedServer."""
        return self._is_managed()

    # ----------------------------------------------------------------- rollouts
    def initial_messages(self, item: Item) -> list[Message]:
        """The system prompt (when configured) and the user prompt of ``item``."""
        messages: list[Message] = []
        if self.config.system_prompt:
            messages.append({"role": "system", "content": self.config.system_prompt})
        messages.append({"role": "user", "content": prompt_content(self, item)})
        return messages

    async def run_agent(
        self,
        messages: list[Message],
        *,
        task_id: str | None = None,
        temperature: float | None = None,
        tools: tuple[list[JSONObject], set[str]] | None = None,
        max_turns: int | None = None,
    ) -> AgentResult:
        """Run the agent loop on ``messages`` with this env's tools and settings (also for ``evaluate``)."""
        with self._runtime_bound():
            schemas, names = tools or self._tools()
            kwargs: JSONObject = {
                "max_turns": max_turns or self.config.max_agent_turns,
                "task_id": task_id or str(uuid.uuid4()),
                "temperature": self.config.agent_temperature if temperature is None else temperature,
                "extra_body": self.config.extra_body,
                "tool_call_parser": self.config.tool_call_parser,
                "budget_config": self.config.build_budget_config(),
                "tool_timeout": self.config.tool_call_timeout,
            }
            if self._is_managed():
                from hermes_envs.env._managed import HermesManagedServer, pick_server

                managed = HermesManagedServer(
                    pick_server(self.server),
                    tokenizer=self.tokenizer,
                    tool_parser=self.config.tool_call_parser,
                )
                try:
                    # The managed server already parses tool calls; the loop's text fallback must not parse twice.
                    loop = HermesAgentLoop(managed, schemas, names, **{**kwargs, "tool_call_parser": None})
                    result = await loop.run(messages)
                    result.managed_state = managed.get_state()
                    return result
                finally:
                    managed.reset()
            return await HermesAgentLoop(self.server, schemas, names, **kwargs).run(messages)

    async def score_rollout(self, item: Item, result: AgentResult, task_id: str) -> float:
        """Call ``compute_reward`` with a ToolContext on the rollout's sandbox; always clean the sandbox up."""
        from hermes_envs.tools import ToolContext, cleanup_sandbox

        with self._runtime_bound():
            try:
                has_assistant = assistant_turns(result.messages) > 0
                if result.turns_used == 0 or not has_assistant:
                    return 0.0  # nothing happened (e.g. API error on the first turn): nothing to reward
                ctx = ToolContext(task_id, runtime=self.runtime)
                try:
                    score = await self.compute_reward(item, result, ctx)
                except Exception as exc:
                    self.reward_error_count += 1
                    message = f"{type(exc).__name__}: {exc}"
                    self.reward_errors.append(message)
                    logger.error(
                        "compute_reward raised for task %s; scoring 0.0 (counted in train/reward_errors).\n%s",
                        task_id,
                        traceback.format_exc(),
                    )
                    if self.config.raise_on_reward_error:
                        raise
                    return 0.0
                finally:
                    ctx.cleanup()
                return self._check_score(score)
            finally:
                cleanup_sandbox(task_id)

    def _check_score(self, score: float) -> float:
        try:
            value = float(score)
        except (TypeError, ValueError):
            raise RewardTypeError(
                f"compute_reward should return a float; got {score!r} ({type(score).__name__}). "
                "Fix: return a number in [0, 1]."
            ) from None
        if not math.isfinite(value):
            logger.error("compute_reward returned %r; a non-finite score poisons the training batch", score)
        return value

    async def collect_trajectory(self, item: Item) -> tuple[ScoredDataItem | None, list[Item]]:
        """One rollout of ``item``: agent loop, reward, tokens and masks.

        A rollout that ended because the model server failed (``termination == "api_error"``) returns ``None``:
        it is not scored, and :meth:`collect_trajectories` drops its group.
        """
        with self._runtime_bound():
            task_id = str(uuid.uuid4())
            schemas, names = self._tools()
            messages = self.initial_messages(item)
            result = await self.run_agent(messages, task_id=task_id, tools=(schemas, names))
            self.tool_error_buffer.append(len(result.tool_errors))
            self._tool_error_buffer.extend(
                {
                    "turn": e.turn,
                    "tool": e.tool_name,
                    "args": e.arguments[:150],
                    "error": e.error[:300],
                    "result": e.tool_result[:300],
                }
                for e in result.tool_errors
            )
            if failed_on_server(result):
                from hermes_envs.tools import cleanup_sandbox

                cleanup_sandbox(task_id)
                failures = _GROUP_SERVER_ERRORS.get()
                if failures is not None:
                    failures.append(result.error or "model call failed")
                return None, []
            score = await self.score_rollout(item, result, task_id)
            exact = managed_tokens(result.managed_state)
            if exact is not None:
                tokens, masks, _logprobs = exact
            else:
                tokens, masks = tokenize_transcript(self.tokenizer, result.messages, schemas or None)
            scored = ScoredDataItem(
                tokens=tokens,
                masks=masks,
                scores=score,
                messages=result.messages,
                advantages=None,
                ref_logprobs=None,
                group_overrides=None,
                overrides=None,
                images=None,
            )
            return scored, []

    async def collect_trajectories(self, item: Item) -> tuple[ScoredDataGroup | None, list[Item]]:
        """``group_size`` concurrent rollouts of ``item``, all offered the same tools (resolved once per group).

        A group in which any rollout failed on the model server is dropped (``None``) with one warning: atroposlib
        only accepts full groups, and a failed rollout scored 0.0 would read as a bad answer (docs/framework.md).
        """
        with self._runtime_bound():
            await self._check_process_server()
            tools = self._resolve_tools_for_group()
            self._current_group_tools = tools
            token = _GROUP_TOOLS.set(tools)
            server_errors: list[str] = []
            errors_token = _GROUP_SERVER_ERRORS.set(server_errors)
            try:
                results = await asyncio.gather(
                    *(self.collect_trajectory(item) for _ in range(self.config.group_size))
                )
            finally:
                _GROUP_SERVER_ERRORS.reset(errors_token)
                _GROUP_TOOLS.reset(token)
            backlog: list[Item] = [extra for _scored, extras in results for extra in extras]
            if server_errors:
                self._drop_group_on_server_errors(server_errors)
                return None, backlog
            group = ScoredDataGroup(
                tokens=[], masks=[], scores=[], messages=[], advantages=None, ref_logprobs=None
            )
            for scored, _extra in results:
                if scored is None:
                    continue
                group["tokens"].append(scored["tokens"])
                group["masks"].append(scored["masks"])
                group["scores"].append(scored["scores"])
                group["messages"].append(scored["messages"])
            if not group["tokens"]:
                return None, backlog
            return group, backlog

    def _drop_group_on_server_errors(self, errors: list[str]) -> None:
        """Count and report a group dropped for server errors; a ``process`` run stops when all rollouts failed."""
        self.server_error_groups += 1
        size = self.config.group_size
        message = dropped_group_message(self.server, errors, size)
        if getattr(self, "process_mode", False) and len(errors) >= size:
            # atroposlib's process loop retries a dropped group forever (saying "retrying" first); against a server
            # that failed every (already retried) request that would spin without end.
            raise ProcessStop(message)
        logger.warning("%s", message)

    async def process_manager(self) -> None:
        """atroposlib's ``process`` run; exits with the reason (no traceback) when the model server failed.

        The env's ``setup`` runs first (it may start what it needs); the first group then checks that the model
        server accepts connections at all, so a dead one ends the run at once instead of after retries.
        """
        self._process_probed = False
        try:
            with self._runtime_bound():
                await super().process_manager()
        except ProcessStop as stop:
            close_stopped_process(self)
            raise SystemExit(
                f"process stopped after {getattr(self, 'curr_step', 0)} written group(s): {stop}"
            ) from None

    async def _check_process_server(self) -> None:
        """Once per ``process`` run, before its first rollout: stop at once when no model server can be reached."""
        if not getattr(self, "process_mode", False) or getattr(self, "_process_probed", True):
            return
        self._process_probed = True
        message = await unreachable_message(self.server)
        if message:
            raise ProcessStop(message)

    # ----------------------------------------------------------------- evaluate
    def _report_eval_server_errors(self, seen: list[AgentResult]) -> None:
        """After an ``evaluate`` call: one warning when some of its rollouts failed on the model server."""
        failed = [r for r in seen if failed_on_server(r)]
        self.eval_server_errors = len(failed)
        if failed:
            first = failed[0].error or "model call failed"
            logger.warning("%s", eval_failure_message(self.server, len(failed), len(seen), first))

    async def evaluate_log(self, metrics: JSONObject, *args: Any, **kwargs: Any) -> None:
        """atroposlib's eval log, plus ``eval/api_errors``: eval rollouts (so far) that failed on the model server."""
        from hermes_envs.agent._observe import watched_results

        seen = watched_results()
        failed = sum(1 for r in seen or [] if failed_on_server(r))
        if failed:
            metrics = {**metrics, "eval/api_errors": failed, "eval/rollouts": len(seen or [])}
        await super().evaluate_log(metrics, *args, **kwargs)

    async def evaluate_items(self, items: Iterable[Item], metric: str = "eval/accuracy") -> float:
        """The usual ``evaluate()`` body: each item through the agent loop with this env's tools at temperature 0,
        scored by ``compute_reward`` on the rollout's own sandbox (cleaned up after), the mean logged as ``metric``
        with ``evaluate_log``; returns the mean. Envs that need more (several metrics, samples) keep their own loop."""
        items = list(items)
        if not items:
            raise ConfigError(
                f"{type(self).__name__}.evaluate_items() should get the eval items; got none. "
                "Fix: load the eval split in setup() and pass it (e.g. self.evaluate_items(self.test))."
            )
        from hermes_envs.agent._observe import watched_results

        # called from an evaluate() nobody watches (a script's own env.evaluate()): it reports the server errors itself
        watch = self.watching_evaluate() if watched_results() is None else self._runtime_bound()
        with watch:
            start = time.time()
            scores = []
            for item in items:
                task_id = str(uuid.uuid4())
                result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
                scores.append(await self.score_rollout(item, result, task_id))
            mean = sum(scores) / len(scores)
            await self.evaluate_log(metrics={metric: mean}, start_time=start, end_time=time.time())
            return mean

    # ----------------------------------------------------------------- metrics
    @staticmethod
    def _format_trajectory_for_display(messages: list[Message]) -> str:
        """A rollout's messages as readable text (upstream's name; see :mod:`hermes_envs.env._display`)."""
        return format_trajectory(messages)

    async def add_rollouts_for_wandb(self, scored_data: Any, item: Item = None) -> None:
        """Keep rollouts for wandb's table as formatted transcripts (tool calls visible), not decoded tokens."""
        if not isinstance(scored_data, dict):  # a list of groups: log each
            for group in scored_data or []:
                if group is not None:
                    await self.add_rollouts_for_wandb(group, item)
            return
        keep = self.config.num_rollouts_per_group_for_logging
        scores = scored_data.get("scores") or []
        keep = len(scores) if keep == -1 else min(keep, len(scores))
        messages = scored_data.get("messages") or []
        tokens = scored_data.get("tokens") or []
        rows = []
        for i in range(keep):
            if i < len(messages) and messages[i]:
                text = format_trajectory(messages[i])
            elif i < len(tokens):
                text = self.tokenizer.decode(tokens[i])
            else:
                text = "(no data)"
            rows.append((text, scores[i]))
        self.rollouts_for_wandb.append(rows)
        if len(self.rollouts_for_wandb) > self.config.num_rollouts_to_keep:
            self.rollouts_for_wandb.pop(0)

    async def wandb_log(self, wandb_metrics: JSONObject | None = None) -> None:
        """Add tool-error and reward-error counts, then log through atroposlib."""
        wandb_metrics = dict(wandb_metrics or {})
        if self.tool_error_buffer or self._tool_error_buffer:
            # every error is an entry of _tool_error_buffer (ours, and any an env's own collect_trajectory added)
            count = max(sum(self.tool_error_buffer), len(self._tool_error_buffer))
            wandb_metrics["train/tool_errors_count"] = count
            if self.tool_error_buffer:
                wandb_metrics["train/tool_errors_per_rollout"] = count / len(self.tool_error_buffer)
            self.tool_error_buffer = []
            self._tool_error_buffer = []
        wandb_metrics["train/reward_errors"] = self.reward_error_count
        wandb_metrics["train/server_error_groups_dropped"] = self.server_error_groups
        await super().wandb_log(wandb_metrics)

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        """Default config: override in your env; return a LIST of APIServerConfig so --openai.* flags apply."""
        return cls.env_config_cls(), [APIServerConfig()]
