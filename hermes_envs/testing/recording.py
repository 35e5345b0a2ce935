"""Run an env's real rollouts (its own ``collect_trajectories`` and agent loop) while recording or replaying a cassette.

:func:`run_rollouts` is shared by ``hermes-envs record`` (:mod:`hermes_envs.testing._record_command`), the
``recorded_rollouts`` fixture
and ``bench/replay.py``. It loads the env file offline (shipped tokenizer, no wandb), points it at the provider
(recording) or at the cassette (replay: the base URL and model come from the cassette's ``hermes:`` metadata and
nothing leaves the machine), runs ``items`` groups, and returns a :class:`RolloutRun`: rewards per item, transcripts,
tool errors, turns, tokens, and the :class:`~hermes_envs.testing.cassettes.CassetteSession` (misses, drift, lint).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_envs._chat import assistant_turns
from hermes_envs.errors import ConfigError

__all__ = [
    "Provider",
    "ProviderProbeError",
    "RolloutRun",
    "arun_rollouts",
    "default_cassette_for_env",
    "run_rollouts",
]

_REPLAY_BASE_URL = "http://replay.invalid/v1"


@dataclass(frozen=True)
class Provider:
    """Where recording sends requests: an OpenAI-compatible ``base_url``, a ``model`` and the key to use."""

    base_url: str
    model: str
    api_key: str = "x"
    #: The variable the key was read from, and whether it was set (a loopback provider may go without).
    api_key_env: str = ""
    key_set: bool = True

    @property
    def key_note(self) -> str:
        """What to tell the user up front when the key variable is unset (empty when it is set)."""
        if self.key_set:
            return ""
        return (
            f"${self.api_key_env} is unset: sending the placeholder key 'x' to {self.base_url} (fine for a local "
            "server that needs no key)."
        )

    @classmethod
    def from_env(cls, base_url: str, model: str, api_key_env: str | None = "OPENAI_API_KEY") -> Provider:
        """The key is read from ``api_key_env`` (never from the command line); a loopback URL may go without."""
        key = os.environ.get(api_key_env or "", "")
        key_set = bool(key)
        if not key:
            from urllib.parse import urlsplit

            if (urlsplit(base_url).hostname or "") not in ("127.0.0.1", "localhost", "::1"):
                raise ConfigError(
                    f"the API key variable ${api_key_env} should be set to record against {base_url}; it is empty. "
                    "Fix: export it, or name another one with --openai.api_key-env VAR."
                )
            key = "x"
        return cls(
            base_url=base_url, model=model, api_key=key, api_key_env=api_key_env or "", key_set=key_set
        )

    def probe(self, cassette: Path | str | None = None) -> None:
        """Ask the provider for its models once before recording (``GET {base_url}/models``), so that a provider
        that is down or refuses the key fails in a second with the cause, not after every rollout's retries.

        Raises :class:`ProviderProbeError` when nothing answers or the answer is HTTP 401/403; any other answer
        (a provider without ``/models``) lets recording go on."""
        import httpx

        url = self.base_url.rstrip("/") + "/models"
        where = f"recording {cassette}" if cassette is not None else "recording"
        kept = (
            " The cassette was not written (the previous one is untouched)."
            if cassette is not None and Path(cassette).exists()
            else " Nothing was recorded."
        )
        try:
            r = httpx.get(url, headers={"Authorization": f"Bearer {self.api_key}"}, timeout=30)
        except httpx.HTTPError as e:
            raise ProviderProbeError(
                f"{where} should get a successful answer to every request; the provider got no answer to a first "
                f"probe (GET {url}: {type(e).__name__}: {e or 'no answer'}).{kept}\nFix: start the provider, or "
                "correct --openai.base_url / --hermes-base-url (it should end in /v1)."
            ) from None
        if r.status_code in (401, 403):
            detail = " ".join(r.text.split())[:160]
            if self.key_set:
                cause = f"the key in ${self.api_key_env} was refused"
                fix = f"put a valid key in ${self.api_key_env}, or name another variable with --openai.api_key-env VAR"
            else:
                cause = f"${self.api_key_env} is unset, so the placeholder key 'x' was sent"
                fix = f"export {self.api_key_env}=<your key>, or name another variable with --openai.api_key-env VAR"
            raise ProviderProbeError(
                f"{where} should get a successful answer to every request; the provider refused a first probe "
                f"(GET {url}: HTTP {r.status_code} {detail}): {cause}.{kept}\nFix: {fix}."
            )


class ProviderProbeError(ConfigError):
    """The provider did not answer, or refused the key, before anything was recorded."""


@dataclass
class RolloutRun:
    """What :func:`run_rollouts` observed."""

    env: str
    items: list[Any] = field(default_factory=list)
    rewards: list[list[float]] = field(default_factory=list)
    transcripts: list[list[list[dict[str, Any]]]] = field(default_factory=list)
    tool_errors: int = 0
    turns: int = 0
    tokens: int = 0
    failed_requests: int = 0
    seconds: float = 0.0
    cassette: Any = None

    @property
    def rollouts(self) -> int:
        return sum(len(r) for r in self.rewards)

    @property
    def mean_reward(self) -> float:
        flat = [x for r in self.rewards for x in r]
        return sum(flat) / len(flat) if flat else float("nan")

    def summary_lines(self) -> list[str]:
        lines = [
            f"{self.env}: {len(self.rewards)} item(s), {self.rollouts} rollout(s) in {self.seconds:.1f} s; "
            f"mean reward {self.mean_reward:.3f}; turns {self.turns}; tool errors {self.tool_errors}; "
            f"tokens {self.tokens}"
            + (f"; failed requests {self.failed_requests}" if self.failed_requests else "")
        ]
        c = self.cassette
        if c is not None:
            verb = f"recorded {c.recorded}" if c.recording else f"replayed {c.played}"
            kept = "; no change beyond ports, dates and ids: file kept as it was" if c.unchanged else ""
            tools = c.tool_calls_recorded if c.recording else c.tool_calls_played
            tools_note = f" and {tools} real tool call(s)" if tools else ""
            lines.append(f"cassette {c.path} ({c.record_mode}): {verb} request(s){tools_note}{kept}")
            if c.recording and c.old:
                lines.extend(["drift since the last recording:"] + [f"  {d}" for d in c.drift or ["(none)"]])
            if c.failures:
                lines.append(f"RECORDING FAILED: {c.failure_message()}")
            lines.extend(f"MISS [{i}] {m}" for i, m in enumerate(c.misses, start=1))
            lines.extend(f"SECRET {f}" for f in c.findings)
        return lines


def default_cassette_for_env(env_path: str | Path, name: str = "rollouts") -> Path:
    """``<env folder>/cassettes/<env file stem>/<name>.yaml`` — where ``hermes-envs record`` writes by default."""
    p = Path(env_path)
    return p.parent / "cassettes" / p.stem / f"{name}.yaml"


def _response_tokens(response: dict[str, Any]) -> int:
    from hermes_envs.testing._cassette_format import content_type, readable_body, reply_of

    body = (response.get("body") or {}).get("string")
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    turn = reply_of(readable_body(body, content_type(response.get("headers") or {})))
    usage = (turn or {}).get("usage") or {}
    return int(usage.get("total_tokens") or 0)


class _Tally:
    """Tokens and failures of the responses the cassette served or recorded since ``start``."""

    def __init__(self, cassette: Any) -> None:
        self.cassette = cassette
        self.seen: set[int] = set()
        self.tokens = 0
        self.failed = 0

    def update(self) -> None:
        c = self.cassette
        if c is None:
            return
        indices = set(c.play_counts) | set(range(c._loaded_count, len(c.data)))
        for i in sorted(indices - self.seen):
            self.seen.add(i)
            response = c.data[i][1]
            status = int((response.get("status") or {}).get("code", 200))
            if status >= 400:
                self.failed += 1
            else:
                self.tokens += _response_tokens(response)


def _load_env_class(env_path: Path, class_name: str | None) -> type:
    from hermes_envs.env import find_env_classes, import_env_module
    from hermes_envs.errors import EnvLoadError

    module = import_env_module(env_path)
    classes = find_env_classes(module)
    if class_name:
        classes = [c for c in classes if c.__name__ == class_name]
    if not classes:
        raise EnvLoadError(
            f"{env_path} should define an environment class{f' named {class_name}' if class_name else ''}."
        )
    if len(classes) > 1:  # recording the first silently records an env the author may not have meant
        names = ", ".join(c.__name__ for c in classes)
        raise EnvLoadError(
            f"{env_path} defines {len(classes)} environment classes ({names}); record runs one. Fix: name it "
            f"as `hermes-envs check` does, e.g. {env_path}::{classes[0].__name__}."
        )
    return classes[0]


def _default_group_size(env_cls: type[Any]) -> int | None:
    """The group size the env's own ``config_init()`` sets (what runs when none is given), or None."""
    try:
        size = getattr(env_cls.config_init()[0], "group_size", None)
    except Exception:  # the env's own error surfaces when it is built
        return None
    return size if isinstance(size, int) else None


