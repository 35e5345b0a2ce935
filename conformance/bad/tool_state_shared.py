"""HC605: the env's notepad tool keeps ONE list of notes for every rollout (a module-level list, not one per
task_id): rollouts of a group read each other's notes, and a later rollout starts with an earlier one's."""

from _good import LetterCountEnv
from atroposlib.envs.base import APIServerConfig

from environments.hermes_base_env import HermesAgentEnvConfig
from hermes_envs.tools import registry

EXPECTED_FINDINGS = ["HC605"]

_NOTES: list[str] = []


def jot_letter(letter: str) -> str:
    """Write down a letter you have checked; returns every letter you noted so far.

    Args:
        letter: The single letter to note.
    """
    if len(letter) != 1:
        return "error: give exactly one letter"
    _NOTES.append(letter.lower())  # the mistake: one notepad for every rollout
    return "noted: " + ", ".join(_NOTES)


class SharedNotesEnv(LetterCountEnv):
    name = "tool-state-shared"

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config, servers = super().config_init()
        config.enabled_toolsets = ["shared_notes"]
        config.system_prompt = "You can use the jot_letter tool. End with 'Answer: <number>'."
        return config, servers

    async def setup(self) -> None:
        registry.tool(jot_letter, toolset="shared_notes")
        await super().setup()


if __name__ == "__main__":
    SharedNotesEnv.cli()
