"""The `hermes-envs` command: check, tokenizer-path, fake-server + atroposlib process (the README's step 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_envs.cli import main
from hermes_envs.testing.offline import offline_environ, offline_tokenizer_path

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "environments" / "arithmetic_env.py"


def test_tokenizer_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokenizer-path"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == Path(offline_tokenizer_path()) and (path / "tokenizer.json").is_file()


def test_check_passes_a_correct_env_and_fails_a_broken_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(EXAMPLE), "--select", "HC1,HC2", "--report", str(tmp_path / "r.json")]) == 0
    assert "PASSED" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["failed"] is False
    bad = tmp_path / "bad_env.py"
    bad.write_text(
        EXAMPLE.read_text().replace("        return config, servers", "        return config, servers[0]")
    )
    assert main(["check", str(bad), "--select", "HC104"]) == 1
    out = capsys.readouterr().out
    assert "HC104" in out and "LIST of APIServerConfig" in out and "Fix:" in out


def test_check_usage_errors_exit_4_and_no_env_5(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing.py")]) == 4  # as pytest exits on a usage error
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "notes.py").write_text("x = 1\n")
    assert main(["check", str(tmp_path)]) == 5  # a folder with no env file: as pytest, nothing collected
    assert "no environment found" in capsys.readouterr().err


def test_fake_server_rejects_a_malformed_script_naming_the_line(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: ok\n  - tool_calls: [{arguments: {a: 1}}]\n")
    done = subprocess.run(
        [sys.executable, "-m", "hermes_envs.cli", "fake-server", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "s.yaml" in done.stderr and "line 3" in done.stderr and "name" in done.stderr


@pytest.mark.slow
def test_readme_step_4_process_run_against_the_cli_fake_server(tmp_path: Path) -> None:
    """hermes-envs fake-server --script ... & python env.py process ... -> JSONL + HTML with tool messages."""
    env = {**os.environ, **offline_environ()}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hermes_envs.cli",
            "fake-server",
            "--port",
            "0",
            "--script",
            str(ROOT / "environments" / "scripts" / "arithmetic.yaml"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        base_url = server.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        out = tmp_path / "out" / "g.jsonl"
        done = subprocess.run(
            [
                sys.executable,
                str(EXAMPLE),
                "process",
                "--env.total_steps",
                "1",
                "--env.group_size",
                "2",
                "--env.use_wandb",
                "False",
                "--env.tokenizer_name",
                offline_tokenizer_path(),
                "--env.data_path_to_save_groups",
                str(out),
                "--openai.base_url",
                base_url,
                "--openai.model_name",
                "fake",
                "--openai.api_key",
                "x",
                "--openai.health_check",
                "False",
            ],
            capture_output=True,
            text=True,
            timeout=240,
            env=env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "0 unmatched" in err, err
    group = json.loads(out.read_text().splitlines()[0])
    assert len(group["tokens"]) == len(group["masks"]) == len(group["scores"]) == 2
    for tokens, masks, messages in zip(group["tokens"], group["masks"], group["messages"]):
        assert len(tokens) == len(masks) and masks[0] == -100 and any(m != -100 for m in masks)
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert out.with_suffix(".html").exists()


def test_record_on_a_file_with_two_env_classes_asks_which_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `check` takes FILE::Class, record names the classes and asks for one instead of recording the first."""
    from hermes_envs.testing.fake_server import FakeOpenAIServer

    two = tmp_path / "two_envs.py"
    two.write_text(
        "from environments.arithmetic_env import ArithmeticTerminalEnv\n\n\n"
        "class FirstEnv(ArithmeticTerminalEnv):\n    name = 'first'\n\n\n"
        "class SecondEnv(ArithmeticTerminalEnv):\n    name = 'second'\n"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    cassette = tmp_path / "c.yaml"
    with FakeOpenAIServer(script={"turns": [{"content": "Answer: 0"}]}, strict=False) as server:
        code = main(
            ["record", str(two), "--openai.base_url", server.base_url, "--openai.model_name", "fake"]
            + ["--cassette", str(cassette), "--no-progress"]
        )
        sent = len(server.chat_calls)
    err = capsys.readouterr().err
    assert code != 0 and "2 environment classes (FirstEnv, SecondEnv)" in err
    assert f"{two}::FirstEnv" in err and not cassette.exists() and sent == 0


def test_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """`hermes-envs --help` opens with every subcommand (lint-cassettes was missing), in plain words."""
    from hermes_envs.cli import build_parser

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    (sub,) = [a for a in build_parser()._actions if a.dest == "command"]
    description = out.split("positional arguments:")[0]
    for name in sub.choices:
        assert name in description, name
    assert "``" not in out


def test_fake_server_guide_usage_names_every_option() -> None:
    """docs/fake-server.md's usage lines name every option of `hermes-envs fake-server`."""
    from hermes_envs.cli import build_parser

    (sub,) = [a for a in build_parser()._actions if a.dest == "command"]
    options = {o for a in sub.choices["fake-server"]._actions for o in a.option_strings if o.startswith("--")}
    guide = (ROOT / "docs" / "fake-server.md").read_text(encoding="utf-8")
    usage = guide.split("## CLI", 1)[1].split("```", 2)[1]
    assert sorted(o for o in options - {"--help"} if f"[{o}" not in usage and f"{o} " not in usage) == []
