"""HC504: max_token_length=16, shorter than any rollout: atroposlib drops every group as too long."""

from __future__ import annotations

from _trivia import TriviaBase

EXPECTED_FINDINGS = ["HC504"]


class TriviaEnv(TriviaBase):
    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        config.max_token_length = 16
        return config, servers


if __name__ == "__main__":
    TriviaEnv.cli()
