"""The env class under test: import its module offline, construct it against the harness's fake server, resolve its
tools. Each step runs once; a failure is kept as a typed record (:class:`ConstructFailure`, :class:`ToolsFailure`)
that one check reports while every other check that needs the step is skipped naming it (:class:`Blocked`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from hermes_envs.conformance._findings import Blocked
from hermes_envs.conformance._harness import Harness
from hermes_envs.conformance._standins import StandIns
from hermes_envs.errors import ConfigError, EnvLoadError

__all__ = ["ConstructFailure", "EnvSettingError", "EnvUnderTest", "ToolsFailure"]

T = TypeVar("T")


@dataclass(frozen=True)
class ConstructFailure:
    """Why the env could not be constructed: ``what`` happened, the check that ``reported_by`` it (HC103 / HC104 /
    HC109), and the exception."""

    what: str
    reported_by: str
    exc: BaseException


@dataclass(frozen=True)
class ToolsFailure:
    """Why the env's tools could not be resolved (HC802 reports it): ``what`` happened and the exception."""

    what: str
    exc: BaseException


class EnvSettingError(ConfigError):
    """A ``--env.KEY VALUE`` setting of the run that the env's config rejects: the run's mistake, not the env's, so
    it ends the run as a usage error instead of becoming a finding."""


