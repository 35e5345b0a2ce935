"""Every third-party internal we touch (hermes_envs._seams) still exists in the installed versions: an upgrade that
removes one fails here, naming the seam and the code that uses it, instead of silently changing behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs._seams import SEAMS, Seam, resolve

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("seam", SEAMS, ids=lambda s: s.target)
def test_the_seam_exists_in_the_installed_versions(seam: Seam) -> None:
    obj = resolve(seam)
    if seam.instance_attr:
        instance = obj()
        try:
            assert hasattr(instance, seam.instance_attr), f"{seam.target} instances lost {seam.instance_attr}"
        finally:
            getattr(instance, "shutdown", lambda: None)()


@pytest.mark.parametrize("seam", SEAMS, ids=lambda s: s.target)
def test_the_seam_is_used_where_the_table_says(seam: Seam) -> None:
    # A seam removed from the code leaves the table; a stale row would hide where the next one is.
    leaf = seam.marker or seam.target.replace(":", ".").split(".")[-1]
    files = [part.strip().split(" ")[0] for part in seam.used_in.split(",")]
    assert any(leaf in (ROOT / f).read_text() for f in files), f"{leaf} is not used in {seam.used_in}"


def test_retry_objects_are_found_on_atroposlib_server_classes() -> None:
    from hermes_envs.testing.retries import _retry_objects

    assert _retry_objects(), (
        "fast_retries() would find no tenacity object: tests against failing fakes get slow"
    )


# ------------------------------------------------------------------------------------- each seam applies, or falls back
# A seam "applies" when the code that uses it gets what it wants from the installed version; it "falls back" when
# the target is gone (simulated by removing it from the third-party module for the test): the user's run goes on,
# degraded as the table says, never with a crash.


def test_the_sdk_http_module_is_found_and_httpx_is_assumed_without_the_private_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from hermes_envs._http_client import sdk_http_module_name

    assert sdk_http_module_name() in ("httpx", "httpx2")
    monkeypatch.setitem(sys.modules, "openai._base_client", None)  # (an import of it now raises ImportError)
    assert sdk_http_module_name.__wrapped__() == "httpx"


def test_interpreter_exit_is_seen_and_a_missing_flag_reads_as_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from concurrent.futures import thread

    from hermes_envs.tools.backends._workers import spawner_gone

    assert thread._shutdown is False and spawner_gone() is False  # type: ignore[attr-defined]
    monkeypatch.setattr(thread, "_shutdown", True)
    assert spawner_gone() is True
    monkeypatch.delattr(thread, "_shutdown")
    assert spawner_gone() is False


@pytest.mark.parametrize("hook", ["threading._shutdown", "atexit._run_exitfuncs"])
def test_the_cli_fast_exit_returns_for_a_normal_exit_without_the_interpreters_hooks(
    hook: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from hermes_envs.cli import _exit_now

    module, _, name = hook.partition(".")
    monkeypatch.delattr(importlib.import_module(module), name)
    assert _exit_now(3) is None  # (with both hooks it would end this process)


def test_hypothesis_local_constants_are_off_in_the_block_and_restored_after() -> None:
    from hypothesis.internal.conjecture import providers

    from hermes_envs.conformance.checks.fuzz import _without_local_constants

    before = providers._get_local_constants
    with _without_local_constants():
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants is before


@pytest.mark.parametrize(
    "target",
    [
        "hypothesis.internal.conjecture.providers:_get_local_constants",
        "hypothesis.internal.conjecture.providers:CONSTANTS_CACHE",
        "hypothesis.internal.constants_ast:Constants",
    ],
)
def test_the_fuzz_search_runs_with_hypothesis_constants_when_a_hook_is_missing(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from hypothesis.internal.conjecture import providers

    from hermes_envs.conformance.checks.fuzz import _without_local_constants

    module, _, name = target.partition(":")
    monkeypatch.delattr(importlib.import_module(module), name)
    before = getattr(providers, "_get_local_constants", None)
    with _without_local_constants():  # another hypothesis version: the search keeps its constants
        assert getattr(providers, "_get_local_constants", None) is before


def test_the_evaluate_log_spy_records_and_is_removed_and_a_missing_method_skips_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from atroposlib.envs.base import BaseEnv

    from hermes_envs.conformance._findings import Skip
    from hermes_envs.conformance.checks.faults import _spy_base_evaluate_log

    original = BaseEnv.__dict__["evaluate_log"]
    metrics: list[object] = []
    samples: list[int] = []
    with _spy_base_evaluate_log(metrics, samples):
        assert BaseEnv.__dict__["evaluate_log"] is not original
    assert BaseEnv.__dict__["evaluate_log"] is original
    monkeypatch.delattr(BaseEnv, "evaluate_log")
    with pytest.raises(Skip, match="BaseEnv has no evaluate_log"):
        with _spy_base_evaluate_log(metrics, samples):
            pass


def test_tool_calls_are_built_directly_on_the_installed_pydantic() -> None:
    from hermes_envs.parsers import _calls

    # (without the slots, _DIRECT is False at import and every call is validated: the same objects, slower)
    assert _calls._DIRECT is True


def test_offline_mode_flips_the_imported_hub_flags_and_goes_on_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import huggingface_hub.constants as hub

    from hermes_envs.testing.offline import offline_mode

    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    with offline_mode():
        assert hub.HF_HUB_OFFLINE is True
    assert hub.HF_HUB_OFFLINE is False
    monkeypatch.delattr(hub, "HF_HUB_DISABLE_TELEMETRY")
    with offline_mode():  # a release without the flag: the environment variable alone
        assert hub.HF_HUB_OFFLINE is True


def test_the_ini_default_is_given_and_a_config_without_the_cache_is_left_alone() -> None:
    from hermes_envs.plugin import _quiet_dependencies

    class NoCache:  # a pytest whose Config keeps ini values elsewhere
        def getini(self, name: str) -> None:
            return None

    _quiet_dependencies(NoCache())  # type: ignore[arg-type]


def test_arguments_are_encoded_by_the_c_encoder_and_by_json_without_it() -> None:
    import json
    import subprocess
    import sys

    from hermes_envs.parsers import _json

    value = {"path": "é/a.py", "n": [1, 2.5, None, True]}
    assert _json._C_ENCODE is not None and _json.dumps(value) == json.dumps(value, ensure_ascii=False)
    code = (
        "import json, json.encoder; json.encoder.c_make_encoder = None\n"  # (a Python without the accelerator)
        "from hermes_envs.parsers import _json\n"
        "assert _json._C_ENCODE is None\n"
        f"print(_json.dumps({value!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == json.dumps(value, ensure_ascii=False)


def test_a_shut_down_tool_pool_is_replaced_and_a_pool_without_the_flag_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from hermes_envs.tools import SandboxManager

    manager = SandboxManager()
    pool = manager.executor()
    pool.shutdown()
    assert manager.executor() is not pool  # (upstream envs shut it down at the end of evaluate)
    manager.executor().shutdown()
    init = ThreadPoolExecutor.__init__

    def without_flag(self: ThreadPoolExecutor, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        del self._shutdown  # type: ignore[attr-defined]

    monkeypatch.setattr(ThreadPoolExecutor, "__init__", without_flag)
    other = SandboxManager()
    kept = other.executor()
    assert other.executor() is kept  # a Python whose executor lacks the flag: treated as running


def test_fast_retries_make_one_quick_attempt_and_a_server_module_without_retries_gives_none() -> None:
    import types

    from hermes_envs.testing.retries import _find_retry_objects, _retry_objects, fast_retries

    found = _retry_objects()
    before = [(r.stop, r.wait) for r in found]
    with fast_retries():
        assert all((r.stop, r.wait) != b for r, b in zip(found, before))
    assert [(r.stop, r.wait) for r in found] == before

    class APIServer:  # an atroposlib whose methods carry no tenacity object: fast_retries() changes nothing
        async def chat_completion(self) -> None: ...

    assert _find_retry_objects(types.SimpleNamespace(APIServer=APIServer)) == []


def test_the_env_tags_atroposlibs_server_manager_with_its_parser_and_a_loop_falls_back_to_hermes() -> None:
    from atroposlib.envs.server_handling.server_manager import ServerManager

    from hermes_envs.agent import HermesAgentLoop

    server = ServerManager.__new__(ServerManager)  # (no servers needed: only the attribute is tried)
    server.hermes_tool_call_parser = "mistral"  # type: ignore[attr-defined]  # as HermesAgentBaseEnv sets it
    assert HermesAgentLoop(server, [], []).tool_call_parser == "mistral"
    assert HermesAgentLoop(object(), [], []).tool_call_parser == "hermes"  # a server that refuses attributes
