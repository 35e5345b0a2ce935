"""One environment class under test: import it offline, build it against the fake server, run checks on it.

:class:`EnvSession` is the facade the checks receive. It is composed of parts with one job each: the
:class:`~hermes_envs.conformance._harness.Harness` (event loop, fake server, network guard, temp folder, timings;
never the process's cwd), the :class:`~hermes_envs.conformance._env_under_test.EnvUnderTest` (load, construct,
tools, with typed failures), the :class:`~hermes_envs.conformance._observation_cache.ObservationCache` (each
observation made once however many checks read it, so no check writes what another reads) and the
:class:`~hermes_envs.conformance._schedule.CheckScheduler`. Checks learn about the env by its behaviour: training
items are what ``get_next_item`` returns, eval items what ``evaluate()`` sends to the model, tools what the requests
offer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hermes_envs.conformance._env_under_test import (
    ConstructFailure,
    EnvSettingError,
    EnvUnderTest,
    ToolsFailure,
)
from hermes_envs.conformance._findings import Outcome
from hermes_envs.conformance._harness import Harness, RoutingPolicy, mirror_cwd
from hermes_envs.conformance._observation_cache import ObservationCache
from hermes_envs.conformance._probes import Responder
from hermes_envs.conformance._schedule import CheckScheduler
from hermes_envs.conformance._settings import Settings
from hermes_envs.conformance._standins import StandIns
from hermes_envs.conformance._watchdog import LoopWatchdog

if TYPE_CHECKING:
    from hermes_envs.testing import BlockedAttempt, FakeOpenAIServer

__all__ = ["EnvSession", "EnvSettingError", "RoutingPolicy", "Settings", "mirror_cwd"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Observation(Protocol[T_co]):
    """A kind of observation: a (frozen) class whose ``build(session)`` makes the session's one instance."""

    @classmethod
    def build(cls, session: EnvSession) -> T_co: ...


