"""Knobs of a conformance run, read from ``[tool.hermes-conformance]``, markers or the command line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Settings"]


@dataclass
class Settings:
    """Knobs of a conformance run (from ``[tool.hermes-conformance]``, markers or the CLI)."""

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    group_size: int = 2
    probe_items: int = 2
    #: HC406: the highest mean score a negative control (do nothing, refuse, echo, spam tools) may get.
    control_ceiling: float = 0.2
    #: A contained run in which no check finishes, and nothing is printed or traced, for this long is stopped as hung:
    #: the check that was running fails with the phase it was in, the others are reported as not run.
    hang_seconds: float = 900.0
    #: HC205: setup() taking longer than this is reported (a warning).
    setup_seconds: float = 30.0
    #: setup() is abandoned after this long (HC201 then reports the timeout).
    setup_timeout: float = 300.0
    #: HC408: the event loop blocked longer than this by the env's code is reported.
    blocking_seconds: float = 0.5
    #: HC601: how many different items run concurrently against one at a time.
    concurrency_items: int = 3
    #: Run the slow checks too (HC503: a one-step ``process`` run in a subprocess, a few seconds).
    slow: bool = False
    #: Run the env under test contained (a child process with its own mount, PID and network namespaces over an
    #: overlay of the host, see docs/architecture.md); false runs it in the kit's own process, uncontained.
    contain: bool = True
    #: With ``contain``: false runs the env's process without namespaces or overlay, traced only (its writes,
    #: processes and connections are recorded and judged, none held back), as on a host that has none.
    namespaces: bool = True
    #: HC412: how many transcripts the hypothesis search of the reward tries per gold and direction (the bound that
    #: makes one env give the same findings on a fast laptop and a loaded CI runner), its seed (the report names
    #: it, so a finding can be reproduced), and a safety cap in seconds for a very slow reward only.
    fuzz_seconds: float = 30.0
    fuzz_examples: int = 40
    fuzz_seed: int = 0
    #: Run the costlier oracles in full (--thorough / --hermes-thorough): HC413's relations on every proven item
    #: (not only the first), HC412's search with five times the examples, HC206 (the split in a fresh interpreter) and
    #: HC708 (evaluate() under a model-server outage), HC711 (evaluate() run again).
    thorough: bool = False
    #: Ids named on the command line (--hermes-select / --select): they run even if the env ignores them.
    forced: list[str] = field(default_factory=list)
    #: Recorded cassettes whose real-model replies also drive the reward probes. Default: every cassette in
    #: ``<env folder>/cassettes/<env file stem>/`` (where ``hermes-envs record`` writes).
    cassettes: list[str] | None = None
    #: Env config fields set as ``process --env.KEY VALUE`` would (``check --env.KEY VALUE``, ``--hermes-env-set``,
    #: the ``env:`` section of ``config``): e.g. a local ``dataset_name`` for an env whose data is on the Hub.
    env: dict[str, Any] = field(default_factory=dict)
    #: A YAML file as ``process --config`` takes it: its ``env:`` section fills ``env`` (``env`` wins).
    config: str | None = None
    #: A JSONL file of items (one JSON object a line) the dynamic checks run on when setup() cannot load the env's
    #: own data offline (their findings say so). Without it, the env's own built-in samples serve, if it has any.
    items: str | None = None