def _build_env(env_cls: type[Any], provider: Provider, group_size: int | None, max_turns: int | None) -> Any:
    from atroposlib.envs.server_handling.server_manager import APIServerConfig

    from hermes_envs.testing.offline import offline_tokenizer_path

    config, _ = env_cls.config_init()
    fields = type(config).model_fields
    overrides: dict[str, Any] = {
        "tokenizer_name": offline_tokenizer_path(),
        "use_wandb": False,
        "data_path_to_save_groups": None,
        "ensure_scores_are_not_same": False,
    }
    if group_size:
        overrides["group_size"] = group_size
    if max_turns and "max_agent_turns" in fields:
        overrides["max_agent_turns"] = max_turns
    config = config.model_copy(update={k: v for k, v in overrides.items() if k in fields})
    servers = [
        APIServerConfig(
            base_url=provider.base_url,
            model_name=provider.model,
            api_key=provider.api_key,
            server_type="openai",
            health_check=False,
            timeout=120,
        )
    ]
    return env_cls(config, servers, slurm=False, testing=False)


async def arun_rollouts(
    env_path: str | Path,
    *,
    items: int = 1,
    provider: Provider | None = None,
    cassette: str | Path | None = None,
    record_mode: str = "none",
    group_size: int | None = None,
    max_turns: int | None = None,
    class_name: str | None = None,
    progress: bool = False,
    console: Any = None,
) -> RolloutRun:
    """Async :func:`run_rollouts` (for callers already in an event loop)."""
    from hermes_envs.testing.cassettes import CassetteError, load_cassette, use_cassette
    from hermes_envs.testing.offline import offline_mode
    from hermes_envs.testing.retries import disable_client_retries, fast_retries

    env_path = Path(env_path).resolve()
    recording = record_mode != "none"
    if provider is None:
        if recording:
            raise ConfigError(
                "recording needs a provider (base URL and model). Fix: pass --openai.base_url and "
                "--openai.model_name (CLI) or --hermes-base-url and --hermes-model (pytest)."
            )
        meta: dict[str, Any] = {}
        if cassette is not None and Path(cassette).exists():
            meta = load_cassette(cassette)[1].get("hermes") or {}
        provider = Provider(
            base_url=meta.get("base_url") or _REPLAY_BASE_URL, model=meta.get("model") or "replay"
        )
    if cassette is None and recording:
        raise CassetteError("recording needs a cassette path.")
    if cassette is not None and not recording and not Path(cassette).exists():
        raise CassetteError(
            f"cassette {cassette} should exist to replay {env_path.name}; it does not (nothing was sent anywhere). "
            f"Fix: record it once with `OPENAI_API_KEY=... hermes-envs record {env_path} --openai.base_url URL "
            f"--openai.model_name NAME --cassette {cassette}` (or `pytest --hermes-record --hermes-base-url URL "
            "--hermes-model NAME` for a test's cassette)."
        )

    run = RolloutRun(env=env_path.name)
    env_cls = _load_env_class(env_path, class_name)
    if recording:
        provider.probe(cassette)
    metadata = {
        "env": env_path.name,
        "class": env_cls.__name__,
        "base_url": provider.base_url,
        "model": provider.model,
        "items": items,
        "group_size": group_size or _default_group_size(env_cls),
        "recorded": _dt.date.today().isoformat(),
    }
    secrets = [provider.api_key] if provider.api_key and provider.api_key != "x" else []
    start = time.perf_counter()
    ctx: Any = (
        use_cassette(cassette, record_mode, secrets=secrets, metadata=metadata, brief_misses=True)
        if cassette is not None
        else contextlib.nullcontext()
    )
    try:
        with ctx as session, offline_mode(), fast_retries(1 if not recording else 3):
            run.cassette = session
            env = _build_env(env_cls, provider, group_size, max_turns)
            if not recording:
                disable_client_retries(getattr(env, "server", None))
            tally = _Tally(session.cassette if session is not None else None)
            try:
                # under the env's runtime, as atroposlib's process driver runs setup() and the groups
                with _Progress(items, progress, console, env_path.name) as bar, env.runtime.bound():
                    await env.setup()
                    for _ in range(items):
                        item = await env.get_next_item()
                        errors_before = sum(env.tool_error_buffer)
                        group, _backlog = await env.collect_trajectories(item)
                        run.items.append(item)
                        messages = list((group or {}).get("messages") or [])
                        run.rewards.append([float(s) for s in (group or {}).get("scores") or []])
                        run.transcripts.append(messages)
                        run.tool_errors += sum(env.tool_error_buffer) - errors_before
                        run.turns += sum(assistant_turns(conv) for conv in messages)
                        tally.update()
                        run.tokens, run.failed_requests = tally.tokens, tally.failed
                        bar.advance(run)
            finally:
                await _close_clients(env)
    finally:
        run.seconds = time.perf_counter() - start
    return run


