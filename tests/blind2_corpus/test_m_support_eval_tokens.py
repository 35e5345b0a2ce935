"""m_support_eval_tokens: evaluate() allows 64 tokens where training allows 300, so replies that training rewards
are cut off in eval and score 0."""

from __future__ import annotations

from typing import Any

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load

REPLY = (
    "I'm sorry to hear about the {topic} problem, and thank you for letting us know. Could you share your order "
    "number? A specialist will look into it and get back to you with the options as soon as possible."
)


def _model(module) -> Any:
    """A model that needs about 100 tokens for its reply (which names the customer's problem) and is cut off
    below that."""

    def policy(body: dict[str, Any]) -> dict[str, Any]:
        customer = body["messages"][-1]["content"]
        topic = next(words[0] for issue, words in module.ISSUES if issue in customer)
        reply = REPLY.format(topic=topic)
        if body.get("max_tokens", 10**6) < 100:
            return {"content": " ".join(reply.split()[:20]), "finish_reason": "length"}
        return {"content": reply}

    return policy


async def _train_and_eval(stem: str) -> tuple[list[float], float]:
    module = load(stem)
    item = next(i for i in module._make_items()[8:] if i["order"] is None)
    with FakeOpenAIServer(policy=_model(module)) as server:
        env = build(module.SupportReplyEnv, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(item)
        env._eval_items = [i for i in env._eval_items if i["order"] is None][:2]
        await env.evaluate()
    return list(group["scores"]), dict(env._eval_metrics)["eval/rubric_score"]


async def test_eval_truncates_what_training_rewards_on_the_mutant() -> None:
    assert await _train_and_eval("m_support_eval_tokens") == ([1.0, 1.0], 0.0)
    assert await _train_and_eval("support_reply_env") == ([1.0, 1.0], 1.0)
