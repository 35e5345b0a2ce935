"""Tool output that shows the sandbox path (random per run) still matches its recording."""

from __future__ import annotations

from hermes_envs.testing._cassette_matching import normalize_body


def body(path: str) -> dict:
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": "fix it"},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": f'Traceback (most recent call last):\n  File "{path}/task.py", line 3, in <module>',
            },
        ],
    }


def test_sandbox_paths_are_normalized() -> None:
    recorded = body("/tmp/hermes-envs-vokqzigf/4b2a1c9e-1f0a-4c1e-9d1e-0a1b2c3d4e5f-ff2bso8b")
    replayed = body("/tmp/hermes-envs-m1x2y3z4/0f9e8d7c-6b5a-4c3d-9e2f-1a2b3c4d5e6f-q8w7e6r5")
    assert normalize_body(recorded) == normalize_body(replayed)


def test_other_paths_still_differ() -> None:
    assert normalize_body(body("/home/me/project")) != normalize_body(body("/home/me/other"))
