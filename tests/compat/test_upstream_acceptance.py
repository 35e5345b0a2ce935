"""Fixes found by running the real upstream env files unchanged on this framework (issue 17's acceptance run).

Each test uses our own env (tests/compat/envs) configured the way the upstream file that exposed the gap is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools.sandbox import configure_sandboxes

from .conftest import build, load_env_module


@pytest.fixture(autouse=True)
def _default_sandboxes() -> Iterator[None]:
    """Envs built here configure the process's sandboxes (a stand-in backend): put the defaults back after."""
    yield
    configure_sandboxes()


JUDGE = "- the joints absorb thermal growth (https://example.org/joints)\nCONFIDENCE: 90%\nDISSENT: false"


@pytest.mark.slow
async def test_council_toolset_is_offered_and_asks_the_envs_own_server(tmp_path: Path) -> None:
    # upstream's research env enables ["web", "file", "terminal", "council"] and lets the agent call the council
    mod = load_env_module("council_reward_env")
    script = {
        "scripts": {
            "^Research this question": {
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "council_gate", "arguments": {"action": "publish", "risk_level": "high"}}
                        ]
                    },
                    {
                        "content": "Published after review: steel expands with heat (https://example.org/joints)."
                    },
                ]
            },
            "SAFETY REVIEW|=== COUNCIL OPINIONS|Evaluate this content": {"turns": [{"content": JUDGE}]},
        }
    }
    with FakeOpenAIServer(script=script, strict=True) as server:
        env = build(
            mod.CouncilRewardEnv,
            server.base_url,
            tmp_path,
            enabled_toolsets=["web", "file", "terminal", "council"],
        )
        await env.setup()
        tools, names = env._resolve_tools_for_group()
        assert {"council_query", "council_evaluate", "council_gate"} <= set(names)
        group, _ = await env.collect_trajectories(mod.QUESTIONS[0])
        server.assert_no_failures()
    tool_messages = [m for m in group["messages"][0] if m["role"] == "tool"]
    verdict = json.loads(tool_messages[0]["content"])
    assert (
        verdict["success"]
        and verdict["allowed"]
        and verdict["confidence"] == 90
        and verdict["threshold"] == 70
    )


@pytest.mark.slow
async def test_mounted_host_folder_is_the_tasks_cwd_in_a_container_style_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # upstream's fine-tune bench: docker backend, TERMINAL_DOCKER_VOLUMES mounting the host scratch folder, a seeded
    # per-case host folder as cwd, relative file-tool paths. Before: FileNotFoundError from the cwd override.
    monkeypatch.setenv("TERMINAL_DOCKER_VOLUMES", "")  # restored after the test (the env's setup sets it)
    mod = load_env_module("mounted_cases_env")
    script = {
        "turns": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hello')\n"}}
                ]
            },
            {"content": "hello.py is next to the README."},
        ]
    }
    scratch = tmp_path / "cases"
    with FakeOpenAIServer(script=script, strict=True) as server:
        # "modal" is always the container-style stand-in (real Docker, where a daemon answers, mounts only /workspace)
        env = build(
            mod.MountedCasesEnv, server.base_url, tmp_path, terminal_backend="modal", scratch_dir=str(scratch)
        )
        await env.setup()
        await env.evaluate()
        server.assert_no_failures()
    [record] = env.records
    assert record["reward"] == 1.0  # the seeded README and the model's hello.py are both in the task's cwd
    assert record["pwd"] == str(scratch / "hello-script")


def test_a_ctx_terminal_stall_is_blamed_on_the_tool_context_when_its_paths_are_recorded() -> None:
    # upstream's agentic OPD reward runs `ctx.terminal("python test_solution.py ...")`; in the gold-answer phase the
    # kit records the ctx's paths (HC604) by wrapping its methods before the watchdog times the class (HC408), and
    # the stall was an error "inside PersistentShell._collect" instead of the warning naming ctx.terminal().
    import asyncio

    from hermes_envs.conformance._ctxpaths import record_paths
    from hermes_envs.conformance._watchdog import LoopWatchdog
    from hermes_envs.tools import ToolContext, cleanup_all_sandboxes

    ctx = ToolContext("acceptance-watchdog")
    seen: list[tuple[str, str]] = []
    record_paths(ctx, seen)

    async def reward() -> float:
        ctx.terminal("sleep 0.4; cat /tmp/acceptance-missing 2>&1")
        return 0.0

    dog = LoopWatchdog(threshold=0.2)
    try:
        asyncio.run(dog.watch("gold", reward()))
    finally:
        ctx.cleanup()
        cleanup_all_sandboxes()
    (stall,) = dog.stalls
    assert stall.sync_tool_calls == ("terminal",)
    assert stall.seconds - stall.sync_tool_seconds < 0.1
    assert seen == [("terminal", "/tmp/acceptance-missing")]  # the paths are still recorded


@pytest.mark.slow
def test_no_training_items_names_what_setup_logged() -> None:
    # upstream's fine-tune bench logs "Prompt bank not found: ..." and has no cases: HC202 said only "it returned
    # none"; the finding now names the logged cause (and not our own backend notices).
    from hermes_envs.conformance import EnvSession, Settings

    from .conftest import ENVS

    with EnvSession(ENVS / "prompt_bank_env.py", settings=Settings()) as session:
        outcome = session.run("HC202")
    first = outcome.findings[0]
    assert "returned none" in first.message
    assert "setup() logged" in first.message and "Prompt bank not found" in first.message
    assert "prompt_bank_missing.yaml" in first.message


@pytest.mark.slow
async def test_a_persona_file_at_the_absolute_host_path_the_prompt_names_is_written_and_scored(
    tmp_path: Path,
) -> None:
    # upstream's roleplay benchmark (local backend): the model writes SOUL.md at the absolute host path its prompt
    # names and the reward cats it. Before, write_file there was refused (PathEscapeError): that half scored 0.
    mod = load_env_module("host_file_persona_env")
    soul = tmp_path / "workspaces" / "keeper" / "SOUL.md"
    script = {
        "turns": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": str(soul), "content": "Terse. Salt.\n"}}
                ]
            },
            {"content": "Light's lit. Go home."},
        ]
    }
    with FakeOpenAIServer(script=script, strict=True) as server:
        env = build(mod.HostFilePersonaEnv, server.base_url, tmp_path, workspace_root=str(soul.parent.parent))
        await env.setup()
        group, _ = await env.collect_trajectories(await env.get_next_item())
        server.assert_no_failures()
    assert soul.read_text() == "Terse. Salt.\n"
    assert env.scores == [1.0]
    tool_result = json.loads(next(m["content"] for m in group["messages"][0] if m["role"] == "tool"))
    assert tool_result == {"path": str(soul), "bytes_written": 13}
