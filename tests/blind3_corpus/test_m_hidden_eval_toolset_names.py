"""m_hidden_eval_toolset_names: eval must accept the same tools training offers; toolset names are not tool names."""

from __future__ import annotations

from blind3_helpers import build

from hermes_envs.testing.fake_server import FakeOpenAIServer


async def _eval(name: str) -> tuple[float, list[str]]:
    """(eval pass rate, tool results) of one eval item played with the env's own known-good transcript."""
    probe = build(name)
    await probe.setup()
    item = probe._eval_items[0]
    [good] = probe.conformance_transcripts(item)["good"]
    with FakeOpenAIServer(script=good) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        env._eval_items = [item]
        await env.evaluate()
        srv.assert_no_failures()
        results = [
            m["content"] for c in srv.chat_calls for m in c.body["messages"][-1:] if m["role"] == "tool"
        ]
    return dict(env._eval_metrics)["eval/mean_pass_rate"], results


async def test_correct_env_eval_runs_the_offered_tools() -> None:
    rate, results = await _eval("hidden_tests_env")
    assert rate == 1.0
    assert not any("Unknown tool" in r for r in results)


async def test_mutant_eval_rejects_write_file_as_unknown() -> None:
    rate, results = await _eval("m_hidden_eval_toolset_names")
    assert rate == 0.0
    assert any("Unknown tool 'write_file'" in r for r in results)
