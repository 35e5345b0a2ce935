"""m_commit_outage_neutral: a judge outage must not become a made-up score; the correct env fails loudly."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.retries import disable_client_retries, fast_retries


async def _outage(name: str) -> tuple[float, int]:
    """(score the base records, reward errors it counted) for one rollout graded while the judge returns 500."""
    with FakeOpenAIServer(faults=["500"]) as srv, fast_retries(attempts=1):
        env = build(name, srv.base_url)
        disable_client_retries(env.server)
        await env.setup()
        item = env._items[0]
        result = transcript(
            env.format_prompt(item), answer("Add a timeout to fetch\n\nRequests could hang forever.")
        )
        score = await env.score_rollout(item, result, "blind3-judge-outage")
        return score, env.reward_error_count


async def test_correct_env_reports_the_outage_as_a_reward_error() -> None:
    score, errors = await _outage("commit_message_judge_env")
    assert errors == 1 and score == 0.0


async def test_mutant_turns_the_outage_into_a_silent_half_score() -> None:
    score, errors = await _outage("m_commit_outage_neutral")
    assert errors == 0 and score == 0.5
