"""HC104: config_init returns the server configs as a tuple; atroposlib only takes a list, so a tuple counts as
a baseline config and --openai.base_url is ignored. The finding says "a tuple of 1", not "a single tuple"."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC104"]


class TupleServerEnv(LetterCountEnv):
    name = "tuple-server-config"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        return config, tuple(servers)


if __name__ == "__main__":
    TupleServerEnv.cli()