async def _close_clients(env: Any) -> None:
    """Close the env's openai clients on the loop that used them (avoids 'Event loop is closed' at exit)."""
    for server in getattr(getattr(env, "server", None), "servers", []):
        client = getattr(server, "openai", None)
        if client is not None and hasattr(client, "close"):
            with contextlib.suppress(Exception):
                await client.close()


def run_rollouts(env_path: str | Path, **kwargs: Any) -> RolloutRun:
    """Run ``items`` groups of the env in ``env_path`` through its own ``collect_trajectories``, recording to or
    replaying from ``cassette`` (record mode ``none`` replays; ``rewrite`` re-records from scratch).

    Keyword arguments: ``items``, ``provider`` (:class:`Provider`; needed to record), ``cassette``, ``record_mode``,
    ``group_size``, ``max_turns``, ``class_name``, ``progress`` (a rich progress bar), ``console``.
    """
    return asyncio.run(arun_rollouts(env_path, **kwargs))


class _Progress:
    """A rich progress bar (items, turns, tokens, elapsed) — or nothing when disabled."""

    def __init__(self, total: int, enabled: bool, console: Any, label: str) -> None:
        self.enabled = enabled
        self.total = total
        self.console = console
        self.label = label
        self.progress: Any = None
        self.task: Any = None

    def __enter__(self) -> _Progress:
        if not self.enabled:
            return self
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("items · turns {task.fields[turns]} · tokens {task.fields[tokens]}"),
            TimeElapsedColumn(),
            console=self.console or Console(stderr=True),
        )
        self.progress.__enter__()
        self.task = self.progress.add_task(self.label, total=self.total, turns=0, tokens=0)
        return self

    def advance(self, run: RolloutRun) -> None:
        if self.progress is not None:
            self.progress.update(self.task, advance=1, turns=run.turns, tokens=run.tokens)

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.__exit__(*exc)
