"""HC301: a plain `def format_prompt` that returns an async helper's coroutine (HC103 sees a sync method). The
rollout checks skip instead of reporting "cannot pickle 'coroutine' object" as their own crash."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC301"]


class CoroutinePromptEnv(LetterCountEnv):
    name = "prompt-returns-coroutine"

    async def _render(self, item: dict) -> str:
        return f"How many times does the letter '{item['letter']}' occur in the word '{item['word']}'?"

    def format_prompt(self, item: dict) -> str:
        return self._render(item)


if __name__ == "__main__":
    CoroutinePromptEnv.cli()
