"""The check catalogue: importing this package registers every check (one module per area)."""

from hermes_envs.conformance.checks import data, prompt, reward, structure, trajectory  # noqa: F401
