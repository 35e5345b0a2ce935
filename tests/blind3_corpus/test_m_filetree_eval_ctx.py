"""m_filetree_eval_ctx: evaluate() must check the sandbox the eval rollout worked in, as training does."""

from __future__ import annotations

from blind3_helpers import build

from hermes_envs.testing.fake_server import FakeOpenAIServer


async def _eval_score(name: str) -> float:
    probe = build(name)
    await probe.setup()
    item = probe._eval_items[0]
    writes = [
        {"name": "write_file", "arguments": {"path": f["path"], "content": "\n".join(f["contains"]) + "\n"}}
        for f in item["files"]
    ]
    script = [{"tool_calls": writes}, {"content": "done"}]
    with FakeOpenAIServer(script=script) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        env._eval_items = [item]
        await env.evaluate()
        srv.assert_no_failures()
    return dict(env._eval_metrics)["eval/layout_score"]


async def test_correct_env_eval_sees_the_rollouts_files() -> None:
    assert await _eval_score("filetree_env") == 1.0


async def test_mutant_eval_checks_an_empty_sandbox() -> None:
    assert await _eval_score("m_filetree_eval_ctx") == 0.0
