"""HC302: the prompt's example of the file's format is the item's own tally, so every prompt holds its answer and
the policy learns to copy the example into the file instead of counting."""

import json

from _good import TallyFileEnv

EXPECTED_FINDINGS = ["HC302"]


class TallyInPromptEnv(TallyFileEnv):
    name = "tally-in-prompt"

    def format_prompt(self, item):
        return (
            f"Text: {item['text']}\n\nCount how often each word occurs and save the counts as a JSON object in "
            "`tally.json`, formatted like this: " + json.dumps(item["tally"])
        )


if __name__ == "__main__":
    TallyInPromptEnv.cli()
