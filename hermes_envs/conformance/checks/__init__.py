"""The check catalogue: importing this package registers every check (one module per area; the rewards, HC4xx,
one per family: contract, determinism, controls, runtime)."""

from hermes_envs.conformance.checks import (  # noqa: F401
    answers,
    data,
    evaluate,
    fuzz,
    host,
    isolation,
    metamorphic,
    parsers,
    prompt,
    reward_contract,
    reward_controls,
    reward_determinism,
    reward_runtime,
    schemas,
    security,
    structure,
    trajectory,
)