class EnvSession:
    """Everything the checks need to know about one env class, computed lazily and cached."""

    def __init__(
        self,
        path: str | Path,
        class_name: str | None = None,
        settings: Settings | None = None,
        *,
        own_process: bool = False,
    ) -> None:
        self.settings = settings or Settings()
        self.harness = Harness(self.settings, own_process=own_process)
        self.under_test = EnvUnderTest(path, class_name, self.harness)
        self.observations = ObservationCache()
        self.scheduler = CheckScheduler(self)

    # ------------------------------------------------------------------------------------------ the env under test
    @property
    def path(self) -> Path:
        return self.under_test.path

    @property
    def class_name(self) -> str | None:
        return self.under_test.class_name

    @property
    def label(self) -> str:
        """``file.py::Class`` as shown in findings."""
        return self.under_test.label

    @property
    def module(
        self,
    ) -> Any:  # (a ModuleType once load() succeeded, None before: typed loosely as it always was)
        """The env's imported module."""
        return self.under_test.module

    @property
    def env_cls(self) -> type | None:
        return self.under_test.env_cls

    @property
    def load_error(self) -> str | None:
        return self.under_test.load_error

    @property
    def construct_error(self) -> ConstructFailure | None:
        """Why the env could not be constructed (HC103 / HC104 / HC109 report it), or None."""
        return self.under_test.construct_error

    @property
    def tools_error(self) -> ToolsFailure | None:
        """Why the env's tools could not be resolved (HC802 reports it), or None."""
        return self.under_test.tools_error

    @property
    def setup_error(self) -> BaseException | None:
        """What setup() raised offline (set by the SetupRun observation; HC201 reports it), or None."""
        return self.under_test.setup_error

    @setup_error.setter
    def setup_error(self, error: BaseException | None) -> None:
        self.under_test.setup_error = error

    def load(self) -> type[Any]:
        """Import the module and pick the env class (raising EnvLoadError with the author-facing message)."""
        return self.under_test.load()

    def stand_ins(self) -> StandIns | None:
        """The stand-in items of this run (the ``items`` file, else the env's own samples), or None."""
        return self.under_test.stand_ins()

    def stand_in_note(self) -> str | None:
        """The note findings made on stand-in items carry (setup() failed offline), or None."""
        return self.under_test.stand_in_note()

    def config_init(self) -> tuple[Any, Any]:
        """``env_cls.config_init()``, cached."""
        return self.under_test.config_init()

    def env(self) -> Any:
        """The env instance, configured for the harness (a construction failure is kept and raised as Blocked)."""
        return self.under_test.env()

    def run_env(
        self,
        make: Callable[..., Awaitable[T]],
        timeout: float = 120.0,
        phase: str | None = None,
        env: Any = None,
    ) -> T:
        """Run ``make(env)`` on the loop with atroposlib's retries made fast, timed under ``phase``, watched
        (``env``: another instance of the env, from :meth:`another_env`; the session's own by default)."""
        return self.under_test.run_env(make, timeout, phase, env)

    def another_env(self) -> Any:
        """A second instance of the env, configured like :meth:`env`, not set up (a resumed run, HC715)."""
        return self.under_test.another()

    def is_hermes_env(self) -> bool:
        """True when the env follows the agent contract (format_prompt + compute_reward(item, result, ctx))."""
        return self.under_test.is_hermes_env()

    def tools(self) -> tuple[list[dict[str, Any]], set[str]]:
        """The env's tools for a group (a resolution failure is kept and raised as Blocked)."""
        return self.under_test.tools()

    # ------------------------------------------------------------------------------------------ the harness
    @property
    def own_process(self) -> bool:
        return self.harness.own_process

    @property
    def blocked(self) -> list[tuple[str, BlockedAttempt]]:
        """Connections the network guard refused: (phase, attempt)."""
        return self.harness.blocked

    @property
    def timings(self) -> dict[str, float]:
        """Seconds spent per phase."""
        return self.harness.timings

    @property
    def phase(self) -> str:
        return self.harness.phase

    @property
    def exit_phase(self) -> str:
        """The phase a SystemExit or KeyboardInterrupt raised by the env's code left."""
        return self.harness.exit_phase

    @property
    def watchdog(self) -> LoopWatchdog:
        return self.harness.watchdog

    @property
    def tmp(self) -> Path:
        return self.harness.tmp

    @property
    def server(self) -> FakeOpenAIServer:
        return self.harness.server

    def offline(self) -> contextlib.AbstractContextManager[None]:
        return self.harness.offline()

    def timed(self, phase: str) -> contextlib.AbstractContextManager[None]:
        return self.harness.timed(phase)

    def run_async(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        return self.harness.run_async(make, timeout)

    def settle(self, timeout: float = 30.0) -> None:
        self.harness.settle(timeout)

    def sandbox_leaks(self) -> contextlib.AbstractContextManager[list[str]]:
        return self.harness.sandbox_leaks()

    def scratch_cwd(self) -> contextlib.AbstractContextManager[Path]:
        return self.harness.scratch_cwd()

    def responding(self, responder: Responder) -> contextlib.AbstractContextManager[list[Any]]:
        return self.harness.responding(responder)

    def close(self) -> None:
        """Stop the fake server, close the env's clients and the loop, remove temp files; safe to call twice."""
        self.harness.close(self.under_test.close_clients)

    def __enter__(self) -> EnvSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ observations
    def observe(self, kind: type[Observation[T]]) -> T:
        """The session's ``kind`` observation (a training scan, the evaluate() run, the scored probes, ...): built
        by ``kind.build(self)`` on first use, then the same read-only object for every check that asks; a build
        that raises is kept and raised again for every later reader."""
        return self.observations.get(kind, lambda: kind.build(self))

    # ------------------------------------------------------------------------------------------ checks
    @property
    def outcomes(self) -> dict[str, Outcome]:
        return self.scheduler.outcomes

    def selected(self) -> list[str]:
        """Ids of the checks this run executes (select / ignore applied)."""
        return self.scheduler.selected()

    def run(self, check_id: str) -> Outcome:
        """Run one check (its prerequisites first), caching the outcome."""
        return self.scheduler.run(check_id)

    def run_all(self) -> list[Outcome]:
        """Run every selected check; one failure never hides the others."""
        return self.scheduler.run_all()

    def prepare_pending(self) -> None:
        """Start the background work of the checks still to run, once the env class has loaded (a run that calls
        :meth:`run` check by check calls this after each one, as :meth:`run_all` does)."""
        self.scheduler.prepare_pending()

    def is_ignored(self, check_id: str) -> bool:
        """True when the run ignores ``check_id`` (settings or the env's conformance_ignore, unless forced)."""
        return self.scheduler.is_ignored(check_id)

    def env_ignores(self) -> dict[str, str]:
        """``conformance_ignore`` of the env class or module."""
        return self.scheduler.env_ignores()
