"""One environment class under test: import it offline, build it against the fake server, run checks on it.

An :class:`EnvSession` owns a private event loop, a :class:`FakeOpenAIServer` whose answers are switched per probe,
and a cache of typed, read-only observations (:meth:`EnvSession.observe`; the kinds live in
:mod:`hermes_envs.conformance._observations`), so each observation is made once however many checks read it and no
check writes what another reads. Checks learn about the env by its behaviour: training items are what
``get_next_item`` returns, eval items what ``evaluate()`` sends to the model, tools what the requests offer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hermes_envs.conformance._findings import Blocked, NotApplicable, Outcome, Skip
from hermes_envs.conformance._probes import Responder
from hermes_envs.conformance._schedule import CheckScheduler
from hermes_envs.conformance._settings import Settings
from hermes_envs.conformance._watchdog import LoopWatchdog
from hermes_envs.errors import ConfigError, EnvLoadError

__all__ = ["EnvSession", "EnvSettingError", "RoutingPolicy", "Settings"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Observation(Protocol[T_co]):
    """A kind of observation: a (frozen) class whose ``build(session)`` makes the session's one instance."""

    @classmethod
    def build(cls, session: EnvSession) -> T_co: ...


#: What an observation's build may raise and the cache keeps, to raise again for every later reader: a crash of the
#: env's code, or a Skip / NotApplicable saying why the observation cannot be made.
_KEPT_FAILURES = (Exception, Skip, NotApplicable)


class RoutingPolicy:
    """The fake server's policy: delegates to whichever responder the session has switched on."""

    def __init__(self) -> None:
        self.current: Responder | None = None

    def __call__(self, body: dict[str, Any]) -> Any:  # (what a Responder returns)
        if self.current is None:
            return {"content": "I don't know."}
        return self.current(body)


