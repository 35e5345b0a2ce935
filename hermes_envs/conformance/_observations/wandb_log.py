"""What the env's ``wandb_log`` hands on to atroposlib's ``BaseEnv.wandb_log``: with a probe metric, and called as
atroposlib itself calls it (``wandb_log({})`` and ``wandb_log()``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._session import EnvSession
from hermes_envs.testing._wandb_spy import spy_base_wandb_log

#: The metric the wandb_log spy passes in, to see whether an override hands it on to the base class.
PROBE_METRIC = "hermes_conformance/probe"


@dataclass(frozen=True)
class WandbObservation:
    """``env.wandb_log({PROBE_METRIC: 1.0})``, then ``wandb_log({})`` and ``wandb_log()``, with a spy on the base.

    ``calls``: the metrics dicts that reached ``BaseEnv.wandb_log``; ``error``: what the first call raised;
    ``bare``: per atroposlib-style call, None when it reached the base, else what went wrong. Made after
    ``evaluate()`` so metrics an env keeps for its next wandb_log are included."""

    calls: tuple[Mapping[str, Any], ...]
    error: str | None
    bare: Mapping[str, str | None]

    @classmethod
    def build(cls, s: EnvSession) -> WandbObservation:
        if s.stand_in_note() is None:  # setup() failed: evaluate() cannot run, wandb_log still can
            s.observe(EvalObservation)
        error = None
        #: How atroposlib itself calls it (base.py: `await self.wandb_log({})` and `await self.wandb_log()`) ->
        #: None when that call reached BaseEnv.wandb_log, else what happened.
        bare: dict[str, str | None] = {}
        # A sync override calling super().wandb_log(...) drops the base's coroutine: HC704/HC705 name that
        # mistake, so Python's own "never awaited" warning about it is not printed as well.
        with spy_base_wandb_log() as calls, warnings.catch_warnings():
            warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
            try:
                s.run_env(lambda env: env.wandb_log({PROBE_METRIC: 1.0}), phase="wandb_log")
                for how, args in (("wandb_log({})", ({},)), ("wandb_log()", ())):
                    before = len(calls)
                    try:
                        s.run_env(lambda env, args=args: env.wandb_log(*args), phase="wandb_log")
                    except Exception as exc:
                        bare[how] = f"raised {type(exc).__name__}: {exc}"
                        continue
                    bare[how] = None if len(calls) > before else "never reached BaseEnv.wandb_log"
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
        return cls(calls=tuple(MappingProxyType(c) for c in calls), error=error, bare=MappingProxyType(bare))
