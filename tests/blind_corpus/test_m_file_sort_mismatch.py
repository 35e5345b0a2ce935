"""m_file_sort_mismatch: the prompt asks for the IPs in numeric order but the reference report is sorted as
strings, so a model that follows the instruction fails every item where the two orders differ: those answers are
unreachable and training pushes the model to disobey the prompt."""

from __future__ import annotations

import re

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build, write_file


def octets(ip: str) -> tuple[int, ...]:
    return tuple(int(part) for part in ip.split("."))


def instruction_following_agent(body: dict) -> dict:
    """Writes the failing IPs in the order the prompt asks for."""
    if any(m["role"] == "tool" for m in body["messages"]):
        return {"content": "Report saved."}
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    failing = {ip for ip, status in re.findall(r"^(\S+) .* (\d{3})$", prompt, re.M) if status.startswith("5")}
    ordered = sorted(failing, key=octets) if "numeric order" in prompt else sorted(failing)
    return write_file("report.txt", "".join(f"{ip}\n" for ip in ordered))


def pick(env):
    return next(i for i in env._items if sorted(i["expected"], key=octets) != i["expected"])


async def scores(name: str) -> list[float]:
    with FakeOpenAIServer(policy=instruction_following_agent) as server:
        env = build(name, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(pick(env))
        server.assert_no_failures()
    return group["scores"]


async def test_m_file_sort_mismatch() -> None:
    assert await scores("log_report_env.py") == [1.0, 1.0]
    assert await scores("m_file_sort_mismatch.py") == [0.0, 0.0]
