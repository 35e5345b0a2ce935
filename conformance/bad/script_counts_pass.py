"""HC415: the reward runs a harness that prints PASS or FAIL per hidden test and counts the PASS lines in the
output. The model's solution.py runs in that same process and may print anything: a file that defines nothing
and prints PASS thirty times scores 1.0."""

from _good import ScriptHiddenTestsEnv

EXPECTED_FINDINGS = ["HC415"]


class CountsPassEnv(ScriptHiddenTestsEnv):
    name = "script-counts-pass"

    async def compute_reward(self, item, result, ctx):
        tests = [t for t in item["hidden_tests"].splitlines() if t.strip()]
        cases = "".join(
            f"try:\n    {t}\n    print('PASS')\nexcept Exception:\n    print('FAIL')\n" for t in tests
        )
        await ctx.awrite_file(".harness.py", f"from solution import *\n{cases}")
        run = await ctx.aterminal("python3 .harness.py", timeout=30)
        return min(1.0, str(run.get("output", "")).count("PASS") / len(tests))


if __name__ == "__main__":
    CountsPassEnv.cli()
