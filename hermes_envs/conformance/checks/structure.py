"""HC1xx — the env file's structure: it imports offline, defines an env class, and its methods have the right kinds."""

from __future__ import annotations

import ast
import inspect

from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._secrets import SecretMatch, find_secrets
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._static import static
from hermes_envs.errors import EnvLoadError

ASYNC_METHODS = ("setup", "get_next_item", "compute_reward", "evaluate")
SYNC_METHODS = ("format_prompt",)


@check("HC101", "imports-offline", "the module imports offline")
def imports_offline(s: EnvSession) -> list[Finding]:
    """A module that fails to import (syntax error, missing package, network or Hub access at import time)."""
    try:
        s.load()
    except EnvLoadError as exc:
        if s.module is None:
            message, _, fix = str(exc).partition("\nFix: ")
            return [Finding("HC101", message, fix or "make the module import offline.", subject=s.path.name)]
    return []


@check("HC102", "env-class", "an environment class is defined", requires=("HC101",))
def env_class(s: EnvSession) -> list[Finding]:
    """A file with no environment class (or a ``::Name`` that does not exist), so nothing can run."""
    try:
        s.load()
    except EnvLoadError as exc:
        message, _, fix = str(exc).replace("\nFix: ", " Fix: ").partition(" Fix: ")
        return [Finding("HC102", message, fix or "define an env class in this file.", subject=s.path.name)]
    return []


@check(
    "HC103",
    "method-kinds",
    "setup/get_next_item/compute_reward/evaluate async, format_prompt sync",
    requires=("HC102",),
)
def method_kinds(s: EnvSession) -> list[Finding]:
    """Methods written sync where the base awaits them (or async where it calls them), or left unimplemented."""
    cls = s.load()
    findings = []
    abstract = sorted(getattr(cls, "__abstractmethods__", ()))
    if abstract:
        findings.append(
            Finding(
                "HC103",
                f"{cls.__name__} should implement every abstract method; got {', '.join(abstract)} missing.",
                f"add `async def {abstract[0]}(...)` (see the guide's Required Methods) to {cls.__name__}.",
                subject=cls.__name__,
            )
        )
    for name in ASYNC_METHODS:
        fn = getattr(cls, name, None)
        if fn is None or name in abstract:
            continue
        if not inspect.iscoroutinefunction(fn):
            findings.append(
                Finding(
                    "HC103",
                    f"{cls.__name__}.{name} should be `async def` (atroposlib awaits it); got a plain `def`.",
                    f"write `async def {name}(...)`.",
                    subject=f"{cls.__name__}.{name}",
                )
            )
    for name in SYNC_METHODS:
        fn = getattr(cls, name, None)
        if fn is not None and name not in abstract and inspect.iscoroutinefunction(fn):
            findings.append(
                Finding(
                    "HC103",
                    f"{cls.__name__}.{name} should be a plain `def` (the base calls it without await, so the "
                    "prompt would be a coroutine object); got `async def`.",
                    f"write `def {name}(self, item) -> str:`.",
                    subject=f"{cls.__name__}.{name}",
                )
            )
    return findings


@check(
    "HC104", "config-init-list", "config_init returns (config, [APIServerConfig, ...])", requires=("HC102",)
)
def config_init_list(s: EnvSession) -> list[Finding]:
    """``config_init`` returning a single server config: atroposlib then ignores --openai.base_url and hangs."""
    from atroposlib.envs.base import BaseEnvConfig
    from atroposlib.envs.server_handling.server_manager import APIServerConfig

    cls = s.load()
    try:
        returned = s.config_init()
    except Exception as exc:
        return [
            Finding(
                "HC104",
                f"{cls.__name__}.config_init() should return (config, [APIServerConfig]); "
                f"it raised {type(exc).__name__}: {exc}.",
                "make config_init a @classmethod that builds the config without network access.",
            )
        ]
    if not (isinstance(returned, tuple) and len(returned) == 2):
        return [
            Finding(
                "HC104",
                f"config_init() should return a (config, [APIServerConfig, ...]) pair; "
                f"got {type(returned).__name__}.",
                "return `config, [APIServerConfig(...)]`.",
            )
        ]
    config, servers = returned
    findings = []
    if not isinstance(config, BaseEnvConfig):
        findings.append(
            Finding(
                "HC104",
                f"the config from config_init() should be a BaseEnvConfig "
                f"(e.g. HermesAgentEnvConfig); got {type(config).__name__}.",
                "build it with HermesAgentEnvConfig(...).",
            )
        )
    if isinstance(servers, APIServerConfig) or not isinstance(servers, list):
        findings.append(
            Finding(
                "HC104",
                "config_init() should return a LIST of APIServerConfig; got "
                + (
                    f"a {type(servers).__name__} of {len(servers)}"
                    if isinstance(servers, (tuple, set, frozenset))
                    else f"a single {type(servers).__name__}"
                )
                + ". "
                "atroposlib treats a non-list as a baseline and talks to localhost:9004-9007, dropping base_url and "
                "api_key, so --openai.base_url has no effect and `process` hangs.",
                "wrap it in a list: `return config, [APIServerConfig(...)]`.",
            )
        )
    elif not servers or not all(isinstance(x, APIServerConfig) for x in servers):
        kinds = sorted({type(x).__name__ for x in servers}) or ["nothing"]
        findings.append(
            Finding(
                "HC104",
                f"config_init() should return a non-empty list of APIServerConfig; "
                f"got a list of {', '.join(kinds)}.",
                "return `config, [APIServerConfig(...)]`.",
            )
        )
    return findings


