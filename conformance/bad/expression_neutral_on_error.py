"""HC413: the reward scores an expression it cannot evaluate a "neutral" 0.5 (meant for a hiccup of its own), but
every syntax error of the model lands there too. An unreadable reply then earns more than an honest wrong
expression (0.0), and training teaches the policy to emit broken code whenever it is unsure."""

from _good import ExpressionEnv, Unreadable, evaluate_expression, last_answer, last_fence

EXPECTED_FINDINGS = ["HC413"]


class NeutralOnErrorEnv(ExpressionEnv):
    name = "expression-neutral-on-error"

    async def compute_reward(self, item, result, ctx):
        source = last_fence(last_answer(result))
        if source is None:
            return 0.0
        try:
            value, used = evaluate_expression(source)
        except Unreadable:
            return 0.5  # could not evaluate it: neither right nor wrong
        return 1.0 if value == item["target"] and sorted(used.elements()) == sorted(item["numbers"]) else 0.0


if __name__ == "__main__":
    NeutralOnErrorEnv.cli()
