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


@check(
    "HC101",
    "imports-offline",
    "the module imports offline",
    why=(
        "The trainer imports the env before anything else; an import that needs the network fails on every "
        "offline node and in CI."
    ),
    fix=(
        "Move downloads and heavy work into setup(), with an offline fallback. The finding names the import that "
        "failed and whose it is: the env's own sibling module, a package to install, or a part of upstream's "
        "surface hermes-envs lacks (a gap of the kit, not yours). Meanwhile the checks with a static counterpart "
        "judge the source."
    ),
)
def imports_offline(s: EnvSession) -> list[Finding]:
    """A module that fails to import (syntax error, missing package, network or Hub access at import time)."""
    try:
        s.load()
    except EnvLoadError as exc:
        if s.module is None:
            message, _, fix = str(exc).partition("\nFix: ")
            return [Finding("HC101", message, fix or "make the module import offline.", subject=s.path.name)]
    return []


@check(
    "HC102",
    "env-class",
    "an environment class is defined",
    requires=("HC101",),
    why="Without a BaseEnv subclass there is nothing for atroposlib to run.",
    fix=(
        "Derive the env from HermesAgentBaseEnv (not from the config class). When the class exists but derives "
        "from a stand-in defined after a failed import, or sits under a flag (`if HERMES_AVAILABLE:`) that came "
        "out False, the finding names that import: make it succeed, and let a failed import raise."
    ),
)
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
    why=(
        "atroposlib awaits setup/get_next_item/compute_reward/evaluate and calls format_prompt directly; the "
        "wrong kind yields coroutine objects or TypeErrors mid-run."
    ),
    fix="`async def` for the four hooks, plain `def format_prompt`.",
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
    "HC104",
    "config-init-list",
    "config_init returns (config, [APIServerConfig, ...])",
    requires=("HC102",),
    why=(
        "A single APIServerConfig is taken as a baseline config: --openai.base_url and the api key are "
        "silently ignored and `process` talks to localhost:9004."
    ),
    fix="Return `config, [APIServerConfig(...)]` (a list).",
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


@check(
    "HC105",
    "name-set",
    "the env class sets `name`",
    severity=Severity.WARNING,
    requires=("HC102",),
    why="wandb runs, eval folders and process files are named after `name`; without it runs collide.",
    fix='Set `name = "my-env"` on the class.',
)
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
    why="`python env.py serve|process|evaluate` is how the env is launched; without cli() it does nothing.",
    fix='End the file with `if __name__ == "__main__": MyEnv.cli()`.',
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


@check(
    "HC107",
    "no-literal-key",
    "no provider API key written in the env's source",
    requires=("HC101",),
    why="A key in the source ships with every copy of the env and bills its author.",
    fix="Read keys from the environment (os.environ) or --openai.api_key; revoke the leaked key.",
)
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
    why=(
        "atroposlib calls token/health endpoints that hosted APIs do not have; the server is marked "
        "unhealthy and the run waits."
    ),
    fix="server_type='openai' and health_check=False for external APIs.",
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


@check(
    "HC109",
    "env-constructs",
    "the env class constructs from its own config_init()",
    requires=("HC104",),
    why=(
        "__init__ runs before anything else in every trainer process; if it raises with the env's own config, "
        "nothing runs, and every later symptom (setup, the parser) is the same one cause."
    ),
    fix="Make __init__ succeed offline with the config from config_init(); read services lazily.",
)
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