@check("HC105", "name-set", "the env class sets `name`", severity=Severity.WARNING, requires=("HC102",))
def name_set(s: EnvSession) -> list[Finding]:
    """An env without ``name``: wandb runs and process-mode files get a generic name that collides across envs."""
    cls = s.load()
    if not getattr(cls, "name", None):
        return [
            Finding(
                "HC105",
                f"{cls.__name__}.name should be set; got {getattr(cls, 'name', None)!r}.",
                f'add `name = "{cls.__name__.lower()}"` to the class.',
                Severity.WARNING,
            )
        ]
    return []


@check(
    "HC106",
    "main-cli",
    '`if __name__ == "__main__"` calls cli()',
    severity=Severity.WARNING,
    requires=("HC102",),
)
def main_calls_cli(s: EnvSession) -> list[Finding]:
    """A file that cannot be run as ``python env.py serve|process|evaluate`` because it never calls ``cli()``."""
    tree = ast.parse(s.path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            if any(isinstance(n, ast.Attribute) and n.attr == "cli" for n in ast.walk(node)):
                return []
    cls = s.load()
    return [
        Finding(
            "HC106",
            f"{s.path.name} should end with a `__main__` block calling {cls.__name__}.cli(); "
            "got none, so `python " + s.path.name + " process ...` does nothing.",
            f'add:\n    if __name__ == "__main__":\n        {cls.__name__}.cli()',
            Severity.WARNING,
        )
    ]


def literal_api_keys(source: str) -> list[tuple[int, str, SecretMatch]]:
    """(line, how it is passed, the key) for every provider key written as an ``api_key`` literal in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        pairs: list[tuple[str, ast.AST]] = []
        if isinstance(node, ast.Call):
            pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
        elif isinstance(node, ast.Dict):
            pairs = [
                (k.value, v)
                for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
        for name, value in pairs:
            if (
                "api_key" not in name.lower()
                or not isinstance(value, ast.Constant)
                or not isinstance(value.value, str)
            ):
                continue
            for match in find_secrets(value.value):
                out.append((value.lineno, name, match))
    return out


@check("HC107", "no-literal-key", "no provider API key written in the env's source", requires=("HC101",))
def no_literal_key(s: EnvSession) -> list[Finding]:
    """``APIServerConfig(api_key="sk-...")`` in the file: the key leaks with the env, and runs bill the author."""
    try:
        source = s.path.read_text(encoding="utf-8")
        keys = literal_api_keys(source)
    except (OSError, SyntaxError):
        return []
    return [
        Finding(
            "HC107",
            f"{name} should come from the environment, not the source; got a literal {match.kind} "
            f"{match.redacted} at {s.path.name}:{line}.",
            f'read it at run time: `{name}=os.environ.get("OPENAI_API_KEY")` (or pass --openai.api_key), then '
            "revoke the leaked key: it is in your git history.",
            subject=f"{s.path.name}:{line}",
        )
        for line, name, match in keys
    ]


static("HC107")(no_literal_key)  # it reads only the source: it runs as it is when the module does not import

_LOOPBACK = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]", "host.docker.internal"}


@check(
    "HC108",
    "external-openai-type",
    "external API servers use server_type 'openai' without health checks",
    severity=Severity.WARNING,
    requires=("HC104",),
)
def external_openai_type(s: EnvSession) -> list[Finding]:
    """An external API (OpenRouter, OpenAI, ...) configured as vllm/sglang/trl, or with health_check on: atroposlib
    then calls endpoints the provider does not have and marks the server unhealthy."""
    from urllib.parse import urlparse

    _config, servers = s.config_init()
    if not isinstance(servers, list):
        servers = [servers]
    findings = []
    for index, server in enumerate(servers):
        url = getattr(server, "base_url", None)
        host = (urlparse(url).hostname or "") if isinstance(url, str) else ""
        if not host or host in _LOOPBACK or host.startswith("127."):
            continue
        kind = getattr(server, "server_type", "openai")
        if kind != "openai":
            findings.append(
                Finding(
                    "HC108",
                    f"server {index} ({url}) is an external API and should use server_type='openai'; got {kind!r}, so "
                    "atroposlib calls token endpoints the provider does not serve.",
                    "set server_type='openai' (vllm / sglang are for servers you run yourself).",
                    Severity.WARNING,
                    subject=f"server {index}",
                )
            )
        if getattr(server, "health_check", False):
            findings.append(
                Finding(
                    "HC108",
                    f"server {index} ({url}) is an external API and should set health_check=False; got True, and "
                    "hosted APIs have no /health route, so atroposlib marks the server down and waits.",
                    "add health_check=False to that APIServerConfig.",
                    Severity.WARNING,
                    subject=f"server {index}",
                )
            )
    return findings


@check("HC109", "env-constructs", "the env class constructs from its own config_init()", requires=("HC104",))
def env_constructs(s: EnvSession) -> list[Finding]:
    """An ``__init__`` that raises with the config ``config_init`` returns (a backend it refuses, a missing
    environment variable, a service it contacts): nothing can run. Reported once here, as the cause; setup, the
    parser and every rollout check are skipped naming it instead of each blaming themselves."""
    from hermes_envs.conformance._findings import Blocked

    try:
        s.env()
    except Blocked:
        failure = s.construct_error
        if failure is None or failure.reported_by != "HC109":
            raise
        message, exc = failure.what, failure.exc
        fix = str(exc).partition("Fix: ")[2].strip() or (
            "make __init__ succeed offline with the config from config_init(); read keys and services lazily "
            "(in setup() or the first rollout), not in the constructor."
        )
        return [
            Finding(
                "HC109",
                f"{s.class_name}(config, server_configs) should construct with the config from config_init(); "
                f"{message.rstrip('.')}.",
                fix.rstrip(".") + ".",
                subject=f"{s.class_name}.__init__",
            )
        ]
    return []
