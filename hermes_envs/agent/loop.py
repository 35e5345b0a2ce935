"""The multi-turn tool-calling loop: ask the model, run the tools it calls, repeat until it answers or runs out.

Behaviour follows the upstream contract (see ``AgentResult``); tools run in a thread pool so a slow tool never
blocks the event loop that all rollouts of a group share.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

from hermes_envs._json_types import JSONObject, JSONValue, Message
from hermes_envs._text import exception_text
from hermes_envs.agent._observe import report_result
from hermes_envs.agent.budget import DEFAULT_BUDGET, BudgetConfig, fit_result, fit_turn
from hermes_envs.agent.response import (
    _extract_reasoning,
    _tool_call_dict,
    describe_api_error,
)
from hermes_envs.agent.result import AgentResult, TerminationReason, ToolError
from hermes_envs.errors import HermesEnvsError

if TYPE_CHECKING:  # imported when first needed at run time: the loop stays cheap to import
    from hermes_envs.parsers import ToolCallParser

logger = logging.getLogger(__name__)
_T = TypeVar("_T")


class ChatServer(Protocol):
    """Anything with atroposlib's ``chat_completion(**kwargs)`` coroutine (ServerManager, ManagedServer, ...).

    ``kwargs`` is the request body; the response (openai's ``ChatCompletion`` or any object shaped like it) is read
    through attributes, defensively, so nothing more is required of it."""

    async def chat_completion(self, **kwargs: JSONValue) -> object: ...


class ToolDispatcher(Protocol):
    """A tool registry the loop can dispatch to: ``dispatch(name, arguments, task_id)`` returns the tool's output
    (a str, or a value written as JSON); an optional ``adispatch`` coroutine with the same arguments is preferred."""

    def dispatch(self, name: str, arguments: JSONObject, task_id: str, /) -> object: ...


class _Finish(Protocol):
    """``result(turns, natural, termination, error=None)`` of :meth:`HermesAgentLoop.run`: the rollout's result."""

    def __call__(
        self, turns: int, natural: bool, termination: TerminationReason, error: str | None = None
    ) -> AgentResult: ...


#: Seconds a tool call may run before the loop stops waiting for it (``tool_timeout``): generous, because the
#: terminal tool has its own per-command timeout; this bound only catches a custom tool that never returns.
DEFAULT_TOOL_TIMEOUT = 1800.0
#: Characters of an exception message kept in a tool error, so one huge message cannot flood the transcript.
_EXC_CHARS = 2000


class ToolAbort(HermesEnvsError):
    """A tool raised SystemExit or KeyboardInterrupt: the rollout stops, the event loop and the group go on."""


class _ServerParser(str):
    """The default of ``tool_call_parser``: the parser the env configured for ``server`` (see __init__)."""


SERVER_PARSER: Final = _ServerParser("hermes")


class HermesAgentLoop:
    """Run one rollout: ``await HermesAgentLoop(server, schemas, names).run(messages) -> AgentResult``.

    ``messages`` is extended in place. ``tool_call_parser`` names the parser used to recover tool calls from text
    when the server returned none as structured calls (default: the env's configured ``tool_call_parser`` when
    ``server`` is a HermesAgentBaseEnv's ``self.server``, else ``"hermes"``; None turns recovery off); ``registry``
    is the tool registry to dispatch to (the default registry of :mod:`hermes_envs.tools` when None).
    ``budget_config`` bounds what tool results put into the transcript (see :mod:`hermes_envs.agent.budget`;
    upstream's defaults when None); ``tool_timeout`` is how long one tool call may run (seconds) before it is
    reported to the model as timed out. Whatever a tool does (raise, exit, hang, flood), ``run`` returns an
    :class:`AgentResult` whose ``termination`` says why the rollout ended.
    """

    def __init__(
        self,
        server: ChatServer,
        tool_schemas: list[JSONObject] | None,
        valid_tool_names: Iterable[str] | None,
        max_turns: int = 30,
        task_id: str | None = None,
        temperature: float = 1.0,
        max_tokens: int | None = None,
        extra_body: JSONObject | None = None,
        *,
        tool_call_parser: str | None = SERVER_PARSER,
        registry: ToolDispatcher | None = None,
        budget_config: BudgetConfig | None = None,
        tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        self.server = server
        self.tool_schemas = list(tool_schemas or [])
        self.valid_tool_names = set(valid_tool_names or [])
        self.max_turns = max_turns
        self.task_id = task_id or str(uuid.uuid4())
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = extra_body
        if tool_call_parser is SERVER_PARSER:
            # An evaluate() written as the contract shows, HermesAgentLoop(server=self.server, ...), gives no parser:
            # use the env's configured one (HermesAgentBaseEnv tags its server with it), else hermes.
            tool_call_parser = getattr(server, "hermes_tool_call_parser", None) or "hermes"
        self.tool_call_parser = tool_call_parser
        self._registry = registry
        self.budget_config = _as_budget(budget_config)
        self.tool_timeout = tool_timeout
        # Resolved now, so a misspelled parser name fails here with the list of names, not in every rollout.
        self._parser: ToolCallParser | None = None
        if tool_call_parser:
            from hermes_envs.parsers import get_parser

            self._parser = get_parser(tool_call_parser)

    @property
    def registry(self) -> ToolDispatcher:
        """The tool registry calls are dispatched to (imported lazily so the loop stays cheap to import)."""
        if self._registry is None:
            from hermes_envs.tools import registry

            self._registry = registry
        return self._registry

    def _request_kwargs(self, messages: list[Message]) -> JSONObject:
        kwargs: JSONObject = {"messages": messages, "n": 1, "temperature": self.temperature}
        if self.tool_schemas:
            kwargs["tools"] = self.tool_schemas
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        return kwargs

    def _recover_tool_calls(self, content: str) -> tuple[str, list[JSONObject]]:
        """Tool calls written as text (no server-side parser): parse them with the configured parser."""
        from hermes_envs.parsers.invoke import parse_with

        if self._parser is None or not content:
            return content, []
        try:
            new_content, calls = parse_with(self._parser, content, self.tool_schemas or None)
        except Exception:  # a parser must never take down a rollout; log and keep the text
            logger.exception("tool-call parser %r raised on model output", self.tool_call_parser)
            return content, []
        if not calls:
            return content, []
        return new_content or "", [_tool_call_dict(c) for c in calls]

    async def run(self, messages: list[Message]) -> AgentResult:
        """Run turns until the model answers without tool calls, an error happens, or ``max_turns`` is reached."""
        reasoning_per_turn: list[str | None] = []
        tool_errors: list[ToolError] = []
        turns = [0]

        def result(
            turns: int, natural: bool, termination: TerminationReason, error: str | None = None
        ) -> AgentResult:
            return report_result(  # an env watching its evaluate() sees every rollout's outcome
                AgentResult(
                    messages=messages,
                    managed_state=self._managed_state(),
                    turns_used=turns,
                    finished_naturally=natural,
                    reasoning_per_turn=reasoning_per_turn,
                    tool_errors=tool_errors,
                    termination=termination,
                    error=error,
                )
            )

        try:
            return await self._turns(messages, result, reasoning_per_turn, tool_errors, turns)
        except ToolAbort as exc:
            logger.error("task %s: %s", self.task_id, exc)
            return result(turns[0], False, "tool_abort", str(exc))
        except Exception as exc:  # our own bug must not take the group down: label it
            logger.exception("agent loop failed on turn %d of task %s", turns[0], self.task_id)
            return result(turns[0], False, "internal_error", f"{type(exc).__name__}: {exc}"[:2000])

    async def _turns(
        self,
        messages: list[Message],
        result: _Finish,
        reasoning_per_turn: list[str | None],
        tool_errors: list[ToolError],
        turns: list[int],
    ) -> AgentResult:
        for turn in range(self.max_turns):
            turns[0] = turn + 1
            try:
                response = await self.server.chat_completion(**self._request_kwargs(messages))
            except Exception as exc:  # any server failure ends the rollout, as upstream does
                what = describe_api_error(exc)
                logger.warning("model call failed on turn %d of task %s: %s", turn + 1, self.task_id, what)
                return result(turn + 1, False, "api_error", what)
            choices = getattr(response, "choices", None) if response is not None else None
            if not choices:
                logger.warning("model returned no choices on turn %d of task %s", turn + 1, self.task_id)
                return result(turn + 1, False, "empty_response", "response had no choices")

            choice = choices[0]
            message = choice.message
            reasoning = _extract_reasoning(message)
            reasoning_per_turn.append(reasoning)
            content = message.content if isinstance(message.content, str) else (message.content or "")
            if not isinstance(content, str):
                content = str(content)
            calls = [_tool_call_dict(tc) for tc in (message.tool_calls or [])]
            if not calls:
                content, calls = self._recover_tool_calls(content)

            assistant: Message = {"role": "assistant", "content": content}
            if reasoning is not None:
                assistant["reasoning_content"] = reasoning
            if not calls:
                messages.append(assistant)
                cut = getattr(choice, "finish_reason", None) == "length"
                return result(turn + 1, True, "length" if cut else "stop")

            assistant["tool_calls"] = calls
            messages.append(assistant)
            turn_messages: list[Message] = []
            for call in calls:
                tool_message, error = await self._run_tool(turn + 1, call)
                messages.append(tool_message)
                turn_messages.append(tool_message)
                if error is not None:
                    tool_errors.append(error)
            names = [c["function"]["name"] for c in calls]
            fit_turn(turn_messages, names, self.task_id, self.budget_config)

        return result(self.max_turns, False, "max_turns")

    def _managed_state(self) -> JSONObject | None:
        """The server's ``get_state()`` (a ManagedServer's tokens, masks and logprobs), as upstream's loop reads it
        into every result; None for a server without one (an OpenAI-type server) or one that fails."""
        # on the class or set on the instance (a test double, a wrapper), as upstream's loop reads it
        get_state = getattr(self.server, "get_state", None)
        if not callable(get_state):
            return None
        try:
            state = get_state()
        except Exception:
            logger.warning("server.get_state() failed for task %s", self.task_id, exc_info=True)
            return None
        return state if isinstance(state, dict) else None

    async def _dispatch(self, name: str, args: JSONObject) -> object:
        """Run the tool off the event loop (the registry's async dispatch, or its sync one in the tool pool)."""
        from hermes_envs.tools._runtime import EnvRuntime, bound_runtime, using_runtime
        from hermes_envs.tools.registry import offering

        abandoned = threading.Event()  # set when this call is given up (tool timeout): its sub-agents stop
        # The env's runtime (sandbox settings, model endpoint for model-backed tools) when none is bound yet: a
        # loop an author built on an env's self.server (in evaluate, say) runs its tools as the env's own would.
        runtime = getattr(self.server, "hermes_runtime", None) if bound_runtime() is None else None
        if not isinstance(runtime, EnvRuntime):
            runtime = None
        # a sub-agent the tool starts gets these tools at most
        with using_runtime(runtime), offering(self.valid_tool_names, abandoned):
            try:
                adispatch = getattr(self.registry, "adispatch", None)
                if adispatch is not None:
                    return await adispatch(name, args, self.task_id)
                from hermes_envs.tools.sandbox import run_off_loop

                return await run_off_loop(self.registry.dispatch, name, args, self.task_id)
            except BaseException:
                abandoned.set()
                raise

    async def _call_tool(self, name: str, args: JSONObject) -> tuple[str | None, str | None]:
        """``(text, None)`` of a tool call that returned, or ``(None, error)``; raises :class:`ToolAbort`."""
        expired = [False]
        try:
            output = await _bounded(self._dispatch(name, args), self.tool_timeout, expired)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise ToolAbort(
                f"tool {name!r} raised {type(exc).__name__}({exception_text(exc, _EXC_CHARS)}); the rollout was stopped so the "
                "other rollouts of the group could finish. Fix: return an error string from the tool instead "
                "of exiting."
            ) from None
        except Exception as exc:
            if expired[0]:
                # A thread cannot be killed: the call keeps its pool thread until it returns; the rollout goes on.
                logger.error(
                    "tool %r of task %s did not return within %ss", name, self.task_id, self.tool_timeout
                )
                return None, f"Tool '{name}' did not finish within {self.tool_timeout:g} s and was abandoned."
            return None, f"Tool execution failed: {type(exc).__name__}: {exception_text(exc, _EXC_CHARS)}"
        try:
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            return (
                None,
                f"Tool '{name}' returned a value that is not JSON-serialisable: {type(exc).__name__}: {exc}",
            )
        return text, None

    async def _run_tool(self, turn: int, call: JSONObject) -> tuple[Message, ToolError | None]:
        name = call["function"]["name"]
        raw_args = call["function"]["arguments"]
        error: str | None = None
        args: JSONValue = None
        if name not in self.valid_tool_names:
            error = f"Unknown tool '{name}'. Available tools: {sorted(self.valid_tool_names)}"
        else:
            try:
                args = json.loads(raw_args) if raw_args.strip() else {}
            except json.JSONDecodeError as exc:
                error = (
                    f"Invalid JSON in tool arguments: {exc.msg} at position {exc.pos}. Send a JSON object."
                )
            except RecursionError:
                error = "Tool arguments are nested too deeply to decode. Send a flat JSON object."
            else:
                if not isinstance(args, dict):
                    error = f"Tool arguments must be a JSON object; got {type(args).__name__}."
        if error is None and name in _REFUSED_IN_RL:
            # upstream's loop answers these itself: an agent's memory or session history would leak between
            # rollouts. The refusal is the tool's result, not a tool error.
            refusal = json.dumps({"error": _REFUSED_IN_RL[name]})
            return {"role": "tool", "tool_call_id": call["id"], "content": refusal}, None
        if error is None:
            text, error = await self._call_tool(name, args)
            if text is not None:
                content = fit_result(text, name, call["id"], self.task_id, self.budget_config)
                message = {"role": "tool", "tool_call_id": call["id"], "content": content}
                reported = _reported_failure(text)
                if reported is None:
                    return message, None
                # The tool returned (no exception) but says it failed: upstream counts it as a tool error too.
                return message, ToolError(
                    turn=turn, tool_name=name, arguments=raw_args, error=reported, tool_result=text[:500]
                )
        assert error is not None
        tool_result = json.dumps({"error": error}, ensure_ascii=False)
        return (
            {"role": "tool", "tool_call_id": call["id"], "content": tool_result},
            ToolError(turn=turn, tool_name=name, arguments=raw_args, error=error, tool_result=tool_result),
        )


#: Tools the loop refuses, with upstream's words: they keep state across sessions, which RL rollouts must not share.
_REFUSED_IN_RL = {
    "memory": "Memory is not available in RL environments.",
    "session_search": "Session search is not available in RL environments.",
}


async def _bounded(awaitable: Awaitable[_T], seconds: float | None, expired: list[bool]) -> _T:
    """Await ``awaitable`` for at most ``seconds`` (None: no bound), in the CURRENT task.

    No new task is created (unlike ``asyncio.wait_for`` before Python 3.12): an async tool that raises
    KeyboardInterrupt inside its own task would stop the event loop before anyone could catch it.
    ``expired[0]`` is set when the bound, not the tool, raised the TimeoutError.
    """
    if seconds is None:
        return await awaitable
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:  # Python 3.10
        try:
            return await asyncio.wait_for(awaitable, seconds)
        except asyncio.TimeoutError:
            expired[0] = True
            raise
    cm = timeout(seconds)
    try:
        async with cm:
            return await awaitable
    except TimeoutError:
        expired[0] = cm.expired()
        raise


def _reported_failure(text: str) -> str | None:
    """The ``error`` of a result shaped ``{"error": ..., "exit_code": <negative>}`` (a tool reporting its own
    failure, as upstream's terminal does), else None."""
    if not text.startswith("{") or len(text) > 100_000:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    code = data.get("exit_code")
    if data.get("error") and isinstance(code, int) and not isinstance(code, bool) and code < 0:
        return str(data["error"])
    return None


def _as_budget(value: object) -> BudgetConfig:
    """Our BudgetConfig, from None (defaults), ours, or any object with upstream's field names."""
    if value is None:
        return DEFAULT_BUDGET
    if isinstance(value, BudgetConfig):
        return value
    return BudgetConfig(
        default_result_size=int(getattr(value, "default_result_size", DEFAULT_BUDGET.default_result_size)),
        turn_budget=int(getattr(value, "turn_budget", DEFAULT_BUDGET.turn_budget)),
        preview_size=int(getattr(value, "preview_size", DEFAULT_BUDGET.preview_size)),
        tool_overrides=dict(getattr(value, "tool_overrides", None) or {}),
    )
