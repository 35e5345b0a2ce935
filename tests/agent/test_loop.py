"""HermesAgentLoop: every branch of the upstream contract, driven by an in-process stub server."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from hermes_envs.agent import AgentResult, HermesAgentLoop, final_response, tool_calls, tools_used
from hermes_envs.tools import ToolRegistry


def completion(
    content: str | None = "",
    calls: list[tuple[str, str]] | None = None,
    finish: str | None = None,
    **extra: Any,
) -> ChatCompletion:
    message: dict[str, Any] = {"role": "assistant", "content": content, **extra}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    return ChatCompletion.model_validate(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish or ("tool_calls" if calls else "stop"),
                }
            ],
        }
    )


class StubServer:
    """Answers each chat_completion with the next scripted response (or raises it when it is an exception)."""

    def __init__(self, *responses: Any) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    async def chat_completion(self, **kwargs: Any) -> Any:
        self.requests.append({**kwargs, "messages": [dict(m) for m in kwargs["messages"]]})
        response = self.responses.pop(0)
        if isinstance(response, BaseException):
            raise response
        return response


@pytest.fixture
def tools() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool(toolset="t")
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @reg.tool(toolset="t")
    def boom(reason: str) -> str:
        """Always fails."""
        raise ValueError(f"bad {reason}")

    @reg.tool(toolset="t")
    def where(task_id: str) -> str:
        """Return the task id it was dispatched for."""
        return task_id

    return reg


def make_loop(server: StubServer, reg: ToolRegistry, **kw: Any) -> HermesAgentLoop:
    schemas, names = reg.resolve()
    return HermesAgentLoop(server, schemas, names, registry=reg, **kw)


async def test_answer_without_tools_finishes_naturally(tools: ToolRegistry) -> None:
    server = StubServer(completion("Paris."))
    messages = [{"role": "user", "content": "Capital of France?"}]
    result = await make_loop(server, tools).run(messages)
    assert isinstance(result, AgentResult)
    assert result.finished_naturally and result.turns_used == 1 and result.termination == "stop"
    assert result.messages is messages and messages[-1] == {"role": "assistant", "content": "Paris."}
    assert final_response(result) == "Paris."


async def test_request_shape_follows_the_contract(tools: ToolRegistry) -> None:
    server = StubServer(completion("ok"), completion("ok"))
    await make_loop(server, tools, temperature=0.3).run([{"role": "user", "content": "q"}])
    sent = server.requests[0]
    assert sent["n"] == 1 and sent["temperature"] == 0.3
    assert {t["function"]["name"] for t in sent["tools"]} == {"add", "boom", "where"}
    assert "max_tokens" not in sent and "extra_body" not in sent
    await HermesAgentLoop(server, [], [], max_tokens=50, extra_body={"top_k": 5}).run(
        [{"role": "user", "content": "q"}]
    )
    sent = server.requests[1]
    assert "tools" not in sent and sent["max_tokens"] == 50 and sent["extra_body"] == {"top_k": 5}


async def test_tool_call_is_dispatched_and_result_appended(tools: ToolRegistry) -> None:
    server = StubServer(completion(None, [("add", '{"a": 2, "b": 3}')]), completion("5"))
    result = await make_loop(server, tools).run([{"role": "user", "content": "2+3"}])
    assistant, tool_msg = result.messages[1], result.messages[2]
    assert assistant["content"] == ""  # not None when the model said nothing
    assert assistant["tool_calls"][0] == {
        "id": "call_0",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
    }
    assert tool_msg == {"role": "tool", "tool_call_id": "call_0", "content": "5"}
    assert result.turns_used == 2 and result.finished_naturally and not result.tool_errors
    assert tools_used(result) == ["add"] and tool_calls(result)[0]["arguments"] == {"a": 2, "b": 3}
    # the second request carried the tool result back to the model
    assert server.requests[1]["messages"][-1]["role"] == "tool"


async def test_unknown_tool_is_reported_to_model_and_recorded(tools: ToolRegistry) -> None:
    server = StubServer(completion("", [("rm_rf", "{}")]), completion("sorry"))
    result = await make_loop(server, tools).run([{"role": "user", "content": "q"}])
    payload = json.loads(result.messages[2]["content"])
    assert payload["error"].startswith("Unknown tool 'rm_rf'. Available tools: ")
    assert "add" in payload["error"]
    (err,) = result.tool_errors
    assert (err.turn, err.tool_name) == (1, "rm_rf") and err.tool_result == result.messages[2]["content"]


async def test_invalid_json_arguments_are_not_dispatched(tools: ToolRegistry) -> None:
    calls: list[Any] = []
    tools.get("add").handler = lambda **kw: calls.append(kw)  # would record a dispatch
    server = StubServer(completion("", [("add", '{"a": 1, "b": ')]), completion("done"))
    result = await make_loop(server, tools).run([{"role": "user", "content": "q"}])
    assert not calls
    assert "Invalid JSON" in json.loads(result.messages[2]["content"])["error"]
    assert result.tool_errors[0].arguments == '{"a": 1, "b": '


async def test_raising_tool_becomes_error_result(tools: ToolRegistry) -> None:
    server = StubServer(completion("", [("boom", '{"reason": "x"}')]), completion("ok"))
    result = await make_loop(server, tools).run([{"role": "user", "content": "q"}])
    assert json.loads(result.messages[2]["content"]) == {"error": "Tool execution failed: ValueError: bad x"}
    assert result.tool_errors[0].error == "Tool execution failed: ValueError: bad x"


async def test_long_arguments_are_cut_to_200_chars_in_tool_error(tools: ToolRegistry) -> None:
    args = json.dumps({"reason": "y" * 500})
    server = StubServer(completion("", [("boom", args)]), completion("ok"))
    result = await make_loop(server, tools).run([{"role": "user", "content": "q"}])
    assert len(result.tool_errors[0].arguments) == 200


async def test_api_error_returns_at_once(tools: ToolRegistry) -> None:
    server = StubServer(completion("", [("add", '{"a": 1, "b": 1}')]), RuntimeError("503 from upstream"))
    result = await make_loop(server, tools).run([{"role": "user", "content": "q"}])
    assert not result.finished_naturally and result.turns_used == 2
    assert result.termination == "api_error" and "503 from upstream" in result.error
    assert result.messages[-1]["role"] == "tool"  # the first turn's work is kept


async def test_empty_choices_returns_at_once(tools: ToolRegistry) -> None:
    empty = ChatCompletion.model_validate(
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )
    result = await make_loop(StubServer(empty), tools).run([{"role": "user", "content": "q"}])
    assert (result.turns_used, result.finished_naturally, result.termination) == (1, False, "empty_response")


async def test_max_turns(tools: ToolRegistry) -> None:
    server = StubServer(*[completion("", [("add", '{"a": 1, "b": 1}')]) for _ in range(3)])
    result = await make_loop(server, tools, max_turns=3).run([{"role": "user", "content": "q"}])
    assert (result.turns_used, result.finished_naturally, result.termination) == (3, False, "max_turns")
    assert sum(m["role"] == "tool" for m in result.messages) == 3


async def test_length_finish_reason_is_reported(tools: ToolRegistry) -> None:
    result = await make_loop(StubServer(completion("The answer is", finish="length")), tools).run(
        [{"role": "user", "content": "q"}]
    )
    assert result.termination == "length" and result.finished_naturally


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"reasoning_content": "think A"}, "think A"),
        ({"reasoning": "think B"}, "think B"),
        ({"reasoning_details": [{"type": "reasoning.text", "text": "think C"}]}, "think C"),
        ({}, None),
    ],
)
async def test_reasoning_extraction(tools: ToolRegistry, extra: dict, expected: str | None) -> None:
    result = await make_loop(StubServer(completion("ok", **extra)), tools).run(
        [{"role": "user", "content": "q"}]
    )
    assert result.reasoning_per_turn == [expected]
    assert result.messages[-1].get("reasoning_content") == expected


async def test_tool_calls_in_text_are_recovered_by_the_parser(tools: ToolRegistry) -> None:
    text = 'Let me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 4, "b": 5}}\n</tool_call>'
    server = StubServer(completion(text), completion("9"))
    result = await make_loop(server, tools).run([{"role": "user", "content": "q"}])
    assert result.messages[1]["content"] == "Let me add."
    assert result.messages[1]["tool_calls"][0]["function"]["name"] == "add"
    assert result.messages[2]["content"] == "9"


async def test_task_id_reaches_the_tool(tools: ToolRegistry) -> None:
    server = StubServer(completion("", [("where", "{}")]), completion("ok"))
    result = await make_loop(server, tools, task_id="task-123").run([{"role": "user", "content": "q"}])
    assert result.messages[2]["content"] == "task-123"
    assert HermesAgentLoop(server, [], []).task_id != HermesAgentLoop(server, [], []).task_id  # fresh uuid4


async def test_a_tool_knows_which_tools_its_agent_was_offered(tools: ToolRegistry) -> None:
    """delegate_task hands on the parent's tools, never more (issue 28): the loop says which those are."""
    from hermes_envs.tools.registry import offered_tools

    seen: list[frozenset[str] | None] = []

    @tools.tool(toolset="t")
    def peek() -> str:
        """Record the tools of the calling agent."""
        seen.append(offered_tools())
        return "ok"

    schemas, _names = tools.resolve()
    server = StubServer(completion("", [("peek", "{}")]), completion("ok"))
    await HermesAgentLoop(server, schemas, {"peek", "add"}, registry=tools).run(
        [{"role": "user", "content": "q"}]
    )
    assert seen == [frozenset({"peek", "add"})]
    assert offered_tools() is None  # outside the loop's calls: no agent


