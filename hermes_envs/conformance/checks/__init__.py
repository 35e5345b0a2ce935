"""The check catalogue: importing this package registers every check (one module per area; the rewards, HC4xx,
one per family: contract, determinism, controls, runtime)."""

from hermes_envs.conformance.checks import (  # noqa: F401
    answers,
    cutoff,
    data,
    evaluate,
    failed_work,
    faults,
    fuzz,
    host,
    isolation,
    judge_faults,
    metamorphic,
    model_code,
    parity,
    parsers,
    prompt,
    reward_contract,
    reward_controls,
    reward_determinism,
    reward_runtime,
    saving,
    schemas,
    security,
    splits,
    structure,
    tool_secrets,
    tool_state,
    trajectory,
)

__all__: list[str] = []  # importing the package registers the checks; nothing here is imported by name
