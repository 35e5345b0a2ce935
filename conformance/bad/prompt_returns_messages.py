"""HC301: format_prompt returns a list of chat messages instead of the user text. The rollout checks skip (they
cannot build a rollout) instead of reporting their own crash."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC301"]


class MessagesPromptEnv(LetterCountEnv):
    name = "prompt-returns-messages"

    def format_prompt(self, item: dict) -> list:
        text = f"How many times does the letter '{item['letter']}' occur in the word '{item['word']}'?"
        return [{"role": "user", "content": text}]


if __name__ == "__main__":
    MessagesPromptEnv.cli()
