"""Fix a bug in a tiny two-file package; hidden tests run in the rollout's sandbox decide the reward.

The prompt shows the package (``textstats/__init__.py`` and ``textstats/core.py``) and an issue report. The model
writes the fixed package into its working directory. The reward adds a hidden test script (never shown to the
model, different texts from the issue's example) to the same sandbox, runs it with a timeout, and reads one result
line tagged with a fresh nonce. A submission that fails a hidden test of the reported function scores 0 (copying
the repository unchanged earns nothing); otherwise the score is the share of all hidden tests passed, so a fix
that breaks another function earns partial credit.
"""

from __future__ import annotations

import json
import random
import re
import secrets
import textwrap
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You are a software engineer with a terminal and file tools. Recreate the repository you are shown in your "
    "working directory with the bug fixed (same file paths), check it, then reply with a one-line summary."
)
INIT = "from .core import average_word_length, sentence_count, top_words, word_count\n"

CORRECT = {
    "word_count": "def word_count(text):\n    return len(text.split())\n",
    "top_words": (
        "def top_words(text, k):\n"
        "    counts = {}\n"
        "    for w in text.lower().split():\n"
        "        w = w.strip('.,!?;:')\n"
        "        if w:\n"
        "            counts[w] = counts.get(w, 0) + 1\n"
        "    return sorted(counts, key=lambda w: (-counts[w], w))[:k]\n"
    ),
    "sentence_count": (
        "def sentence_count(text):\n"
        "    import re\n"
        "    return len([s for s in re.split(r'[.!?]+', text) if s.strip()])\n"
    ),
    "average_word_length": (
        "def average_word_length(text):\n"
        "    words = [w.strip('.,!?;:') for w in text.split()]\n"
        "    words = [w for w in words if w]\n"
        "    return round(sum(map(len, words)) / len(words), 2) if words else 0.0\n"
    ),
}
# bug id -> (function it breaks, the broken source, the issue report)
BUGGY = {
    "word_count": (
        "word_count",
        "def word_count(text):\n    return len(text.split(' '))\n",
        "word_count counts empty strings: two spaces or a newline give the wrong count",
    ),
    "top_words": (
        "top_words",
        CORRECT["top_words"].replace("(-counts[w], w)", "-counts[w]"),
        "top_words is not deterministic on ties: equal counts should be ordered alphabetically",
    ),
    "top_words_case": (
        "top_words",
        CORRECT["top_words"].replace("text.lower().split()", "text.split()"),
        "top_words counts 'The' and 'the' as different words; counting should ignore case",
    ),
    "sentence_count": (
        "sentence_count",
        CORRECT["sentence_count"].replace("[.!?]+", "[.]"),
        "sentence_count ignores sentences ending with ! or ?",
    ),
    "average_word_length": (
        "average_word_length",
        CORRECT["average_word_length"].replace("w.strip('.,!?;:')", "w"),
        "average_word_length counts punctuation as letters",
    ),
    "average_word_rounding": (
        "average_word_length",
        CORRECT["average_word_length"].replace(
            "round(sum(map(len, words)) / len(words), 2)", "sum(map(len, words)) // len(words)"
        ),
        "average_word_length truncates to a whole number; it should round to two decimals",
    ),
}
HELD_OUT_BUGS = {"top_words_case", "average_word_rounding"}  # eval asks for fixes training never shows
TEXTS = [
    "The cat sat.  The cat ran! Did the dog see it?",
    "One fish, two fish. Red fish, blue fish!",
    "Hello world.\nHello again, world? Yes.",
    "a b c a b a. c c! b?",
    "Short. Very short! Really?  Yes indeed.",
    "Tea or coffee? Coffee, then tea. Then tea again!",
    "It rains.\n\nIt pours! It stops.",
    "zeta alpha beta alpha zeta zeta.",
    "Go! Go! Go now, go.",
    "Words, words; words: more words here.",
    "Is it done? Not yet. Almost!  Done.",
    "x y z. x y. x!",
]


def _reference(name: str, text: str, k: int = 3) -> object:
    scope: dict = {}
    exec(CORRECT[name], scope)  # our own reference code, never the model's
    return scope[name](text, k) if name == "top_words" else scope[name](text)


def _core(bug: str) -> str:
    function, source, _ = BUGGY[bug]
    return "\n\n".join(source if name == function else CORRECT[name] for name in CORRECT)


