"""Probe models and the strict ``AgentResult`` used by the conformance checks.

A responder plays the model: ``responder(request_body) -> turn`` where a turn is the fake server's script turn
(``{"content": str, "tool_calls": [{"name", "arguments"}]}``). Probe transcripts are produced by running the REAL
agent loop against the fake server with these responders, so they only hold what the loop can really produce.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from hermes_envs._chat import offered_functions
from hermes_envs.agent.result import AgentResult
from hermes_envs.testing.fake_server import _policies as policies
from hermes_envs.testing.fake_server._policies import args_from_schema
from hermes_envs.testing.fake_server.scripts import RequestView

__all__ = [
    "CONTROLS",
    "ContractViolation",
    "PROBES",
    "REFUSAL",
    "Responder",
    "StrictAgentResult",
    "UNICODE_TEXT",
    "broken_tools_then",
    "call_each_tool_then",
    "env_transcripts",
    "huge",
    "play",
    "say",
    "spam_tools",
]

#: what answers each request of a probe (a fake-server policy: a Turn, a message dict or a plain text)
Responder = policies.Policy

REFUSAL = "I'm sorry, but I can't help with that."
UNICODE_TEXT = "Résumé: 答案是 42 🤖 — naïve café, Ωmega; \u200b zero-width, עברית, русский."


def _assistant_turns(body: dict[str, Any]) -> int:
    return RequestView(body).assistant_count


# ----------------------------------------------------------------------------------------------- responders
# The plain behaviours (say nothing, refuse, echo the prompt, answer a text) are the fake server's own policies,
# one set for the kit and for users' tests. The tool-calling probes below are not: they act on the model's turn
# count (all tools on the first turn, whatever the env put back in the conversation), where the server's
# call_each_tool / spam_tools act on the calls they see in the messages, which an env that rebuilds its
# conversation can drop (those would call the tools again on every turn).
def say(text: str) -> Responder:
    """Always answer ``text`` with no tool calls."""
    return policies.answer(text)


def call_each_tool_then(answer: str) -> Responder:
    """First turn: call every offered tool once (arguments from its schema); then answer ``answer``."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        tools = offered_functions(body.get("tools"))
        if _assistant_turns(body) == 0 and tools:
            return {
                "content": "",
                "tool_calls": [
                    {"name": t.get("name", ""), "arguments": args_from_schema(t.get("parameters") or {})}
                    for t in tools
                ],
            }
        return {"content": answer}

    return respond


def spam_tools(body: dict[str, Any]) -> dict[str, Any]:
    """Call the first offered tool on every turn, never answering (ends at max turns)."""
    tools = offered_functions(body.get("tools"))
    if not tools:
        return {"content": "still working"}
    first = tools[0]
    return {
        "content": "",
        "tool_calls": [
            {"name": first.get("name", ""), "arguments": args_from_schema(first.get("parameters") or {})}
        ],
    }


def broken_tools_then(answer: str) -> Responder:
    """First turn: a call to a tool that was not offered, and one whose arguments are not JSON; then answer."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        tools = offered_functions(body.get("tools"))
        if _assistant_turns(body) == 0 and tools:
            name = tools[0].get("name", "")
            return {
                "content": "",
                # The fake server's unknown_tool fault renames the first call to a tool that was not offered.
                "fault": {"kind": "unknown_tool", "tool_name": "definitely_not_a_tool"},
                "tool_calls": [
                    {"name": name, "arguments": {}},
                    {"name": name, "arguments": '{"command": "echo unterminated'},
                ],
            }
        return {"content": answer}

    return respond


def huge(body: dict[str, Any]) -> dict[str, Any]:
    """A very long answer (about 200 KB)."""
    return {"content": ("All work and no play makes a very long answer. " * 4200)[:200_000]}


#: name -> (responder factory, max turns for the probe, what it stands for)
PROBES: dict[str, tuple[Callable[[], Responder], int, str]] = {
    "empty_reply": (policies.do_nothing, 3, "the model says nothing"),
    "refusal": (lambda: policies.refuse(REFUSAL), 3, "the model refuses"),
    "echo_prompt": (policies.echo, 3, "the model repeats the prompt"),
    "tool_then_answer": (
        lambda: call_each_tool_then("I am not sure."),
        4,
        "tools called, then a wrong answer",
    ),
    "tool_errors": (lambda: broken_tools_then("Done."), 4, "unknown tool + invalid JSON arguments"),
    "max_turns": (lambda: spam_tools, 3, "tool spam cut off at max turns"),
    "unicode": (lambda: say(UNICODE_TEXT), 3, "unicode answer"),
    "huge_output": (lambda: huge, 3, "a 200 KB answer"),
}

#: Probes a correct reward must score low (negative controls).
CONTROLS = ("empty_reply", "refusal", "echo_prompt", "max_turns")


# ----------------------------------------------------------------------------------------------- strict result
_MISSING_ATTRS = {
    "final_response": "AgentResult has no `final_response`; the final answer is the content of the last assistant "
    "message with content: use hermes_envs.final_response(result), or walk result.messages in reverse.",
    "tool_calls": "AgentResult has no `tool_calls`; tool calls live in result.messages as dicts: "
    "[tc for m in result.messages if m.get('role') == 'assistant' for tc in m.get('tool_calls') or []].",
    "tools_used": "AgentResult has no `tools_used`; collect tc['function']['name'] from the assistant messages' "
    "tool_calls dicts (or use hermes_envs.tools_used(result)).",
    "output": "AgentResult has no `output`; read the last assistant message's content from result.messages.",
    "response": "AgentResult has no `response`; read the last assistant message's content from result.messages.",
    "get": "AgentResult is a dataclass, not a dict: there is no .get(); use attributes (result.messages, "
    "result.turns_used, result.finished_naturally, result.tool_errors).",
    "keys": "AgentResult is a dataclass, not a dict: there are no keys(); use its attributes.",
    "items": "AgentResult is a dataclass, not a dict: there is no items(); use its attributes.",
}


def _defensive_caller() -> bool:
    """True when the attribute lookup comes from ``getattr(x, name, default)`` or ``hasattr`` in the caller's line."""
    import linecache
    import sys

    frame = sys._getframe(2)
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    return "getattr(" in line or "hasattr(" in line


