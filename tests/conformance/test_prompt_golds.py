"""Golds in the shapes the env's own prompt names: a code fence or a tag pair for the answer, a file name for an
answer the reward reads from the rollout's sandbox (the item holds the answer, the prompt the path)."""

from __future__ import annotations

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._golds import prompt_formats, prompt_paths

from .corpus import CORPUS, CORPUS_SETTINGS


def test_the_gold_is_written_in_the_fence_the_prompt_asks_for() -> None:
    env = CORPUS / "good" / "expression_env.py"
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC407"])) as session:
        outcome = session.run("HC407")
    assert outcome.status is Status.PASSED, (outcome.note, [f.render() for f in outcome.findings])


@pytest.mark.parametrize(
    ("prompt", "templates"),
    [
        ("End with your query in a ```sql block.", ["```sql\n{v}\n```"]),
        ("Put the code in a code block.", ["```\n{v}\n```"]),
        ("Reply as <final>your answer</final>.", ["<final>{v}</final>"]),
        ("Reply as <answer>x</answer> after <think>...</think>.", []),
        ("What is 2 + 2?", []),
    ],
)
def test_prompt_formats_are_the_shapes_the_prompt_names(prompt: str, templates: list[str]) -> None:
    assert [t for _shape, t in prompt_formats(prompt)] == templates


@pytest.mark.parametrize(
    ("prompt", "paths"),
    [
        ("Save it as `solution.py` in your working directory.", ["solution.py"]),
        ('Write the counts to "out/counts.json", e.g. {"a": 1}.', ["out/counts.json"]),
        ("Put your answer in answer.txt, not in /tmp/answer.txt or https://x.org/a.json.", ["answer.txt"]),
        ("What is 3.5 times 2? Use v1.2 of the rules.", []),
    ],
)
def test_prompt_paths_are_the_relative_files_the_prompt_names(prompt: str, paths: list[str]) -> None:
    assert prompt_paths(prompt) == paths


def test_an_answer_record_is_written_to_the_file_the_prompt_names() -> None:
    """The reward reads `tally.json`, named only in the prompt; the item's record written there proves the reward."""
    env = CORPUS / "good" / "tally_file_env.py"
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC407", "HC302"])) as session:
        proven = session.run("HC407")
        leak = session.run("HC302")
    assert proven.status is Status.PASSED, (proven.note, [f.render() for f in proven.findings])
    assert leak.status is Status.PASSED, (leak.note, [f.render() for f in leak.findings])
