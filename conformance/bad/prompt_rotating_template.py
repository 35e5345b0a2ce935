"""HC710 (a warning): format_prompt rotates its wording on every call ("vary the phrasing"), so one item is a
different question in every rollout of a group and in every eval."""

import itertools

from _good import LetterCountEnv

#: HC601 too: the rotation is state shared by every rollout, so concurrent and one-at-a-time rollouts see other prompts.
EXPECTED_FINDINGS = ["HC601", "HC710"]

TEMPLATES = [
    "How many times does the letter '{letter}' occur in the word '{word}'?",
    "Count the letter '{letter}' in '{word}'.",
    "In the word '{word}', how often does '{letter}' appear?",
    "What is the number of '{letter}' characters in '{word}'?",
]


class RotatingTemplateEnv(LetterCountEnv):
    name = "prompt-rotating-template"

    _wordings = itertools.cycle(TEMPLATES)

    def format_prompt(self, item: dict) -> str:
        return next(self._wordings).format(**item)


if __name__ == "__main__":
    RotatingTemplateEnv.cli()
