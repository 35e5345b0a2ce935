"""Letter counting with a tool of the env's own: a `count_letter` tool the model may call. The tool reads its
arguments as plain text (no eval, no shell), so nothing of the trainer's process reaches the model through it."""

from __future__ import annotations

from atroposlib.envs.base import APIServerConfig
from exact_answer_env import LetterCountEnv

from environments.hermes_base_env import HermesAgentEnvConfig
from hermes_envs.tools import registry


def count_letter(word: str, letter: str) -> str:
    """Count how often a letter occurs in a word (case-insensitive).

    Args:
        word: The word to look in.
        letter: The single letter to count.
    """
    if len(letter) != 1:
        return "error: give exactly one letter"
    return str(word.lower().count(letter.lower()))


class LetterToolEnv(LetterCountEnv):
    """LetterCountEnv with the counting tool instead of a terminal."""

    name = "letter-tool"

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config, servers = super().config_init()
        config.enabled_toolsets = ["letters"]
        config.system_prompt = "You can use the count_letter tool. End with 'Answer: <number>'."
        return config, servers

    async def setup(self) -> None:
        registry.tool(count_letter, toolset="letters")
        await super().setup()


if __name__ == "__main__":
    LetterToolEnv.cli()
