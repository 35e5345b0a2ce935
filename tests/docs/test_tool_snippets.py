"""The python blocks of docs/tools/*.md and docs/toolsets.md run as written, each on its own, in a user's shell.

A user's shell is not pytest: it has no ``HERMES_TOOL_BACKENDS=fake`` (the plugin and ``offline_environ()`` set it)
and no provider keys, so a block that leaves its backend to the default would reach for a real service (no key, no
Playwright) and raise. The blocks choose their fake backends themselves, as the guides say.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .test_snippets import ROOT, _run_each_on_its_own, blocks

TOOL_DOCS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "tools").glob("*.md")) + [
    "docs/toolsets.md"
]


def users_shell() -> dict[str, str]:
    """This environment minus what pytest or a developer's shell adds: backend choices, keys, Hub access."""
    dropped = ("HERMES_", "FIRECRAWL_", "PARALLEL_", "TAVILY_", "EXA_", "FAL_", "OPENAI_", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped) and not k.endswith("_API_KEY")}
    return {**env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def test_every_tool_guide_has_a_block() -> None:
    assert len(TOOL_DOCS) >= 10
    for doc in TOOL_DOCS:
        assert blocks(doc), f"{doc} has no python block"


@pytest.mark.slow  # every block forked from one warm interpreter
def test_tool_guide_blocks_run_in_a_users_shell(tmp_path: Path) -> None:
    labelled = [(doc, number) for doc in TOOL_DOCS for number in range(1, len(blocks(doc)) + 1)]
    bodies = [body for doc in TOOL_DOCS for body in blocks(doc)]
    try:
        _run_each_on_its_own(
            "docs/tools", bodies, tmp_path, preload="hermes_envs.tools", environ=users_shell()
        )
    except AssertionError as failed:
        where = "\n".join(f"  block {i}: {doc} block {n}" for i, (doc, n) in enumerate(labelled, start=1))
        raise AssertionError(f"{failed}\nwhich block is which:\n{where}") from None