async def test_slow_tool_does_not_block_the_event_loop() -> None:
    """While a blocking tool waits, a coroutine on the loop still runs and is the one that releases the tool."""
    reg = ToolRegistry()
    started = threading.Event()
    release = threading.Event()

    @reg.tool(toolset="t")
    def slow() -> str:
        """Block the calling thread until the event loop releases it."""
        started.set()
        released = release.wait(timeout=30)
        return f"{threading.current_thread().name}:{'released' if released else 'never released'}"

    async def releaser() -> None:
        while not started.is_set():  # the loop keeps serving this coroutine while the tool is running
            await asyncio.sleep(0.01)
        release.set()

    server = StubServer(completion("", [("slow", "{}")]), completion("ok"))
    result, _ = await asyncio.gather(
        make_loop(server, reg).run([{"role": "user", "content": "q"}]), releaser()
    )
    thread, _, outcome = result.messages[2]["content"].partition(":")
    assert outcome == "released"
    assert thread != threading.current_thread().name  # ran in the pool, not on the loop's thread


def test_unknown_parser_fails_at_construction_with_the_names() -> None:
    with pytest.raises(KeyError, match="hermes"):
        HermesAgentLoop(StubServer(), [], [], tool_call_parser="hermse")


def test_env_config_rejects_an_unknown_parser() -> None:
    from pydantic import ValidationError

    from hermes_envs.env import HermesAgentEnvConfig

    with pytest.raises(ValidationError, match="tool_call_parser should be one of"):
        HermesAgentEnvConfig(tool_call_parser="hermse")


