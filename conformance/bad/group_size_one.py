"""HC504: group_size=1 with ensure_scores_are_not_same (the default): atroposlib drops every group."""

from __future__ import annotations

from _arith import ArithBase

EXPECTED_FINDINGS = ["HC504"]


class ArithEnv(ArithBase):
    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        config.group_size = 1
        return config, servers


if __name__ == "__main__":
    ArithEnv.cli()
