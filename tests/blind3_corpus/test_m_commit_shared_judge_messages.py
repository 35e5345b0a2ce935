"""m_commit_shared_judge_messages: each judge call must see only its own rollout, never earlier rollouts' answers."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript

from hermes_envs.testing.fake_server import FakeOpenAIServer


async def _second_judge_request(name: str) -> list[dict]:
    with FakeOpenAIServer(script=[{"content": "1. ok\nSCORE: 7"}]) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        first, second = env._items[0], env._items[1]
        await env.compute_reward(
            first, transcript(env.format_prompt(first), answer("Fix FIRST-ROLLOUT")), None
        )
        await env.compute_reward(second, transcript(env.format_prompt(second), answer("Fix second")), None)
        srv.assert_no_failures()
        return srv.chat_calls[1].body["messages"]


async def test_correct_env_judges_each_rollout_alone() -> None:
    messages = await _second_judge_request("commit_message_judge_env")
    assert len(messages) == 2
    assert "FIRST-ROLLOUT" not in str(messages)


async def test_mutant_judge_sees_the_previous_rollout() -> None:
    messages = await _second_judge_request("m_commit_shared_judge_messages")
    assert len(messages) > 2
    assert "FIRST-ROLLOUT" in str(messages)
