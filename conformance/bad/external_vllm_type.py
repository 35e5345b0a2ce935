"""HC108: OpenRouter configured as server_type "vllm" (copied from a local setup) with the default health check."""

from _good import LetterCountEnv
from atroposlib.envs.server_handling.server_manager import APIServerConfig

EXPECTED_FINDINGS = ["HC108"]


class OpenRouterVllmEnv(LetterCountEnv):
    name = "external-vllm-type"

    @classmethod
    def config_init(cls):
        config, _ = super().config_init()
        server = APIServerConfig(
            base_url="https://openrouter.ai/api/v1",
            model_name="nousresearch/hermes-4-70b",
            server_type="vllm",
        )
        return config, [server]


if __name__ == "__main__":
    OpenRouterVllmEnv.cli()
