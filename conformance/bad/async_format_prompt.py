"""HC103: format_prompt written `async def`: the base calls it without await, so the prompt is a coroutine."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC103"]


class AsyncPromptEnv(LetterCountEnv):
    name = "async-format-prompt"

    async def format_prompt(self, item: dict) -> str:
        return f"How many times does '{item['letter']}' occur in '{item['word']}'?"


if __name__ == "__main__":
    AsyncPromptEnv.cli()
