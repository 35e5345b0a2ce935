"""HC301: the f prefix is missing, so every prompt literally says {letter} and {word}."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC301"]


class UnfilledPromptEnv(LetterCountEnv):
    name = "unfilled-prompt"

    def format_prompt(self, item: dict) -> str:
        return "How many times does the letter '{letter}' occur in the word '{word}'?"


if __name__ == "__main__":
    UnfilledPromptEnv.cli()
