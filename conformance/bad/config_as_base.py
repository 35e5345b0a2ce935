"""HC102: the class derives from the config (HermesAgentEnvConfig) instead of HermesAgentBaseEnv: no env class."""

from environments.hermes_base_env import HermesAgentEnvConfig

EXPECTED_FINDINGS = ["HC102"]


class WrongBaseEnv(HermesAgentEnvConfig):
    name: str = "wrong-base"

    async def setup(self) -> None:
        self.items = []


if __name__ == "__main__":
    print("nothing to run")
