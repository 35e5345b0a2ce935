"""HC302 (+HC406): the whole item is pasted into the prompt, answer included; echoing the prompt scores 1.0."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC302", "HC406"]


class LeakyPromptEnv(LetterCountEnv):
    name = "answer-in-prompt"

    def format_prompt(self, item: dict) -> str:
        return f"Solve this task: {item}"


if __name__ == "__main__":
    LeakyPromptEnv.cli()
