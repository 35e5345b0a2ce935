"""Letter counting with a per-rollout notepad: `note_letter` records a letter the model has checked and returns
every letter noted so far. The notes live under the rollout's task_id (the tool declares a `task_id` parameter),
so rollouts running side by side, or one after another, never see each other's notes."""

from __future__ import annotations

import threading

from atroposlib.envs.base import APIServerConfig
from exact_answer_env import LetterCountEnv

from environments.hermes_base_env import HermesAgentEnvConfig
from hermes_envs.tools import registry

_NOTES: dict[str, list[str]] = {}
_LOCK = threading.Lock()


def note_letter(letter: str, task_id: str) -> str:
    """Write down a letter you have checked; returns every letter you noted so far.

    Args:
        letter: The single letter to note.
    """
    if len(letter) != 1:
        return "error: give exactly one letter"
    with _LOCK:
        notes = _NOTES.setdefault(task_id, [])
        notes.append(letter.lower())
        return "noted: " + ", ".join(notes)


class LetterNotesEnv(LetterCountEnv):
    """LetterCountEnv with a notepad tool whose state is the rollout's own."""

    name = "letter-notes"

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config, servers = super().config_init()
        config.enabled_toolsets = ["letter_notes"]
        config.system_prompt = "You can use the note_letter tool. End with 'Answer: <number>'."
        return config, servers

    async def setup(self) -> None:
        registry.tool(note_letter, toolset="letter_notes")
        await super().setup()


if __name__ == "__main__":
    LetterNotesEnv.cli()