class EnvUnderTest:
    """One env class: its module, class, config, instance and tools, each made on first use through ``harness``."""

    def __init__(self, path: str | Path, class_name: str | None, harness: Harness) -> None:
        self.path = Path(path).resolve()
        self.class_name = class_name
        self.harness = harness
        self.module: ModuleType | None = None
        self.env_cls: type | None = None
        self.load_error: str | None = None
        self.construct_error: ConstructFailure | None = None
        self.tools_error: ToolsFailure | None = None
        #: What setup() raised offline (set by the SetupRun observation; HC201 reports it), or None.
        self.setup_error: BaseException | None = None
        self.config: tuple[Any, Any] | None = None
        self._env: Any = None
        self._others: list[Any] = []  # further instances (another()), whose clients close with the session's
        self._stand_ins: StandIns | None | bool = False  # False: not looked for yet

    @property
    def label(self) -> str:
        """``file.py::Class`` as shown in findings."""
        return f"{self.path.name}::{self.class_name}" if self.class_name else self.path.name

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
            with self.harness.timed("import"), self.harness.offline():
                module = self.module = import_env_module(self.path, record=failed)
            classes = find_env_classes(module)
            if self.class_name:
                match = [c for c in classes if c.__name__ == self.class_name]
                if not match:
                    names = [c.__name__ for c in classes]
                    raise EnvLoadError(
                        f"{self.path.name} should define env class {self.class_name!r}; found {names}. "
                        "Fix: check the ::ClassName part of the path."
                    )
                classes = match
            hidden = None if classes else explain_no_env_class(self.path, vars(module), failed)
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

    def stand_ins(self) -> StandIns | None:
        """The stand-in items of this run, or None: the ``items`` file when given, else the env's own samples."""
        if self._stand_ins is False:
            from hermes_envs.conformance._standins import stand_ins

            try:
                self.load()
            except EnvLoadError:
                return None
            self._stand_ins = stand_ins(self.harness.settings.items, self.module, self.env_cls)
        return self._stand_ins if isinstance(self._stand_ins, StandIns) else None

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
        if self.config is None:
            self.config = self.load().config_init()
        return self.config

    def env(self) -> Any:
        """The env instance, configured for the harness: offline tokenizer, no wandb, the fake server.

        When construction fails (``config_init`` or ``__init__`` raises), that one cause is kept: HC104 / HC109
        report it and every check that needs the instance is skipped naming it (:class:`Blocked`)."""
        if self._env is not None:
            return self._env
        if self.construct_error is not None:
            raise Blocked("the env instance", self.construct_error.what, self.construct_error.reported_by)
        try:
            self.load()
        except EnvLoadError:
            raise Blocked("the env class", "the module did not give one", "HC101/HC102") from None
        try:
            return self._construct()
        except EnvSettingError as exc:
            # The run's own --env.* setting, not the env's mistake: HC109 reports it as that.
            self.construct_error = ConstructFailure(
                f"the run's env settings were rejected: {exc}", "HC109", exc
            )
            raise Blocked("the env instance", self.construct_error.what, "HC109") from None
        except Exception as exc:
            from hermes_envs.conformance._sites import author_site

            site = author_site(exc, self.path)
            text = f"{type(exc).__name__}: {exc}" + (f" (at {site})" if site else "")
            reported_by = "HC109" if self.config is not None else "HC104"
            what = "config_init() raised" if reported_by == "HC104" else f"{self.class_name}.__init__ raised"
            abstract = sorted(getattr(self.env_cls, "__abstractmethods__", ()) or ())
            if isinstance(exc, TypeError) and abstract and "abstract" in str(exc):
                # One cause, one finding: HC103 names the unimplemented methods; HC109 does not repeat it.
                reported_by = "HC103"
                text = f"{self.class_name} leaves {', '.join(abstract)} unimplemented, so it cannot be instantiated"
                what = "the class is abstract:"
            self.construct_error = ConstructFailure(f"{what} {text}", reported_by, exc)
            raise Blocked("the env instance", self.construct_error.what, reported_by) from None

    def _construct(self) -> Any:
        self._env = self._new_instance()
        return self._env

    def another(self) -> Any:
        """A second instance of the env, configured as :meth:`env` (not set up): a run resumed from the first one's
        checkpoint (HC715). Its model clients are closed with the session's."""
        self.env()
        other = self._new_instance()
        self._others.append(other)
        return other

    def _new_instance(self) -> Any:
        from atroposlib.envs.server_handling.server_manager import APIServerConfig

        from hermes_envs.testing.offline import offline_tokenizer_path
        from hermes_envs.testing.retries import disable_client_retries

        env_cls = self.load()
        settings = self.harness.settings
        with self.harness.timed("config_init"):
            config, _servers = self.config_init()
        overrides: dict[str, Any] = {
            "tokenizer_name": offline_tokenizer_path(),
            "use_wandb": False,
            "data_path_to_save_groups": None,
            "data_dir_to_save_evals": str(self.harness.tmp / "evals"),
            "group_size": settings.group_size,
            "ensure_scores_are_not_same": False,
            "terminal_host_paths": False,  # under the kit the file tools never reach the host's own files
        }
        fields = type(config).model_fields
        if settings.env:
            config = _with_env_settings(config, settings.env)
        config = config.model_copy(update={k: v for k, v in overrides.items() if k in fields})
        if "max_agent_turns" in fields:
            config = config.model_copy(update={"max_agent_turns": min(config.max_agent_turns, 6)})
        server_configs = [
            APIServerConfig(
                base_url=self.harness.server.base_url,
                api_key="hermes-conformance",
                model_name="fake",
                server_type="openai",
                health_check=False,
                timeout=60,
            )
        ]
        with self.harness.timed("construct"), self.harness.offline():
            env = env_cls(config, server_configs, slurm=False, testing=False)
        disable_client_retries(getattr(env, "server", None))
        return env

    def run_env(
        # (``Callable[..., ...]``: callers bind their values as lambda defaults and pass only the env)
        self,
        make: Callable[..., Awaitable[T]],
        timeout: float = 120.0,
        phase: str | None = None,
        env: Any = None,
    ) -> T:
        """Run ``make(env)`` on the harness's loop with atroposlib's retries made fast, timed under ``phase``.

        The event loop is watched meanwhile (HC408), so a stall by the env's code is recorded with its phase. The call
        runs as the framework would run it (:func:`_as_the_framework_runs`): under the env's runtime, an evaluate()
        watched for rollouts that failed on the model server.
        """
        from hermes_envs.testing.retries import fast_retries

        env = self.env() if env is None else env
        harness = self.harness
        phase = phase or harness.phase
        with harness.timed(phase), fast_retries():
            return harness.run_async(
                lambda: harness.watchdog.watch(phase, _as_the_framework_runs(env, make(env))), timeout=timeout
            )

    def is_hermes_env(self) -> bool:
        """True when the env follows the agent contract (format_prompt + compute_reward(item, result, ctx))."""
        cls = self.load()
        return callable(getattr(cls, "format_prompt", None)) and callable(
            getattr(cls, "compute_reward", None)
        )

    def tools(self) -> tuple[list[dict[str, Any]], set[str]]:
        """The env's tools for a group (``_resolve_tools_for_group`` when it has one, else none).

        When resolving them raises (a toolset the kit lacks, say), that one cause is kept: HC802 reports it and the
        checks that need the tools are skipped naming it."""
        if self.tools_error is not None:
            raise Blocked("the env's tools", self.tools_error.what, "HC802")
        env = self.env()
        resolve = getattr(env, "_resolve_tools_for_group", None)
        if resolve is None:
            return [], set()
        try:
            schemas, names = resolve()
        except Exception as exc:
            self.tools_error = ToolsFailure(
                f"_resolve_tools_for_group() raised {type(exc).__name__}: {exc}", exc
            )
            raise Blocked("the env's tools", self.tools_error.what, "HC802") from None
        return list(schemas or []), set(names or [])

    async def close_clients(self) -> None:
        """Close the openai clients of the env's servers (atroposlib never closes them)."""
        import contextlib

        for env in (self._env, *self._others):
            for server in getattr(getattr(env, "server", None), "servers", []) or []:
                client = getattr(server, "openai", None)
                if client is not None and hasattr(client, "close"):
                    with contextlib.suppress(Exception):
                        await client.close()


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


async def _as_the_framework_runs(env: Any, call: Awaitable[T]) -> T:
    """Await ``call``, a call the kit makes on ``env``, as atroposlib's drivers run it on a HermesAgentBaseEnv: under
    the env's runtime (its sandbox settings, its model server for model-backed tools) and, when ``call`` is the env's
    ``evaluate()``, inside ``env.watching_evaluate()`` (eval rollouts that failed on the model server are counted in
    ``eval/api_errors`` and reported). Any other env's call is awaited as it is."""
    from hermes_envs.tools import EnvRuntime

    runtime = getattr(env, "runtime", None)
    if not isinstance(runtime, EnvRuntime):
        return await call
    evaluate_code = getattr(getattr(env, "evaluate", None), "__code__", None)
    watching = getattr(env, "watching_evaluate", None)
    if callable(watching) and evaluate_code is not None and getattr(call, "cr_code", None) is evaluate_code:
        with watching():
            return await call
    with runtime.bound():
        return await call