class _ContractParser:
    """A custom parser written to the contract: ``parse(text)`` only, no ``tools`` parameter."""

    def parse(self, text: str) -> tuple[str | None, list[Any] | None]:
        from openai.types.chat import ChatCompletionMessageToolCall

        if "[[add 2 3]]" not in text:
            return text, None
        call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
        return None, [ChatCompletionMessageToolCall.model_validate(call)]


async def test_a_contract_style_parser_without_tools_parameter_recovers_calls(tools: ToolRegistry) -> None:
    server = StubServer(completion("[[add 2 3]]"), completion("5"))
    loop = make_loop(server, tools)
    loop._parser = _ContractParser()  # as get_parser would return a custom registered parser
    result = await loop.run([{"role": "user", "content": "2+3"}])
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.messages[2]["content"] == "5" and tools_used(result) == ["add"]


def test_the_phase2_translator_calls_a_contract_style_parser_without_tools() -> None:
    from hermes_envs.env import ParserTranslator

    translator = ParserTranslator(tokenizer=None)
    translator.parser = _ContractParser()
    content, calls, finish = translator.parse_model_output("[[add 2 3]]", tools=[{"type": "function"}])
    assert finish == "tool_calls" and calls[0].function.name == "add"


async def test_an_api_error_behind_retry_wrappers_is_described_by_the_real_error(tools: ToolRegistry) -> None:
    """atroposlib wraps server errors in tenacity RetryErrors whose own text is a Future's repr."""
    import openai
    from tenacity import AsyncRetrying, RetryError, stop_after_attempt

    from hermes_envs._http_client import sdk_http_module

    http = sdk_http_module()  # httpx2 under openai 3.x, httpx under 1.x/2.x
    request = http.Request("POST", "http://127.0.0.1/v1/chat/completions")
    body = '{"error": {"message": "no scripted turn matches: tool not offered"}}'
    api_error = openai.ConflictError(
        "Error code: 409", response=http.Response(409, request=request, text=body), body=None
    )

    async def failing() -> None:
        raise api_error

    async def wrapped() -> None:
        async for attempt in AsyncRetrying(stop=stop_after_attempt(1), reraise=False):
            with attempt:
                await failing()

    async def double_wrapped() -> None:
        async for attempt in AsyncRetrying(stop=stop_after_attempt(1), reraise=False):
            with attempt:
                await wrapped()

    try:
        await double_wrapped()
    except RetryError as exc:
        retry_error = exc
    result = await make_loop(StubServer(retry_error), tools).run([{"role": "user", "content": "q"}])
    assert result.termination == "api_error"
    assert result.error.startswith("ConflictError: Error code: 409")
    assert "HTTP 409" in result.error and "tool not offered" in result.error and "Future" not in result.error
