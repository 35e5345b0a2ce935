"""The check catalogue: importing this package registers every check (one module per area)."""

from hermes_envs.conformance.checks import (  # noqa: F401
    answers,
    data,
    evaluate,
    fuzz,
    isolation,
    parsers,
    prompt,
    reward,
    schemas,
    security,
    structure,
    trajectory,
)
