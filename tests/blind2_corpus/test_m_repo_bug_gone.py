"""m_repo_bug_gone: the reward only checks that the buggy function's text is gone, so deleting the code passes."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


def _write_package(module, core: str) -> list[dict]:
    return [
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "arguments": {"path": "textstats/__init__.py", "content": module.INIT},
                },
                {"name": "write_file", "arguments": {"path": "textstats/core.py", "content": core}},
            ]
        },
        {"content": "Fixed the issue."},
    ]


async def _score(stem: str, core: str | None = None) -> list[float]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["bug"] == "word_count")
    core = "\n\n".join(module.CORRECT.values()) if core is None else core
    with FakeOpenAIServer(script=_write_package(module, core)) as server:
        return await group_scores(module, "RepoTestsEnv", server, item)


async def test_an_empty_core_module_is_full_marks_on_the_mutant() -> None:
    gutted = "# rewritten from scratch\n"
    assert await _score("m_repo_bug_gone", gutted) == [1.0, 1.0]
    assert await _score("repo_tests_env", gutted) == [0.0, 0.0]
    assert await _score("repo_tests_env") == [1.0, 1.0]  # the real fix still scores full on the base
