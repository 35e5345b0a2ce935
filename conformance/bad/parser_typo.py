"""HC801: tool_call_parser "hermes3" does not exist (the parser is "hermes"): every rollout with text crashes."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC801"]


class ParserTypoEnv(LetterCountEnv):
    name = "parser-typo"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        return config.model_copy(update={"tool_call_parser": "hermes3"}), servers


if __name__ == "__main__":
    ParserTypoEnv.cli()
