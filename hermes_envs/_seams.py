"""Every third-party (and interpreter) internal hermes-envs reaches into, in one table: the seams.

A seam is a place where we read, patch or rely on a name that its owner does not promise to keep: a private module,
a private attribute, a retry object inside a decorator. Each one is listed here with the code that uses it, why,
the versions it was checked against and what happens when it is missing (every user degrades, none crashes).
``tests/test_seams.py`` resolves every target against the installed versions, so an upgrade that removes one fails
a test naming the seam instead of silently changing behaviour; CI's openai 2.x leg runs it against that SDK too.

Public names we wrap for a while are not listed, as their owners promise them: the socket functions and methods
the network guard wraps (``testing/_network_guard.py``), ``os._exit`` as the contained worker's tracer reports it
(``conformance/_tracer.py``), and our own ToolContext's methods timed by the loop watchdog.

This module imports nothing: targets are strings, resolved only by :func:`resolve` (the test, a debugging user).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["SEAMS", "Seam", "resolve"]


@dataclass(frozen=True)
class Seam:
    """One internal we touch. ``target`` is ``module:attr.path`` (``module`` alone for a private module);
    ``instance_attr`` names an attribute that only instances of the target class carry; ``marker`` is the text that
    shows the use in ``used_in`` (default: the target's last name)."""

    target: str
    used_in: str
    why: str
    checked: str
    fallback: str
    instance_attr: str = ""
    marker: str = ""


SEAMS: tuple[Seam, ...] = (
    Seam(
        "openai._base_client",
        "hermes_envs/_http_client.py",
        "tell whether the installed SDK is built on httpx or httpx2, to hand it a client of the right module",
        "openai 2.24, 3.57",
        "httpx is assumed",
    ),
    Seam(
        "json.encoder:c_make_encoder",
        "hermes_envs/parsers/_json.py",
        "encode tool-call arguments with the C encoder directly (about 2x faster than json.dumps per call)",
        "CPython 3.10-3.13",
        "json.dumps (same output)",
    ),
    Seam(
        "concurrent.futures.thread:_shutdown",
        "hermes_envs/tools/backends/_workers.py",
        "know that interpreter exit has begun, so a pre-started shell (already dying) is not handed out",
        "CPython 3.10-3.13",
        "treated as not shutting down",
    ),
    Seam(
        "concurrent.futures.thread:ThreadPoolExecutor",
        "hermes_envs/tools/backends/_workers.py, hermes_envs/tools/_manager.py",
        "a shut-down executor is replaced instead of raising at the next submit",
        "CPython 3.10-3.13",
        "treated as running",
        instance_attr="_shutdown",
    ),
    Seam(
        "threading:_shutdown",
        "hermes_envs/cli.py (_exit)",
        "join non-daemon threads before the CLI's fast exit, as the interpreter's own exit does",
        "CPython 3.10-3.13",
        "a normal interpreter exit (slower, same result)",
    ),
    Seam(
        "atexit:_run_exitfuncs",
        "hermes_envs/cli.py (_exit)",
        "run atexit handlers (sandbox cleanup, log flush) before the CLI's fast exit",
        "CPython 3.10-3.13",
        "a normal interpreter exit (slower, same result)",
    ),
    Seam(
        "hypothesis.internal.conjecture.providers:_get_local_constants",
        "hermes_envs/conformance/checks/fuzz.py",
        "switch off hypothesis' scan of the user's modules for constants, so fuzz_seed alone fixes the search",
        "hypothesis 6.170",
        "the scan stays on (findings may vary with the loaded modules)",
    ),
    Seam(
        "hypothesis.internal.conjecture.providers:CONSTANTS_CACHE",
        "hermes_envs/conformance/checks/fuzz.py",
        "clear the constants cached during the kit's search, so a user's own hypothesis test gets its own back",
        "hypothesis 6.170",
        "as above",
    ),
    Seam(
        "hypothesis.internal.constants_ast:Constants",
        "hermes_envs/conformance/checks/fuzz.py",
        "the empty constants set the swapped hook returns",
        "hypothesis 6.170",
        "as above",
    ),
    Seam(
        "atroposlib.envs.server_handling.server_baseline:APIServer.chat_completion",
        "hermes_envs/testing/retries.py",
        "its tenacity Retrying object (``.retry``) is set to one attempt with no wait inside fast_retries()",
        "atroposlib 0.4",
        "retries keep atroposlib's waits (tests against failing fakes get slow, not wrong)",
    ),
    Seam(
        "tenacity:stop_after_attempt",
        "hermes_envs/testing/retries.py",
        "the stop policy fast_retries() installs",
        "tenacity 9",
        "none: tenacity is atroposlib's dependency",
    ),
    Seam(
        "atroposlib.envs.base:BaseEnv.wandb_log",
        "hermes_envs/testing/_wandb_spy.py",
        "swapped on the class while the kit watches what an env logs (HC70x), restored after",
        "atroposlib 0.4",
        "none: a public method of BaseEnv",
    ),
    Seam(
        "_pytest.config:Config",
        "hermes_envs/plugin.py",
        "give pytest-asyncio's asyncio_default_fixture_loop_scope its coming default through the ini cache "
        "(pytest has no public setter), so a user's run shows no deprecation warning",
        "pytest 8",
        "the warning shows (harmless)",
        marker="_inicache",
    ),
    Seam(
        "atroposlib.envs.base:BaseEnv.evaluate_log",
        "hermes_envs/conformance/checks/faults.py",
        "swapped on the class while HC708 and the cut-off checks record what evaluate() reports (metrics, and the "
        "samples as its seventh positional argument), restored after",
        "atroposlib 0.4",
        "the checks that need it are skipped, saying why",
    ),
    Seam(
        "pydantic:BaseModel.__pydantic_fields_set__",
        "hermes_envs/parsers/_calls.py",
        "tool-call objects are built by setting pydantic's slots directly (a third of a many-call reply's cost), "
        "used only while an import-time comparison with a validated object finds them identical",
        "pydantic 2.14",
        "every call is validated (slower, same objects)",
    ),
    Seam(
        "pydantic:BaseModel.__pydantic_extra__",
        "hermes_envs/parsers/_calls.py",
        "as above",
        "pydantic 2.14",
        "as above",
    ),
    Seam(
        "pydantic:BaseModel.__pydantic_private__",
        "hermes_envs/parsers/_calls.py",
        "as above",
        "pydantic 2.14",
        "as above",
    ),
    Seam(
        "huggingface_hub.constants:HF_HUB_OFFLINE",
        "hermes_envs/testing/offline.py",
        "read once at import: offline_mode() sets it too when the module is already imported, restored after",
        "huggingface_hub 2.4",
        "the environment variable alone (a module imported earlier stays online)",
    ),
    Seam(
        "huggingface_hub.constants:HF_HUB_DISABLE_TELEMETRY",
        "hermes_envs/testing/offline.py",
        "as above, for telemetry",
        "huggingface_hub 2.4",
        "as above",
    ),
    Seam(
        "datasets.config:HF_HUB_OFFLINE",
        "hermes_envs/testing/offline.py",
        "as above, datasets' own copy",
        "datasets 5.2",
        "as above",
    ),
    Seam(
        "datasets.config:HF_DATASETS_OFFLINE",
        "hermes_envs/testing/offline.py",
        "as above",
        "datasets 5.2",
        "as above",
    ),
    Seam(
        "atroposlib.envs.server_handling.server_manager:ServerManager",
        "hermes_envs/env/_base.py",
        "an extra attribute (hermes_tool_call_parser) on the env's ServerManager tells a loop the author builds "
        "which parser the env configured",
        "atroposlib 0.4",
        "the loop uses the hermes parser",
        marker="hermes_tool_call_parser",
    ),
    Seam(
        "atroposlib.envs.server_handling.server_manager:ServerManager",
        "hermes_envs/env/_base.py, hermes_envs/agent/loop.py",
        "an extra attribute (hermes_runtime) on the env's ServerManager gives a loop the author builds on it the "
        "env's runtime (sandbox settings, model endpoint) for its tool calls",
        "atroposlib 0.4",
        "such a loop's tools use the process defaults (the settings of the env built last)",
        marker="hermes_runtime",
    ),
    Seam(
        "atroposlib.envs.base:BaseEnv._run_evaluate",
        "hermes_envs/env/_base.py",
        "the `evaluate` subcommand's driver, overridden to run setup() and evaluate() under the env's runtime with "
        "the eval rollouts that failed on the model server reported",
        "atroposlib 0.4",
        "that subcommand's evaluate() loses the eval/api_errors report (its own loops still bind the env's runtime)",
    ),
    Seam(
        "atroposlib.envs.base:BaseEnv.env_step_checks",
        "hermes_envs/env/_base.py",
        "where `serve` starts an eval task (kept in eval_runner): overridden so that task is watched for eval "
        "rollouts that failed on the model server",
        "atroposlib 0.4",
        "evals during `serve` lose the eval/api_errors report (they still run under the env's runtime)",
    ),
)


def resolve(seam: Seam) -> Any:
    """The object ``seam.target`` names in the installed versions (raises ImportError/AttributeError when gone)."""
    module_name, _, path = seam.target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    return obj
