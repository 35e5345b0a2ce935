"""What a conformance session observes of one env, made once per session however many checks read it.

Each kind is a frozen dataclass whose ``build(session)`` makes it; checks read it with
``session.observe(Kind)`` (built on first use, cached, the same object for every reader) and never write it:

- ``training``: :class:`SetupRun` (setup() once), :class:`TrainingScan` (get_next_item to the end of the cycle);
- ``evaluation``: :class:`EvalObservation` (evaluate() against a fake model); ``wandb_log``:
  :class:`WandbObservation` (what reaches atroposlib's wandb_log);
- ``rollouts``: :class:`ProbeTranscripts` (every probe through the real agent loop) and the helpers that run one;
- ``scoring``: :class:`ScoredProbes`, :class:`ItemControls`, :class:`EnvTranscripts`, :class:`Controls`,
  :class:`GoldProbes` (compute_reward on those rollouts, each a tuple of :class:`ScoredRollout`, which carries one
  tagged ``origin`` from ``origin``: :class:`ProbeOrigin`, :class:`GoldOrigin` ...);
- ``group``: :class:`CollectedGroup` (one collect_trajectories group); ``logs``: the log capture they share.
"""

from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._observations.group import CollectedGroup
from hermes_envs.conformance._observations.origin import (
    CheckOrigin,
    ControlOrigin,
    EnvOrigin,
    GoldOrigin,
    Origin,
    ProbeOrigin,
    TwinOrigin,
)
from hermes_envs.conformance._observations.rollouts import ProbeRun, ProbeTranscripts
from hermes_envs.conformance._observations.scoring import (
    Controls,
    EnvTranscripts,
    GoldProbes,
    ItemControls,
    ScoredProbes,
    ScoredRollout,
)
from hermes_envs.conformance._observations.training import SetupRun, TrainingScan
from hermes_envs.conformance._observations.wandb_log import WandbObservation

__all__ = [
    "CheckOrigin",
    "CollectedGroup",
    "ControlOrigin",
    "Controls",
    "EnvOrigin",
    "EnvTranscripts",
    "EvalObservation",
    "GoldOrigin",
    "GoldProbes",
    "ItemControls",
    "Origin",
    "ProbeOrigin",
    "ProbeRun",
    "ProbeTranscripts",
    "ScoredProbes",
    "ScoredRollout",
    "SetupRun",
    "TrainingScan",
    "TwinOrigin",
    "WandbObservation",
]
