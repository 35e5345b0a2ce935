"""HC107: a provider key pasted into config_init (it ships with the env and bills its author)."""

from _good import LetterCountEnv
from atroposlib.envs.server_handling.server_manager import APIServerConfig

EXPECTED_FINDINGS = ["HC107"]


class PastedKeyEnv(LetterCountEnv):
    name = "literal-api-key"

    @classmethod
    def config_init(cls):
        config, _ = super().config_init()
        server = APIServerConfig(
            base_url="http://localhost:8000/v1",
            model_name="hermes",
            server_type="openai",
            api_key="sk-or-v1-4f9a0c2e7b1d8e3a6c5b9f0d2e4a7c1b3d5f8e0a2c4b6d8f",
            health_check=False,
        )
        return config, [server]


if __name__ == "__main__":
    PastedKeyEnv.cli()