class EnvSession(CheckScheduler):
    """Everything the checks need to know about one env class, computed lazily and cached."""

    def __init__(
        self,
        path: str | Path,
        class_name: str | None = None,
        settings: Settings | None = None,
        *,
        own_process: bool = False,
    ) -> None:
        self.path = Path(path).resolve()
        #: True only in the contained worker, a process that exists to run this env: there (and only there) the
        #: session may move the process's working directory into a scratch folder (:meth:`scratch_cwd`).
        self.own_process = own_process
        self.class_name = class_name
        self.settings = settings or Settings()
        self.outcomes: dict[str, Outcome] = {}
        #: Observations by kind, each built once (:meth:`observe`): the built object, or the failure it raised.
        self._observations: dict[type, Any] = {}
        self._failures: dict[type, BaseException] = {}
        self._config: tuple[Any, Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: Any = None
        self._policy = RoutingPolicy()
        self._tmp: Path | None = None
        self._env: Any = None
        self.module: Any = None
        self.env_cls: type | None = None
        self.load_error: str | None = None
        #: Connections the network guard refused: (phase, attempt).
        self.blocked: list[tuple[str, Any]] = []
        #: Seconds spent per phase (import, construct, setup, items, evaluate, probes, rewards, ...).
        self.timings: dict[str, float] = {}
        self.phase = "import"
        #: The phase a SystemExit or KeyboardInterrupt raised by the env's code left (the contained run reports it).
        self.exit_phase = ""
        self._watchdog: Any = None
        #: (what happened, the check that reports it, the exception) when the env could not be constructed.
        self.construct_error: tuple[str, str, BaseException] | None = None
        #: (what happened, the exception) when the env's tools could not be resolved (HC802 reports it).
        self.tools_error: tuple[str, BaseException] | None = None
        self._stand_ins: Any = False  # False: not looked for yet
        #: What setup() raised offline (set by the SetupRun observation; HC201 reports it), or None.
        self.setup_error: BaseException | None = None

    @property
    def label(self) -> str:
        """``file.py::Class`` as shown in findings."""
        return f"{self.path.name}::{self.class_name}" if self.class_name else self.path.name

    # ------------------------------------------------------------------------------------------ lifecycle
    @contextlib.contextmanager
    def offline(self) -> Iterator[None]:
        """Hub/datasets offline, wandb off, and every connection beyond loopback refused with a message (child
        processes, forks and native code confined to a loopback-only network namespace where one can be made)."""
        from hermes_envs.testing.offline import block_network, offline_mode

        guard = block_network(isolate=True)
        try:
            with offline_mode(), guard:
                yield
        finally:
            self.blocked.extend((self.phase, attempt) for attempt in guard.blocked)

    @contextlib.contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Account the block's wall time to ``phase`` (and name the phase in network / stall records)."""
        previous, self.phase = self.phase, phase
        start = time.perf_counter()
        try:
            yield
        except BaseException as exc:
            if not isinstance(exc, Exception) and not self.exit_phase:
                self.exit_phase = phase  # SystemExit / KeyboardInterrupt from the env: the phase it left in
            raise
        finally:
            self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - start
            self.phase = previous

    @property
    def watchdog(self) -> Any:
        """The event-loop watchdog (HC408): stalls longer than ``blocking_seconds`` caused by the env's code."""
        if self._watchdog is None:
            self._watchdog = LoopWatchdog(self.settings.blocking_seconds)
        return self._watchdog

    def run_async(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run a coroutine on the session's private event loop, offline."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        with self.offline(), _contained_file_tools():
            coro = make()
            if timeout is not None:
                coro = asyncio.wait_for(coro, timeout)
            return self._loop.run_until_complete(coro)

    def settle(self, timeout: float = 30.0) -> None:
        """Let tasks earlier runs left on the loop (a rollout a failed gather orphaned, say) finish, for at most
        ``timeout`` seconds; none is cancelled, so an env's own background work keeps running."""
        if self._loop is None:
            return
        pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
        if pending:
            with self.offline():
                self._loop.run_until_complete(asyncio.wait(pending, timeout=timeout))

    def close(self) -> None:
        """Stop the fake server, close the loop, remove temp files; safe to call twice."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._loop is not None:
            # Close the env's HTTP clients on the loop they were made on, and let pending tasks finish, before the
            # loop goes: otherwise their finalizers later report "Event loop is closed".
            with contextlib.suppress(Exception):
                self._loop.run_until_complete(self._close_clients())
            with contextlib.suppress(Exception):
                pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
            self._loop = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    @contextlib.contextmanager
    def sandbox_leaks(self) -> Iterator[list[str]]:
        """Yields a list that, after the block, holds the task ids of sandboxes the block left behind (a ToolContext
        never cleaned up; HC603 reports them). They are removed then, so one leak is not reported twice."""
        from hermes_envs.tools import active_sandboxes, cleanup_sandbox

        before = set(active_sandboxes())
        leaked: list[str] = []
        try:
            yield leaked
        finally:
            leaked.extend(sorted(set(active_sandboxes()) - before))
            for task_id in leaked:
                cleanup_sandbox(task_id)

    async def _close_clients(self) -> None:
        """Close the openai clients of the env's servers (atroposlib never closes them)."""
        for server in getattr(getattr(self._env, "server", None), "servers", []) or []:
            client = getattr(server, "openai", None)
            if client is not None and hasattr(client, "close"):
                with contextlib.suppress(Exception):
                    await client.close()

    def __enter__(self) -> EnvSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def scratch_cwd(self) -> Iterator[Path]:
        """Yields the working directory the env's code sees in the block.

        In the contained worker (``own_process``) that is a fresh scratch folder mirroring the user's cwd
        (:func:`mirror_cwd`), so files the env writes relative to the cwd (an ``eval_results.jsonl`` of its own)
        land there and HC903 never reports them as writes into the user's folder. Anywhere else the process's
        cwd is left alone (a chdir is seen by every thread and every other test of the process): the env's
        relative writes then reach the real cwd, which only an uncontained run (``contain = false``, a test
        building an EnvSession) allows."""
        if not self.own_process:
            yield Path.cwd()
            return
        previous = os.getcwd()
        folder = mirror_cwd(Path(tempfile.mkdtemp(prefix="cwd-", dir=self.tmp)))
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(previous)

    @property
    def tmp(self) -> Path:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="hermes-conformance-"))
        return self._tmp

    @property
    def server(self) -> Any:
        """The fake model server, started on first use (strict: no default replies)."""
        if self._server is None:
            from hermes_envs.testing.fake_server import FakeOpenAIServer

            self._server = FakeOpenAIServer(policy=self._policy, strict=True)
            self._server.start()
        return self._server

    @contextlib.contextmanager
    def responding(self, responder: Responder) -> Iterator[list[Any]]:
        """Within the block the fake model answers with ``responder``; yields the requests made in the block."""
        previous = self._policy.current
        self._policy.current = responder
        start = len(self.server.calls)
        made: list[Any] = []
        try:
            yield made
        finally:
            # Model requests on both routes: /v1/chat/completions and the plain-text /v1/completions.
            made.extend(c for c in self.server.calls[start:] if c.route.rstrip("/").endswith("completions"))
            self._policy.current = previous

    # ------------------------------------------------------------------------------------------ the env
    def load(self) -> type[Any]:
        """Import the module and pick the env class (raising EnvLoadError with the author-facing message)."""
        if self.env_cls is not None:
            return self.env_cls
        if self.load_error is not None:
            raise EnvLoadError(self.load_error)
        from hermes_envs.env import find_env_classes, import_env_module
        from hermes_envs.env._causes import explain_no_env_class

        failed: list[Any] = []
        try:
            with self.timed("import"), self.offline():
                self.module = import_env_module(self.path, record=failed)
            classes = find_env_classes(self.module)
            if self.class_name:
                match = [c for c in classes if c.__name__ == self.class_name]
                if not match:
                    names = [c.__name__ for c in classes]
                    raise EnvLoadError(
                        f"{self.path.name} should define env class {self.class_name!r}; found {names}. "
                        "Fix: check the ::ClassName part of the path."
                    )
                classes = match
            hidden = None if classes else explain_no_env_class(self.path, vars(self.module), failed)
            if hidden is not None:
                raise EnvLoadError(hidden)
            if not classes:
                raise EnvLoadError(
                    f"{self.path.name} should define a class deriving from HermesAgentBaseEnv (or atroposlib's "
                    "BaseEnv); found none. Fix: define `class MyEnv(HermesAgentBaseEnv): ...` in this file."
                )
        except EnvLoadError as exc:
            self.load_error = str(exc)
            raise
        self.env_cls = classes[0]
        self.class_name = self.env_cls.__name__
        return self.env_cls

    def stand_ins(self) -> Any:
        """The stand-in items (a :class:`~hermes_envs.conformance._standins.StandIns`) of this run, or None: the
        ``items`` file when given, else the env's own built-in samples."""
        if self._stand_ins is False:
            from hermes_envs.conformance._standins import stand_ins

            try:
                self.load()
            except EnvLoadError:
                return None
            self._stand_ins = stand_ins(self.settings.items, self.module, self.env_cls)
        return self._stand_ins

    def stand_in_note(self) -> str | None:
        """When setup() failed and stand-in items serve instead of the env's own data: the note every finding made
        on them carries. None otherwise (setup() worked, or there is nothing to stand in)."""
        if self.setup_error is None:
            return None
        found = self.stand_ins()
        if found is None:
            return None
        return f"judged on stand-in items from {found.source}, because setup() did not complete offline (see HC201)"

    def config_init(self) -> tuple[Any, Any]:
        """``env_cls.config_init()``, cached."""
        if self._config is None:
            self._config = self.load().config_init()
        return self._config

    def env(self) -> Any:
        """The env instance, configured for the harness: offline tokenizer, no wandb, our fake server.

        When construction fails (``config_init`` or ``__init__`` raises), that one cause is kept: HC104 / HC109
        report it and every check that needs the instance is skipped naming it (:class:`Blocked`)."""
        if self._env is not None:
            return self._env
        if self.construct_error is not None:
            raise Blocked("the env instance", self.construct_error[0], self.construct_error[1])
        try:
            self.load()
        except EnvLoadError:
            raise Blocked("the env class", "the module did not give one", "HC101/HC102") from None
        try:
            return self._construct()
        except EnvSettingError as exc:
            # The run's own --env.* setting, not the env's mistake: HC109 reports it as that.
            self.construct_error = (f"the run's env settings were rejected: {exc}", "HC109", exc)
            raise Blocked("the env instance", self.construct_error[0], "HC109") from None
        except Exception as exc:
            from hermes_envs.conformance._sites import author_site

            site = author_site(exc, self.path)
            text = f"{type(exc).__name__}: {exc}" + (f" (at {site})" if site else "")
            reported_by = "HC109" if self._config is not None else "HC104"
            what = "config_init() raised" if reported_by == "HC104" else f"{self.class_name}.__init__ raised"
            abstract = sorted(getattr(self.env_cls, "__abstractmethods__", ()) or ())
            if isinstance(exc, TypeError) and abstract and "abstract" in str(exc):
                # One cause, one finding: HC103 names the unimplemented methods; HC109 does not repeat it.
                reported_by = "HC103"
                text = f"{self.class_name} leaves {', '.join(abstract)} unimplemented, so it cannot be instantiated"
                what = "the class is abstract:"
            self.construct_error = (f"{what} {text}", reported_by, exc)
            raise Blocked("the env instance", self.construct_error[0], reported_by) from None

    def _construct(self) -> Any:
        from atroposlib.envs.server_handling.server_manager import APIServerConfig

        from hermes_envs.testing.offline import offline_tokenizer_path
        from hermes_envs.testing.retries import disable_client_retries

        env_cls = self.load()
        with self.timed("config_init"):
            config, _servers = self.config_init()
        overrides: dict[str, Any] = {
            "tokenizer_name": offline_tokenizer_path(),
            "use_wandb": False,
            "data_path_to_save_groups": None,
            "data_dir_to_save_evals": str(self.tmp / "evals"),
            "group_size": self.settings.group_size,
            "ensure_scores_are_not_same": False,
            "terminal_host_paths": False,  # under the kit the file tools never reach the host's own files
        }
        fields = type(config).model_fields
        if self.settings.env:
            config = _with_env_settings(config, self.settings.env)
        config = config.model_copy(update={k: v for k, v in overrides.items() if k in fields})
        if "max_agent_turns" in fields:
            config = config.model_copy(update={"max_agent_turns": min(config.max_agent_turns, 6)})
        server_configs = [
            APIServerConfig(
                base_url=self.server.base_url,
                api_key="hermes-conformance",
                model_name="fake",
                server_type="openai",
                health_check=False,
                timeout=60,
            )
        ]
        with self.timed("construct"), self.offline():
            self._env = env_cls(config, server_configs, slurm=False, testing=False)
        disable_client_retries(getattr(self._env, "server", None))
        return self._env

    def run_env(
        # (``Callable[..., ...]``: callers bind their values as lambda defaults and pass only the env)
        self,
        make: Callable[..., Awaitable[T]],
        timeout: float = 120.0,
        phase: str | None = None,
    ) -> T:
        """Run ``make(env)`` on the loop with atroposlib's retries made fast, timed under ``phase``.

        The event loop is watched meanwhile (HC408), so a stall by the env's code is recorded with its phase.
        """
        from hermes_envs.testing.retries import fast_retries

        env = self.env()
        phase = phase or self.phase
        with self.timed(phase), fast_retries():
            return self.run_async(lambda: self.watchdog.watch(phase, make(env)), timeout=timeout)

    def is_hermes_env(self) -> bool:
        """True when the env follows the agent contract (format_prompt + compute_reward(item, result, ctx))."""
        cls = self.load()
        return callable(getattr(cls, "format_prompt", None)) and callable(
            getattr(cls, "compute_reward", None)
        )

    def tools(self) -> tuple[list[dict], set[str]]:
        """The env's tools for a group (``_resolve_tools_for_group`` when it has one, else none).

        When resolving them raises (a toolset the kit lacks, say), that one cause is kept: HC802 reports it and the
        checks that need the tools are skipped naming it."""
        if self.tools_error is not None:
            raise Blocked("the env's tools", self.tools_error[0], "HC802")
        env = self.env()
        resolve = getattr(env, "_resolve_tools_for_group", None)
        if resolve is None:
            return [], set()
        try:
            schemas, names = resolve()
        except Exception as exc:
            self.tools_error = (f"_resolve_tools_for_group() raised {type(exc).__name__}: {exc}", exc)
            raise Blocked("the env's tools", self.tools_error[0], "HC802") from None
        return list(schemas or []), set(names or [])

    # ------------------------------------------------------------------------------------------ observations
    def observe(self, kind: type[Observation[T]]) -> T:
        """The session's ``kind`` observation (a training scan, the evaluate() run, the scored probes, ...): built
        by ``kind.build(self)`` on first use, then the same read-only object for every check that asks.

        A build that raises is kept too and raised again for every later reader, so an observation is attempted
        once per session whichever check asks first."""
        if kind in self._observations:
            return self._observations[kind]
        if kind in self._failures:
            raise self._failures[kind]
        try:
            built = kind.build(self)
        except _KEPT_FAILURES as exc:
            self._failures[kind] = exc
            raise
        self._observations[kind] = built
        return built


