"""The settings of sandboxes (:class:`SandboxConfig`) and the environment their commands get.

Commands get an ALLOW-listed environment: a few harmless variables of the trainer (``PATH``, ``HOME``, ``LANG``,
``LC_*``, ``TERM``, ``TZ`` ...) plus the variables the env declares (``env_passthrough`` names, ``env`` values).
On the ``local`` backend, as upstream hermes-agent's local terminal does, commands also get the env's OWN
variables: those the process set or changed after it started (an env's ``os.environ["DATABASE_URL"] = ...`` in
setup, which its CLI tools read). Whatever the trainer's shell exported before is not passed unless allow-listed:
name-based scrubbing cannot know every secret's name. A secret never passes, however it was set or declared
(:data:`SECRET_NAMES` and :data:`SECRET_PATTERNS` by name, :func:`is_secret` by value; ``env`` values the env
config sets explicitly are its own choice and kept).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from hermes_envs.errors import ConfigError

__all__ = [
    "DEFAULT_ENV_ALLOW",
    "SECRET_NAMES",
    "SECRET_PATTERNS",
    "SandboxConfig",
    "is_secret",
    "sandbox_environment",
    "withheld_variables_note",
]

# Variables passed from the trainer to every command (shell patterns); an env adds its own via env_passthrough.
DEFAULT_ENV_ALLOW = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "USER", "LOGNAME", "SHELL")

#: The one table of secrets commands never get. Names: upstream hermes-agent's blocklist of provider, platform
#: and infrastructure credentials (its local terminal strips them; env_passthrough cannot re-allow them), and ours.
SECRET_NAMES = frozenset(
    {
        # upstream: model providers
        "OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_ORG_ID", "OPENAI_ORGANIZATION",
        "OPENROUTER_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_TOKEN", "LLM_MODEL",
        "GOOGLE_API_KEY", "VERTEX_CREDENTIALS_PATH", "GOOGLE_APPLICATION_CREDENTIALS", "DEEPSEEK_API_KEY",
        "MISTRAL_API_KEY", "GROQ_API_KEY", "TOGETHER_API_KEY", "PERPLEXITY_API_KEY", "COHERE_API_KEY",
        "FIREWORKS_API_KEY", "XAI_API_KEY", "HELICONE_API_KEY", "PARALLEL_API_KEY", "FIRECRAWL_API_KEY",
        "FIRECRAWL_API_URL", "AWS_BEARER_TOKEN_BEDROCK",
        # upstream: messaging gateways and their access control
        "TELEGRAM_BOT_TOKEN", "TELEGRAM_HOME_CHANNEL", "TELEGRAM_HOME_CHANNEL_NAME", "DISCORD_BOT_TOKEN",
        "DISCORD_HOME_CHANNEL", "DISCORD_HOME_CHANNEL_NAME", "DISCORD_REQUIRE_MENTION",
        "DISCORD_FREE_RESPONSE_CHANNELS", "DISCORD_AUTO_THREAD", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET", "SLACK_HOME_CHANNEL", "SLACK_HOME_CHANNEL_NAME", "SLACK_ALLOWED_USERS",
        "WHATSAPP_ENABLED", "WHATSAPP_MODE", "WHATSAPP_ALLOWED_USERS", "SIGNAL_HTTP_URL", "SIGNAL_ACCOUNT",
        "SIGNAL_ALLOWED_USERS", "SIGNAL_GROUP_ALLOWED_USERS", "SIGNAL_HOME_CHANNEL", "SIGNAL_HOME_CHANNEL_NAME",
        "SIGNAL_IGNORE_STORIES", "HASS_TOKEN", "HASS_URL", "EMAIL_ADDRESS", "EMAIL_PASSWORD", "EMAIL_IMAP_HOST",
        "EMAIL_SMTP_HOST", "EMAIL_HOME_ADDRESS", "EMAIL_HOME_ADDRESS_NAME", "HERMES_DASHBOARD_SESSION_TOKEN",
        "GATEWAY_ALLOWED_USERS", "GATEWAY_ALLOW_ALL_USERS", "GATEWAY_RELAY_ID", "GATEWAY_RELAY_SECRET",
        "GATEWAY_RELAY_DELIVERY_KEY",
        # upstream: code hosting and remote compute
        "GH_TOKEN", "GITHUB_TOKEN", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY_PATH", "GITHUB_APP_INSTALLATION_ID",
        "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "DAYTONA_API_KEY", "VERCEL_OIDC_TOKEN", "VERCEL_TOKEN",
        "VERCEL_PROJECT_ID", "VERCEL_TEAM_ID", "SUDO_PASSWORD",
        # ours: agent sockets and bare credential names
        "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "AUTH", "COOKIE", "WANDB_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    }
)  # fmt: skip
#: Name shapes of credentials (shell patterns, matched upper-cased), for the names no list can enumerate.
SECRET_PATTERNS = (
    "*_API_KEY", "*_APIKEY", "*_KEY", "*_KEY_*", "*_TOKEN", "*_TOKEN_*", "*SECRET*", "*PASSWORD*", "*PASSWD*",
    "*_PWD", "*_PAT", "*CREDENTIAL*", "*COOKIE*", "*WEBHOOK*", "*_AUTH", "*_AUTH_*", "AUXILIARY_*_BASE_URL",
    "*PRIVATE_KEY*",
)  # fmt: skip
#: Values that are credentials whatever they are called: a URL with a password, well-known key prefixes.
_SECRET_VALUE = re.compile(
    r"[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@|^(?:sk-|ghp_|gho_|ghs_|github_pat_|xox[abposr]-|AKIA|hf_|glpat-)",
    re.IGNORECASE,
)
#: The process environment when hermes-envs' sandboxes were first imported: what the trainer's shell exported.
#: Variables set or changed after this are the env's own.
_STARTED_WITH = dict(os.environ)


def is_secret(name: str, value: str = "") -> bool:
    """True when the variable ``name`` (holding ``value``) is a credential: by the table, by its name's shape,
    or by its value (a URL with a password, a provider key's prefix)."""
    upper = name.upper()
    if upper in SECRET_NAMES or _secret_name(upper):
        return True
    return bool(value) and _SECRET_VALUE.search(value) is not None


@functools.lru_cache(maxsize=512)
def _secret_name(upper: str) -> bool:
    return _allow_pattern(SECRET_PATTERNS).fullmatch(upper) is not None


@dataclass(frozen=True)
class SandboxConfig:
    """Settings shared by every sandbox created after :func:`~hermes_envs.tools.configure_sandboxes`.

    ``timeout`` is the default per-command timeout in seconds, ``max_timeout`` the largest one a caller may ask for;
    ``lifetime`` is how long (seconds) a sandbox may stay idle before the reaper cleans it up. Resource limits apply
    to every process the sandbox starts (``None`` = no limit); the defaults fit a real task (a test suite, a build,
    a package install) and stop a runaway one: ``cpu_seconds`` (CPU time per process), ``memory_mb`` (address
    space per process, 16 GiB), ``max_processes`` (RLIMIT_NPROC, 4096; not enforced for root), ``max_file_size_mb``
    (largest file a command or a file tool may write, 1 GiB), ``max_disk_mb`` (what the task's folder may hold,
    10 GiB: a command that goes past it is killed, a file-tool write refused). ``max_output_bytes`` caps the output kept per
    command. ``pid_namespace``: run commands in their own PID namespace where one can be had (the default; a
    warning says so once where none can). ``env_passthrough``: names (shell patterns) of trainer variables
    commands may see besides the default allow-list; ``env``: variables set for every command. ``prestart``:
    how many shells are kept started ahead of new tasks (each is used by one task only). ``image``: the Docker
    image of the ``docker`` backend. ``host_paths``: on ``local`` only, the model's file tools reach an absolute
    host path outside the task's folder (e.g. a ``/tmp/.../SOUL.md`` the prompt names), as upstream's local file
    tools do and as the task's shell can anyway; False keeps every file-tool path in the task's folder (the
    conformance kit sets False).
    """

    backend: str = "local"
    timeout: float = 120.0
    max_timeout: float = 600.0
    lifetime: float = 3600.0
    root: Path | None = None
    cpu_seconds: int | None = None
    memory_mb: int | None = 16384
    max_processes: int | None = 4096
    max_file_size_mb: int | None = 1024
    max_disk_mb: int | None = 10240
    max_output_bytes: int = 50_000
    network: bool = True  # bwrap/container only: False gives the sandbox its own empty network namespace
    pid_namespace: bool = True
    env_passthrough: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    prestart: int = 2
    image: str = "python:3.11-slim"
    host_paths: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.backend, str) or not self.backend:
            raise ConfigError(f"terminal_backend should be a backend name; got {self.backend!r}.")
        for name in ("timeout", "max_timeout", "lifetime"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"sandbox {name} should be a positive number of seconds; got {value!r}.")
        for name in ("cpu_seconds", "memory_mb", "max_processes", "max_file_size_mb", "max_disk_mb"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                raise ConfigError(f"sandbox limit {name} should be a positive int or None; got {value!r}.")
        if not isinstance(self.max_output_bytes, int) or self.max_output_bytes < 200:
            raise ConfigError(f"max_output_bytes should be an int >= 200; got {self.max_output_bytes!r}.")
        if (
            not isinstance(self.prestart, int)
            or isinstance(self.prestart, bool)
            or not 0 <= self.prestart <= 64
        ):
            raise ConfigError(f"sandbox prestart should be an int from 0 to 64; got {self.prestart!r}.")
        passthrough = (
            (self.env_passthrough,) if isinstance(self.env_passthrough, str) else self.env_passthrough
        )
        if not all(isinstance(n, str) and n for n in passthrough):
            raise ConfigError(
                f"env_passthrough should be a list of variable names; got {self.env_passthrough!r}. "
                "Fix: pass names such as ['MY_DATASET_DIR']."
            )
        object.__setattr__(self, "env_passthrough", tuple(passthrough))
        if not isinstance(self.env, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()
        ):
            raise ConfigError(f"sandbox env should map variable names to str values; got {self.env!r}.")
        object.__setattr__(self, "env", dict(self.env))
        if not isinstance(self.host_paths, bool):
            raise ConfigError(f"sandbox host_paths should be True or False; got {self.host_paths!r}.")

    @property
    def max_file_bytes(self) -> int | None:
        return None if self.max_file_size_mb is None else self.max_file_size_mb * 1024 * 1024


SETTING_NAMES = {f.name for f in fields(SandboxConfig)} - {"backend", "timeout", "lifetime", "root"}


def sandbox_environment(
    config: SandboxConfig,
    base: Mapping[str, str] | None = None,
    started_with: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables of ``base`` (default: ``os.environ``) that commands may see under ``config``: the allow-listed
    ones, on ``local`` also the env's own (set or changed since ``started_with``, default: the environment when
    this module was imported), never a secret; plus the config's ``env``."""
    source = os.environ if base is None else base
    initial = _STARTED_WITH if started_with is None else started_with
    allowed = _allow_pattern((*DEFAULT_ENV_ALLOW, *config.env_passthrough)).fullmatch
    own = config.backend == "local"
    env = {
        k: v
        for k, v in source.items()
        if (allowed(k) or (own and initial.get(k) != v)) and not is_secret(k, v)
    }
    env.update(config.env)
    return env


def withheld_variables_note(
    output: str, passed: Mapping[str, str], base: Mapping[str, str] | None = None
) -> str:
    """For a failed command: a note naming each variable its output mentions that the trainer process has but the
    command did not get (``passed`` is what it got), with why and the fix; "" when there is none."""
    source = os.environ if base is None else base
    names = sorted(
        k
        for k in source
        if k not in passed
        and len(k) >= 4
        and re.search(rf"(?<![A-Za-z0-9_]){re.escape(k)}(?![A-Za-z0-9_])", output)
    )
    if not names:
        return ""
    notes = []
    for name in names[:5]:
        if is_secret(name, source[name]):
            why = "it is a secret (never passed to commands)"
            fix = "give the command what it needs in the env's own config (SandboxConfig env / a file), not a credential"
        else:
            why = "it was in the trainer's environment before the env started, and is not allow-listed"
            fix = f"add it to terminal_env_passthrough (e.g. --env.terminal_env_passthrough '[\"{name}\"]')"
        notes.append(f"{name} is set in the trainer process but unset in this command: {why}. Fix: {fix}.")
    return "\n[hermes-envs] " + "\n[hermes-envs] ".join(notes)


@functools.lru_cache(maxsize=64)
def _allow_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled regex for the shell patterns (fnmatch per name and pattern cost a pre-started shell ~1 ms)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