class ContractViolation(AttributeError, TypeError):
    """Raised by the strict AgentResult on a misuse; an AttributeError and a TypeError so either except catches it."""


@dataclasses.dataclass
class StrictAgentResult(AgentResult):
    """An AgentResult that records and explains every misuse (dict access, attributes that do not exist).

    Misuses are recorded on the instance as well as raised, so a reward that swallows the exception and returns
    0.0 is still caught.
    """

    violations: list[str] = dataclasses.field(default_factory=list, repr=False, compare=False)
    #: lookups with a fallback (getattr(result, "final_response", ""), hasattr) of names that never exist: the
    #: reward silently always takes the fallback. Reported as warnings (the fallback may be deliberate).
    soft_violations: list[str] = dataclasses.field(default_factory=list, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("violations", "soft_violations"):
            raise AttributeError(name)
        if _defensive_caller():
            # getattr(result, "final_response", fallback) / hasattr(...) do not raise on a real AgentResult either;
            # but for a name AgentResult never has, the fallback is all the reward will ever get.
            if name in _MISSING_ATTRS:
                _record(
                    self.soft_violations,
                    f"getattr/hasattr on AgentResult's {name!r} always takes the fallback: {_MISSING_ATTRS[name]}",
                )
            raise AttributeError(name)
        message = _MISSING_ATTRS.get(
            name,
            f"AgentResult has no attribute {name!r}; its fields are messages, managed_state, turns_used, "
            "finished_naturally, reasoning_per_turn, tool_errors.",
        )
        self.violations.append(message)
        raise ContractViolation(message)

    def __getitem__(self, key: Any) -> Any:
        message = (
            f"AgentResult is a dataclass, not a dict: result[{key!r}] does not work. "
            f"Use attributes instead (result.{key if isinstance(key, str) and key.isidentifier() else 'messages'})."
        )
        self.violations.append(message)
        raise ContractViolation(message)

    def __contains__(self, key: Any) -> bool:
        message = (
            f"AgentResult is a dataclass, not a dict: `{key!r} in result` does not work; use its attributes."
        )
        self.violations.append(message)
        raise ContractViolation(message)

    @classmethod
    def of(cls, result: AgentResult) -> StrictAgentResult:
        """A strict copy of ``result`` (messages deep-copied, so mutation by the reward can be detected)."""
        import copy

        fields = {f.name: copy.deepcopy(getattr(result, f.name)) for f in dataclasses.fields(AgentResult)}
        strict = cls(**fields)
        lists = (strict.violations, strict.soft_violations)
        for message in strict.messages:
            calls = message.get("tool_calls") if isinstance(message, dict) else None
            if calls:
                message["tool_calls"] = [_StrictToolCall.wrap(tc, *lists) for tc in calls]
        strict.messages = [_StrictMessage.wrap(m, *lists) for m in strict.messages]
        return strict


def _record(violations: list[str], message: str) -> None:
    if message not in violations:
        violations.append(message)


class _StrictToolCall(dict[str, Any]):
    """A tool-call dict (or its ``function`` dict) that explains attribute access: ``tc.function.name`` is the
    guide's mistake #2 (the calls in ``result.messages`` are dicts, not OpenAI objects). Recorded like the
    AgentResult misuses, so a reward that swallows the AttributeError is still caught."""

    __slots__ = ("_raised", "_soft", "_violations")

    @classmethod
    def wrap(cls, value: Any, violations: list[str], soft: list[str] | None = None) -> Any:
        if not isinstance(value, dict):
            return value
        wrapped = cls({k: cls.wrap(v, violations, soft) if k == "function" else v for k, v in value.items()})
        wrapped._setup(violations, soft)
        return wrapped

    def _setup(self, violations: list[str], soft: list[str] | None) -> None:
        self._violations = violations
        self._soft = violations if soft is None else soft
        self._raised: dict[str, tuple[list[str], str]] = {}

    def _recovered(self, key: Any) -> None:
        """The reward fell back to the dict read of a name whose attribute read failed (a duck-typed helper,
        ``try: tc.function except AttributeError: tc["function"]``, or Jinja's ``{{ m.role }}``): no misuse."""
        try:
            raised = self._raised
        except AttributeError:  # a copy made by type(d)(...) (dataclasses.asdict): a plain dict, in effect
            return
        found = raised.pop(key, None) if isinstance(key, str) else None
        if found is not None and found[1] in found[0]:
            found[0].remove(found[1])

    def __getitem__(self, key: Any) -> Any:
        self._recovered(key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._recovered(key)
        return dict.get(self, key, default)

    def _explain(self, name: str) -> str:
        return (
            f"tool calls in result.messages are dicts, not objects: `.{name}` does not work; use "
            f"tc[{name!r}] (e.g. tc['function']['name'], json.loads(tc['function']['arguments']))."
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_violations", "_soft", "_raised"):
            raise AttributeError(name)
        try:
            self._raised  # noqa: B018 - a copy made by type(d)(...) is not watched: plain dict behaviour
        except AttributeError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None
        if _defensive_caller():  # getattr(tc, "function", None): on a dict that is always the fallback
            message = f"getattr/hasattr always takes the fallback here: {self._explain(name)}"
            _record(self._soft, message)
            self._raised[name] = (self._soft, message)
            raise AttributeError(name)
        message = self._explain(name)
        self._violations.append(message)
        self._raised[name] = (self._violations, message)
        raise ContractViolation(message)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy

        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class _StrictMessage(_StrictToolCall):
    """A message dict of result.messages that explains attribute access (``m.role`` / ``m.content``): messages
    are dicts, as the chat API takes them."""

    __slots__ = ()

    @classmethod
    def wrap(cls, value: Any, violations: list[str], soft: list[str] | None = None) -> Any:
        if not isinstance(value, dict):
            return value
        wrapped = cls(value)
        wrapped._setup(violations, soft)
        return wrapped

    def _explain(self, name: str) -> str:
        return (
            f"messages in result.messages are dicts, not objects: `.{name}` does not work; use m[{name!r}] or "
            f"m.get({name!r}) (e.g. m['role'], m.get('content'))."
        )


# ----------------------------------------------------------------------------------------------- positives
def play(script: list[dict[str, Any]]) -> Responder:
    """Play a scripted transcript: the n-th model turn answers ``script[n]`` (the last turn repeats)."""
    if not script:
        raise ValueError("a conformance transcript should hold at least one model turn; got an empty list")

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return dict(script[min(_assistant_turns(body), len(script) - 1)])

    return respond


def env_transcripts(env: Any, item: Any) -> dict[str, list[list[dict[str, Any]]]]:
    """The env's own example transcripts for ``item``: ``env.conformance_transcripts(item)``, when it has one.

    The hook returns ``{"good": [script, ...], "bad": [script, ...]}``; a script is a list of model turns in the
    fake server's format (``{"content": str, "tool_calls": [{"name", "arguments"}]}``), played in order through
    the real agent loop. Good transcripts must score above every control; bad ones are extra negative controls.
    """
    hook = getattr(env, "conformance_transcripts", None)
    if hook is None:
        return {}
    returned = hook(item) or {}
    if not isinstance(returned, dict) or set(returned) - {"good", "bad"}:
        raise TypeError(
            f"conformance_transcripts(item) should return {{'good': [...], 'bad': [...]}}; got {returned!r:.200}"
        )
    return {k: [list(s) for s in v or []] for k, v in returned.items()}