def _buggy_result(bug: str, text: str) -> object:
    function, source, _ = BUGGY[bug]
    scope: dict = {}
    exec(source, scope)  # our own buggy version, to know which texts expose the bug
    return scope[function](text, 3) if function == "top_words" else scope[function](text)


def _make_items(seed: int = 31) -> list[dict]:
    """Built-in dataset: one item per bug and text that exposes it. The issue quotes that text as its example; the
    hidden tests use three other texts, at least one of which exposes the bug too, and cover all four functions
    (the broken one's tests are the issue's, the others guard against regressions)."""
    rng = random.Random(seed)
    items = []
    for bug, (function, _, issue) in BUGGY.items():
        exposing = [t for t in TEXTS if _buggy_result(bug, t) != _reference(function, t)]
        for example in exposing:
            others = [t for t in exposing if t != example]
            first = rng.choice(others)
            texts = [first, *rng.sample([t for t in TEXTS if t not in (first, example)], 2)]
            tests = [
                {"call": name, "text": t, "expected": _reference(name, t), "issue": name == function}
                for t in texts
                for name in CORRECT
            ]
            call = f"{function}({example!r}{', 3' if function == 'top_words' else ''})"
            got, want = _buggy_result(bug, example), _reference(function, example)
            report = f"{issue}. Example: {call} returns {got!r}, expected {want!r}."
            items.append({"bug": bug, "core": _core(bug), "issue": report, "tests": tests})
    return items


HIDDEN = """
import json, sys
sys.path.insert(0, ".")
tests = json.loads({tests!r})
passed = issue_passed = 0
issue_total = sum(t["issue"] for t in tests)
try:
    import textstats
except BaseException as exc:
    print("import failed:", type(exc).__name__, exc)
    textstats = None
for t in tests if textstats else []:
    try:
        fn = getattr(textstats, t["call"])
        got = fn(t["text"], 3) if t["call"] == "top_words" else fn(t["text"])
        ok = got == t["expected"]
        passed += ok
        issue_passed += ok and t["issue"]
    except BaseException:
        pass
print("RESULT {nonce}", passed, len(tests), issue_passed, issue_total)
"""


class RepoTestsEnv(HermesAgentBaseEnv):
    """Repository bug fix graded by hidden tests in the rollout's own sandbox."""

    name = "repo-tests"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=10,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=60,
            group_size=4,
            total_steps=100,
            steps_per_eval=25,
            max_token_length=8192,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="repo-tests",
        )
        servers = [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="NousResearch/Hermes-3-Llama-3.1-8B",
                server_type="openai",
                api_key="x",
                health_check=False,
            )
        ]
        return config, servers

    async def setup(self) -> None:
        items = _make_items()
        random.Random(4).shuffle(items)
        self._eval_items = [i for i in items if i["bug"] in HELD_OUT_BUGS]
        self._items = [i for i in items if i["bug"] not in HELD_OUT_BUGS]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return textwrap.dedent(
            """\
            Repository `textstats`:

            textstats/__init__.py
            ```python
            {init}```

            textstats/core.py
            ```python
            {core}```

            Issue: {issue}

            Write the fixed repository (both files, same paths) in your working directory."""
        ).format(init=INIT, core=item["core"], issue=item["issue"])

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        nonce = secrets.token_hex(8)
        script = f"_hidden_{nonce}.py"
        ctx.write_file(script, HIDDEN.format(tests=json.dumps(item["tests"]), nonce=nonce))
        run = await ctx.aterminal(f"python3 {script}", timeout=30)
        match = re.search(rf"^RESULT {nonce} (\d+) (\d+) (\d+) (\d+)$", run.get("output", ""), re.MULTILINE)
        if not match:
            return 0.0
        passed, total, issue_passed, issue_total = map(int, match.groups())
        if total == 0 or issue_passed < issue_total:
            return 0.0  # the issue is not fixed: passing the other tests earns nothing
        return round(passed / total, 6)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
        for item in self._eval_items:
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": self.format_prompt(item)},
            ]
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=valid_names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run(messages)
            ctx = ToolContext(loop.task_id)
            try:
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        n = max(1, len(scores))
        metrics = {"eval/tests_passed": sum(scores) / n, "eval/resolved": sum(s == 1.0 for s in scores) / n}
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    RepoTestsEnv.cli()
