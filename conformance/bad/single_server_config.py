"""HC104: config_init returns one APIServerConfig instead of a list, so --openai.base_url is ignored."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC104"]


class SingleServerEnv(LetterCountEnv):
    name = "single-server-config"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        return config, servers[0]


if __name__ == "__main__":
    SingleServerEnv.cli()
