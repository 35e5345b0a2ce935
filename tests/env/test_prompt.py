"""format_prompt called by the framework and by the kit: an async one is one clear error, never a stray warning."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest

from hermes_envs.env import HermesAgentBaseEnv
from hermes_envs.env._prompt import format_prompt_of
from hermes_envs.errors import ArgumentTypeError


class _AsyncPrompt:
    config = SimpleNamespace(system_prompt=None)

    async def format_prompt(self, item: dict) -> str:
        return f"Question: {item['q']}"


def test_an_async_format_prompt_is_refused_with_the_fix_and_no_never_awaited_warning():
    # Before: the coroutine became the user message's content and failed later, far away, with Python warning
    # "coroutine ... was never awaited" from wherever the garbage collector ran.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ArgumentTypeError, match=r"format_prompt\(item\) should return the prompt text.*plain `def`"
        ):
            HermesAgentBaseEnv.initial_messages(_AsyncPrompt(), {"q": "2+2"})  # type: ignore[arg-type]


def test_the_kit_gets_the_coroutine_closed_so_it_can_report_it():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prompt = format_prompt_of(_AsyncPrompt(), {"q": "2+2"})
        assert (
            prompt.__qualname__ == "_AsyncPrompt.format_prompt" and prompt.cr_frame is None
        )  # closed, never run


def test_a_plain_prompt_is_the_user_message():
    env = SimpleNamespace(
        config=SimpleNamespace(system_prompt="Be brief."), format_prompt=lambda item: "Q: 1+1"
    )
    assert HermesAgentBaseEnv.initial_messages(env, {}) == [  # type: ignore[arg-type]
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Q: 1+1"},
    ]
