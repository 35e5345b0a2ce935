"""m_commit_first_number: the judge's score is its final 'SCORE:' line, not the first number in its reasoning."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript

from hermes_envs.testing.fake_server import FakeOpenAIServer

JUDGE_REPLY = (
    "1. Imperative summary under 60 characters: yes.\n2. Matches the diff: yes.\n"
    "3. Explains why: yes.\n4. Nothing invented: yes.\nSCORE: 9"
)


async def _score(name: str) -> float:
    with FakeOpenAIServer(script=[{"content": JUDGE_REPLY}]) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        item = env._items[0]
        message = "Use the configured cache TTL\n\nThe hard-coded 60 s ignored the settings."
        score = await env.compute_reward(item, transcript(env.format_prompt(item), answer(message)), None)
        srv.assert_no_failures()
        return score


async def test_correct_env_reads_the_score_line() -> None:
    assert await _score("commit_message_judge_env") == 0.9


async def test_mutant_reads_the_rubric_numbering() -> None:
    assert await _score("m_commit_first_number") == 0.1
