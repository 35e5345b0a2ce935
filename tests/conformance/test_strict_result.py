"""The strict AgentResult the reward probes use: misuses are recorded; correct fallbacks to dict reads are not."""

from __future__ import annotations

import dataclasses

import pytest

from hermes_envs.agent import AgentResult
from hermes_envs.conformance._probes import ContractViolation, StrictAgentResult

CALL = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}


def strict() -> StrictAgentResult:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "42"},
    ]
    return StrictAgentResult.of(AgentResult(messages=messages, turns_used=2, finished_naturally=True))


def test_attribute_reads_of_dicts_are_recorded_even_when_swallowed() -> None:
    result = strict()
    with pytest.raises(ContractViolation):
        [tc.function.name for m in result.messages for tc in m.get("tool_calls") or []]
    with pytest.raises(AttributeError):
        result.messages[-1].content  # noqa: B018
    assert len(result.violations) == 2 and "m['content']" in result.violations[1]


def test_a_duck_typed_helper_that_falls_back_to_the_dict_read_is_not_a_misuse() -> None:
    """try: tc.function.name except AttributeError: tc["function"]["name"] (and Jinja's {{ m.role }})."""
    result = strict()

    def name_of(tc):
        try:
            return tc.function.name
        except AttributeError:
            return tc["function"]["name"]

    def field(m, key):
        return getattr(m, key) if hasattr(m, key) else m.get(key)

    assert [name_of(tc) for m in result.messages for tc in m.get("tool_calls") or []] == ["terminal"]
    assert [field(m, "role") for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.violations == [] and result.soft_violations == []


def test_getattr_fallbacks_of_names_agent_result_never_has_are_soft_misuses() -> None:
    result = strict()
    assert getattr(result, "final_response", "") == ""
    assert not hasattr(result, "tools_used")
    assert result.violations == [] and len(result.soft_violations) == 2


def test_copies_of_the_messages_behave_as_plain_dicts() -> None:
    result = strict()
    copied = dataclasses.asdict(result)["messages"]
    assert [m.get("role") for m in copied] == ["user", "assistant", "tool", "assistant"]
    with pytest.raises(AttributeError):
        copied[0].role  # noqa: B018
