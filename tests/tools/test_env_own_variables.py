"""The environment of ``local`` commands, as upstream's local terminal: the env's own non-secret variables reach
them (yc_bench's ``DATABASE_URL`` set in setup), secrets never (one table, upstream's blocklist in it), the trainer
shell's other variables stay out unless allow-listed, and a command failing on a withheld variable says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hermes_envs.tools.sandbox import SandboxConfig, is_secret, sandbox_environment

STARTED = {"PATH": "/usr/bin", "SHELL_ONLY": "from the trainer's shell", "DATABASE_URL": "sqlite:///old.db"}


def test_the_envs_own_variables_reach_local_commands_and_secrets_never() -> None:
    now = {
        **STARTED,
        "DATABASE_URL": "sqlite:////tmp/yc/db.sqlite",  # changed by the env after start: its own
        "YC_BENCH_EXPERIMENT": "default",  # set by the env
        "OPENROUTER_API_KEY": "sk-or-1",  # upstream's blocklist
        "MY_SERVICE_TOKEN": "abc",  # a credential's name shape
        "REPLICA_URL": "postgres://user:hunter2@db/prod",  # a credential by value
    }
    env = sandbox_environment(SandboxConfig(backend="local"), base=now, started_with=STARTED)
    assert env["DATABASE_URL"] == "sqlite:////tmp/yc/db.sqlite" and env["YC_BENCH_EXPERIMENT"] == "default"
    assert "SHELL_ONLY" not in env and env["PATH"] == "/usr/bin"
    assert not {"OPENROUTER_API_KEY", "MY_SERVICE_TOKEN", "REPLICA_URL"} & set(env)
    container = sandbox_environment(SandboxConfig(backend="docker"), base=now, started_with=STARTED)
    assert "YC_BENCH_EXPERIMENT" not in container  # containers get only what is declared


def test_passthrough_never_re_allows_a_secret_and_declared_values_are_kept() -> None:
    now = {"OPENAI_API_KEY": "sk-1", "MY_DATA_DIR": "/data"}
    config = SandboxConfig(env_passthrough=("OPENAI_API_KEY", "MY_DATA_*"), env={"MODE": "eval"})
    env = sandbox_environment(config, base=now, started_with=now)
    assert env == {"MY_DATA_DIR": "/data", "MODE": "eval"}


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("GH_TOKEN", "x", True),
        ("SUDO_PASSWORD", "x", True),
        ("AUXILIARY_VISION_BASE_URL", "https://x", True),
        ("SLACK_WEBHOOK_URL", "https://hooks.example/x", True),
        ("SSH_AUTH_SOCK", "/tmp/agent", True),
        ("NOTES", "ghp_abcdef", True),
        ("DATABASE_URL", "sqlite:///a.db", False),
        ("TOKENIZERS_PARALLELISM", "false", False),
        ("YC_BENCH_EXPERIMENT", "default", False),
    ],
)
def test_one_rule_table_says_what_a_secret_is(name: str, value: str, secret: bool) -> None:
    assert is_secret(name, value) is secret


def test_a_command_failing_on_a_withheld_variable_says_so(tmp_path) -> None:
    """In a process whose trainer shell exported YC_DB_PATH from the start (not the env's own, not allow-listed)."""
    code = (
        "import json\n"
        "from hermes_envs.tools import configure_sandboxes, registry\n"
        "configure_sandboxes(backend='local')\n"
        'command = \'test -n "$YC_DB_PATH" || { echo "YC_DB_PATH is not set"; exit 3; }\'\n'
        "print(json.dumps([json.loads(registry.dispatch('terminal', {'command': c}, 't1'))\n"
        "                  for c in (command, 'echo fine; exit 1')]))\n"
    )
    env = {**os.environ, "YC_DB_PATH": "/srv/yc.db", "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out, passed = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["exit_code"] == 3
    assert "YC_DB_PATH is set in the trainer process but unset in this command" in out["output"]
    assert "terminal_env_passthrough" in out["output"]
    assert "[hermes-envs]" not in passed["output"]  # a failure that names no withheld variable gets no note
