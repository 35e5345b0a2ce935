"""A script the agent SAVES, run on hidden tests: the agent writes ``solution.py`` in its sandbox (file or
terminal tool) and the reward runs tests the model never sees against that file. The item carries a one-line
reference solution, which the kit takes for a gold answer; saying it in text earns nothing (correctly).

Regression guard for HC407 (issue 29): "every gold probe scored 0" on a task whose answer is a saved file was
evidence about the kit's guess, a warning, never an error. Since the kit writes answer fields to the file the
prompt names (solution.py), the reference is proven, and HC415 checks that a file only printing markers earns
nothing (this reward runs asserts and reads the exit status).
"""

from __future__ import annotations

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig

DATA = [
    {
        "func": "add",
        "spec": "add(a, b) returns the sum",
        "reference": "def add(a, b): return a + b",
        "hidden_tests": "assert add(2, 3) == 5\nassert add(-1, 1) == 0",
    },
    {
        "func": "rev",
        "spec": "rev(s) returns s reversed",
        "reference": "def rev(s): return s[::-1]",
        "hidden_tests": "assert rev('abc') == 'cba'\nassert rev('') == ''",
    },
    {
        "func": "sq",
        "spec": "sq(n) returns n squared",
        "reference": "def sq(n): return n * n",
        "hidden_tests": "assert sq(4) == 16\nassert sq(-3) == 9",
    },
    {
        "func": "evens",
        "spec": "evens(xs) returns the even numbers of xs in order",
        "reference": "def evens(xs): return [x for x in xs if x % 2 == 0]",
        "hidden_tests": "assert evens([1, 2, 3, 4]) == [2, 4]",
    },
    {
        "func": "mx",
        "spec": "mx(xs) returns the largest element",
        "reference": "def mx(xs): return max(xs)",
        "hidden_tests": "assert mx([3, 9, 2]) == 9",
    },
]


class ScriptHiddenTestsEnv(HermesAgentBaseEnv):
    name = "script-hidden-tests"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=6,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:9001/v1",
                model_name="m",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        self.test, self.train = DATA[:2], DATA[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return (
            f"Save a Python file named solution.py in the working directory defining {item['spec']}. "
            "It will be imported and tested; say 'done' when the file is saved."
        )

    async def compute_reward(self, item, result, ctx):
        try:
            await ctx.aread_file("solution.py")
        except OSError:
            return 0.0  # nothing saved: no need to start Python
        script = f"import solution\nfrom solution import {item['func']}\n{item['hidden_tests']}\n"
        await ctx.awrite_file(".hidden_test.py", script)
        run = await ctx.aterminal("python3 .hidden_test.py", timeout=30)
        return 1.0 if run.get("exit_code") == 0 else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/pass_rate")


if __name__ == "__main__":
    ScriptHiddenTestsEnv.cli()
