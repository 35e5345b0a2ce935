"""HC413: the reward cuts the reply's JSON out with a non-greedy regex (`\\{.*?\\}`), which stops at the first '}'.
The answer asked for holds a nested object (the person's address), so every complete reply is cut inside it, fails
to parse and scores 0, while a reply that leaves the address out parses and scores 3/4."""

import json
import re

from _good import PeopleEnv, same

from hermes_envs import final_response

EXPECTED_FINDINGS = ["HC413"]

ROWS = [
    ("Ann Berg, 31, lives at 4 Fjord St, Oslo.", "Ann Berg", 31, "Oslo", "4 Fjord St"),
    ("Carlos Ruiz is 45 and lives at 12 Sol Ave, Lima.", "Carlos Ruiz", 45, "Lima", "12 Sol Ave"),
    ("Mei Chen (27) moved to 8 Lotus Rd, Taipei.", "Mei Chen", 27, "Taipei", "8 Lotus Rd"),
    ("Aged 52, Omar Haddad calls 3 Cedar Ln, Amman home.", "Omar Haddad", 52, "Amman", "3 Cedar Ln"),
    ("Lena Vogel, 38, of 7 Alpen Way, Graz.", "Lena Vogel", 38, "Graz", "7 Alpen Way"),
    ("Tom Reed is 19; he lives at 1 Mill St, Leeds.", "Tom Reed", 19, "Leeds", "1 Mill St"),
]


def lazy_object(text):
    match = re.search(r"\{.*?\}", text, re.S)
    if match is None:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class LazyRegexEnv(PeopleEnv):
    name = "json-lazy-regex"

    async def setup(self):
        await super().setup()
        rows = [
            {
                "text": text,
                "fields": {
                    "name": name,
                    "age": age,
                    "city": city,
                    "address": {"street": street, "city": city},
                },
            }
            for text, name, age, city, street in ROWS
        ]
        self._held_out = rows[-2:]
        self._rows = rows[:-2]
        self._next = 0

    async def get_next_item(self):
        row = self._rows[self._next % len(self._rows)]
        self._next += 1
        return row

    def format_prompt(self, item):
        return (
            'Extract a JSON object {"name": str, "age": int, "city": str, "address": {"street": str, "city": str}} '
            "from: " + item["text"]
        )

    async def compute_reward(self, item, result, ctx):
        got = lazy_object(final_response(result) or "")
        if got is None:
            return 0.0
        gold = item["fields"]
        return sum(1.0 for k, v in gold.items() if k in got and same(got[k], v)) / len(gold)


if __name__ == "__main__":
    LazyRegexEnv.cli()
