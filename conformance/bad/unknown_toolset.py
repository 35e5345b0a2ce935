"""HC802: the env enables a toolset hermes-envs lacks; one finding, the checks that need the tools are skipped."""

from __future__ import annotations

from _arith import ArithBase

EXPECTED_FINDINGS = ["HC802"]


class WebQAEnv(ArithBase):
    name = "s-webqa"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        config.enabled_toolsets = ["terminal", "honcho"]
        return config, servers


if __name__ == "__main__":
    WebQAEnv.cli()
