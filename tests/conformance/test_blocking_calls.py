"""HC408 sees thread-blocking calls on the event loop however short (a 1 ms time.sleep in an async tool, a blocking
socket connect in an async reward), and blames neither a plain `def` tool (run off the loop) nor a non-blocking
client."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_ENV = """
import asyncio, socket, sys, time
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv
from hermes_envs.tools import registry


{tool}


class BlockingEnv(LetterCountEnv):
    name = "blocking-{case}"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        config.enabled_toolsets = ["spell_set"]
        return config, servers

    async def setup(self):
        registry.tool(spell, toolset="spell_set")
        await super().setup()

    async def compute_reward(self, item, result, ctx):
{reward}        return await super().compute_reward(item, result, ctx)
"""

_ASYNC_SLEEP_TOOL = '''async def spell(word: str) -> str:
    """Spell a word.

    Args:
        word: The word.
    """
    time.sleep(0.001)
    return " ".join(word)'''

_PLAIN_SLEEP_TOOL = _ASYNC_SLEEP_TOOL.replace("async def", "def")

#: `from time import sleep` at import, before the kit watches anything: the name is bound to time.sleep itself.
_BOUND_SLEEP_TOOL = "from time import sleep\n\n\n" + _ASYNC_SLEEP_TOOL.replace("time.sleep(", "sleep(")

_AWAITING_TOOL = _ASYNC_SLEEP_TOOL.replace("time.sleep(0.001)", "await asyncio.sleep(0.001)")

#: A blocking connect to the model server (as `requests.post` to a judge makes), and asyncio's non-blocking one.
_SERVER = (
    "        host, port = self.server.servers[0].config.base_url.split('//')[1].split('/')[0].split(':')\n"
)
_BLOCKING_CONNECT = _SERVER + "        socket.create_connection((host, int(port)), timeout=5).close()\n"

_ASYNC_CONNECT = (
    _SERVER
    + "        _reader, writer = await asyncio.open_connection(host, int(port))\n        writer.close()\n"
)

#: case -> (the tool, the reward's first lines, HC408's outcome, the line blamed)
CASES = {
    "async_tool_sleeps": (_ASYNC_SLEEP_TOOL, "", Status.FAILED, "time.sleep(0.001)"),
    "plain_tool_sleeps": (_PLAIN_SLEEP_TOOL, "", Status.PASSED, None),
    "async_tool_sleeps_bound_name": (_BOUND_SLEEP_TOOL, "", Status.FAILED, "time.sleep(0.001)"),
    "async_tool_awaits": (_AWAITING_TOOL, "", Status.PASSED, None),
    "reward_blocking_connect": (
        _AWAITING_TOOL,
        _BLOCKING_CONNECT,
        Status.FAILED,
        "a blocking socket connect",
    ),
    "reward_async_connect": (_AWAITING_TOOL, _ASYNC_CONNECT, Status.PASSED, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hc408_blames_thread_blocking_calls_on_the_loop_only(case: str, tmp_path: Path) -> None:
    tool, reward, expected, what = CASES[case]
    env = tmp_path / f"{case}_env.py"
    env.write_text(_ENV.format(bad=str(CORPUS / "bad"), case=case, tool=tool, reward=reward))
    from hermes_envs.tools import registry

    with (
        registry.isolated(),
        EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC408"])) as session,
    ):
        outcome = session.run("HC408")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if what is not None:
        (finding,) = outcome.findings
        assert what in finding.message and f"{case}_env.py" in finding.subject