def mirror_cwd(folder: Path) -> Path:
    """``folder`` with every entry of the current working directory linked into it, so code run there reads the
    user's relative files (``data/eval.jsonl``) while the files it creates land in ``folder`` (writes into a linked
    folder still reach the real one)."""
    try:
        entries = list(os.scandir(os.getcwd()))
    except OSError:
        return folder
    for entry in entries:
        try:
            (folder / entry.name).symlink_to(entry.path, target_is_directory=entry.is_dir())
        except OSError:  # a name we cannot link (permissions, odd filesystems): reads of it fail as before
            pass
    return folder


class EnvSettingError(ConfigError):
    """A ``--env.KEY VALUE`` setting of the run that the env's config rejects: the run's mistake, not the env's, so
    it ends the run as a usage error instead of becoming a finding."""


def _with_env_settings(config: Any, env: dict[str, Any]) -> Any:
    """``config`` with the run's ``--env.KEY VALUE`` settings applied and validated, as ``process`` applies them."""
    fields = type(config).model_fields
    unknown = sorted(set(env) - set(fields))
    if unknown:
        raise EnvSettingError(
            f"--env.{unknown[0]} (a setting of this run, not of the env) should name a field of "
            f"{type(config).__name__}; it has no such field. Fields: {', '.join(sorted(fields))}. Fix: correct "
            "the name on the command line (or under env in [tool.hermes-conformance] / the --config file)."
        )
    try:
        return type(config).model_validate({**config.model_dump(), **env})
    except Exception as exc:
        raise EnvSettingError(
            f"the run's env settings {env} should be valid values of {type(config).__name__}; {exc}. Fix: correct "
            "the value on the command line."
        ) from None


@contextlib.contextmanager
def _contained_file_tools() -> Iterator[None]:
    """Sandboxes made while the kit runs the env keep absolute paths in the task's folder (``host_paths`` off).

    A HermesAgentBaseEnv gets that from its config (the kit's overrides); an env that is not one (a raw atroposlib
    env calling the tools or ToolContext itself) would otherwise get the process default, which reaches the host's
    files on ``local``. An env's own entry points still set their own settings inside this.
    """
    import dataclasses

    from hermes_envs.tools.sandbox import sandbox_config, using_config

    current = sandbox_config()
    if not current.host_paths:
        yield
        return
    with using_config(dataclasses.replace(current, host_paths=False)):
        yield
