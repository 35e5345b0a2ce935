"""HC109: __init__ raises a ConfigError (a backend it refuses); reported once, setup() and the parser are not blamed."""

from __future__ import annotations

from _arith import ArithBase

EXPECTED_FINDINGS = ["HC109"]


class ArithEnv(ArithBase):
    def __init__(self, config, server_configs, slurm=False, testing=False):
        from hermes_envs.errors import ConfigError

        raise ConfigError("terminal_backend should be one of ['local']; got 'modal'.")


if __name__ == "__main__":
    ArithEnv.cli()
