"""The CLI serves a script in another process until SIGTERM/SIGINT; a bad script exits 2 with the message."""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys

import openai
import pytest

from hermes_envs.testing.fake_server import cli

SCRIPT = """\
turns:
  - tool_calls: [{name: terminal, arguments: {command: "echo 42"}}]
  - content: "The answer is 42."
"""


def _start(*args):
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_envs.testing.fake_server.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().strip()
    return proc, line


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_cli_serves_a_script_to_another_process(tmp_path, sig):
    p = tmp_path / "script.yaml"
    p.write_text(SCRIPT)
    proc, base_url = _start("--port", "0", "--script", str(p))
    try:
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1"), proc.stderr.read()
        client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
        tools = [{"type": "function", "function": {"name": "terminal", "parameters": {"type": "object"}}}]
        r = client.chat.completions.create(
            model="fake", messages=[{"role": "user", "content": "q"}], tools=tools
        )
        assert r.choices[0].message.tool_calls[0].function.name == "terminal"
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "1 requests, 0 unmatched" in err


def test_cli_malformed_script_exits_2_with_the_message(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("turns:\n  - content: x\n    contnet: y\n")
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_envs.testing.fake_server.cli", "--script", str(p)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "line 3" in proc.stderr and "contnet" in proc.stderr and proc.stdout == ""


def test_a_malformed_script_is_refused_before_the_tokenizer_loads(tmp_path, monkeypatch, capsys):
    """The script's mistake is what the author reads, even with a --tokenizer that would not load: the tokenizer
    (transformers, seconds of CPU) is loaded only once the script is accepted."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - content: x\n    contnet: y\n")
    (tmp_path / "not-a-tokenizer").mkdir()
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["--script", str(bad), "--tokenizer", str(tmp_path / "not-a-tokenizer")])
    assert cli.run(args) == 2
    err = capsys.readouterr().err
    assert "contnet" in err and "line 3" in err, err


def test_cli_run_rejects_bad_fault_and_missing_responder(capsys):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    assert cli.run(parser.parse_args([])) == 2
    assert cli.run(parser.parse_args(["--policy", "echo", "--fault", "boom"])) == 2
    assert cli.run(parser.parse_args(["--policy", "nope"])) == 2
    err = capsys.readouterr().err
    assert "--script" in err and "fault kind" in err and "policy 'nope' should be one of" in err


def test_cli_policy_and_fault_in_subprocess():
    proc, base_url = _start("--policy", "answer:text=hello", "--fault", "500:times=1")
    try:
        client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=1)
        r = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "q"}])
        assert r.choices[0].message.content == "hello"  # first attempt got the 500, the retry succeeded
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_cli_port_taken_says_so_and_how_to_pick_another():
    """Before: a raw OSError traceback (issue #27 item 5)."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "hermes_envs.testing.fake_server.cli",
                "--policy",
                "echo",
                "--tokenizer",
                "none",
            ]
            + ["--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        taken.close()
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"port {port} on 127.0.0.1 should be free" in proc.stderr and "--port 0" in proc.stderr


@pytest.mark.parametrize("flags", [["--no-record"], ["--history", "3"]])
def test_cli_bounded_history_still_counts_every_request(flags):
    """The exit report counts every request and miss however few are kept (issue #27 item 22)."""
    proc, base_url = _start("--policy", "answer:text=ok", "--tokenizer", "none", *flags)
    try:
        client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
        for _ in range(7):
            client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "q"}])
        for _ in range(2):
            with pytest.raises(openai.NotFoundError):
                client.get("/nowhere", cast_to=object)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "fake-server: 9 requests, 2 unmatched" in err
