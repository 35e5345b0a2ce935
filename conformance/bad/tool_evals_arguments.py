"""HC905: the env's calculator tool evaluates the model's expression with eval(), so one tool call such as
`__import__('os').environ.get('OPENAI_API_KEY')` returns the trainer's API key into the transcript."""

from _good import LetterCountEnv
from atroposlib.envs.base import APIServerConfig

from environments.hermes_base_env import HermesAgentEnvConfig
from hermes_envs.tools import registry

EXPECTED_FINDINGS = ["HC905"]


def arith_eval(expression: str) -> str:
    """Evaluate an arithmetic expression.

    Args:
        expression: For example 3 * (4 + 5).
    """
    try:
        return str(eval(expression))  # the mistake: the model's text run as Python, with builtins
    except Exception as exc:
        return f"error: {exc}"


class EvalToolEnv(LetterCountEnv):
    name = "tool-evals-arguments"

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config, servers = super().config_init()
        config.enabled_toolsets = ["calculator"]
        config.system_prompt = "You can use the arith_eval tool. End with 'Answer: <number>'."
        return config, servers

    async def setup(self) -> None:
        registry.tool(arith_eval, toolset="calculator")
        await super().setup()


if __name__ == "__main__":
    EvalToolEnv.cli()
