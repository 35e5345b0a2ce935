"""Parity and data oracles of issue 29 on their correct twins: what a correct env legitimately does differently in
eval (eval-only text around the item's prompt, a larger token budget) and seeded item content stay clean; the
mutants (conformance/bad/eval_no_system_prompt.py, eval_reworded_prompt.py, eval_one_turn.py,
eval_short_max_tokens.py, eval_toolset_names.py, eval_edits_item.py, file_reward_current_item.py) are held to their
findings by test_corpus.py; the unseeded item content, whose finding quotes random text, is tested here."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_HEADER = f"""
import random
import sys
import time

sys.path.insert(0, {str(CORPUS / "bad")!r})
from _good import LetterCountEnv, RawSumEnv, make_items  # noqa: E402

from environments.agent_loop import HermesAgentLoop  # noqa: E402
from environments.tool_context import ToolContext  # noqa: E402
"""


def _env(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "twin_env.py"
    path.write_text(_HEADER + textwrap.dedent(body), encoding="utf-8")
    return path


def _run(path: Path, check_ids: list[str], thorough: bool = False) -> dict[str, object]:
    with EnvSession(path, settings=Settings(**CORPUS_SETTINGS, thorough=thorough)) as session:
        return {i: session.run(i) for i in check_ids}


def test_eval_only_text_around_the_items_prompt_is_not_a_reworded_prompt(tmp_path: Path) -> None:
    """An eval that adds an instruction after format_prompt(item) still shows the model what training shows."""
    path = _env(
        tmp_path,
        """
        class AddsEvalNote(LetterCountEnv):
            name = "adds-eval-note"

            async def evaluate(self, *args, **kwargs):
                tools, names = self._resolve_tools_for_group()
                for item in self.eval_items:
                    messages = self.initial_messages(item)
                    messages[-1]["content"] += "\\nThis is a held-out question: answer as usual."
                    loop = HermesAgentLoop(server=self.server, tool_schemas=tools, valid_tool_names=names,
                                           max_turns=self.config.max_agent_turns, temperature=0.0)
                    result = await loop.run(messages)
                    ctx = ToolContext(loop.task_id)
                    try:
                        await self.compute_reward(item, result, ctx)
                    finally:
                        ctx.cleanup()
                await self.evaluate_log(metrics={"eval/n": len(self.eval_items)}, start_time=time.time(),
                                        end_time=time.time())
        """,
    )
    found = _run(path, ["HC709", "HC712"])
    assert found["HC709"].status is Status.PASSED, found["HC709"]
    assert found["HC712"].status is Status.PASSED, found["HC712"]


def test_a_larger_eval_token_budget_is_not_a_smaller_one(tmp_path: Path) -> None:
    """HC712 compares in one direction only: eval may give the model more room than training, never less."""
    path = _env(
        tmp_path,
        """
        class RoomierEval(RawSumEnv):
            name = "roomier-eval"

            async def evaluate(self, *args, **kwargs):
                for item in self.eval_items:
                    await self.server.chat_completion(
                        messages=[{"role": "user", "content": self.prompt(item)}], n=1, temperature=0.0,
                        max_tokens=512)
                await self.evaluate_log(metrics={"eval/n": len(self.eval_items)}, start_time=time.time(),
                                        end_time=time.time())
        """,
    )
    outcome = _run(path, ["HC712"])["HC712"]
    assert outcome.status is Status.PASSED, outcome


@pytest.mark.slow
def test_an_item_id_that_names_another_question_in_a_fresh_interpreter_is_an_error(tmp_path: Path) -> None:
    """Each item's padding comes from the global random, so item w4 is another question in every process (the
    split itself is fixed). Its finding quotes random text, so this mutant lives here, not in the snapshot corpus.
    Before: HC206 only warned that the training set moved."""
    path = _env(
        tmp_path,
        """
        class UnseededContent(LetterCountEnv):
            name = "unseeded-content"

            async def setup(self):
                items = []
                for index, item in enumerate(make_items()):
                    word = item["word"] + random.choice("xyzq") * random.randint(4, 9)  # the global random
                    items.append({"id": f"w{index}", "word": word, "letter": item["letter"],
                                  "answer": str(word.count(item["letter"]))})
                self.eval_items, self.train_items = items[:4], items[4:]
                self.index = 0
        """,
    )
    outcome = _run(path, ["HC206"], thorough=True)["HC206"]
    assert outcome.status is Status.FAILED, outcome
    assert "not reproducible" in outcome.findings[0].message
    assert outcome.findings[0].severity.value == "error"


@pytest.mark.slow
def test_items_with_ids_and_seeded_content_are_the_same_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """The twin of items_unseeded_content.py: the same ids, the padding drawn from random.Random(7)."""
    path = _env(
        tmp_path,
        """
        class SeededContent(LetterCountEnv):
            name = "seeded-content"

            async def setup(self):
                rng = random.Random(7)
                items = []
                for index, item in enumerate(make_items()):
                    word = item["word"] + rng.choice("xyzq") * rng.randint(1, 3)
                    items.append({"id": f"w{index}", "word": word, "letter": item["letter"],
                                  "answer": str(word.count(item["letter"]))})
                self.eval_items, self.train_items = items[:4], items[4:]
                self.index = 0
        """,
    )
    outcome = _run(path, ["HC206"], thorough=True)["HC206"]
    assert outcome.status is Status.PASSED, outcome


def test_a_reward_reading_the_current_item_is_an_error_with_a_tool_transcript_too() -> None:
    """file_reward_current_item.py: its good transcript writes the file with a tool; replayed with nothing in between
    it scores the same, so the change after get_next_item is the reward's (before: a warning, "tools ran again")."""
    path = CORPUS / "bad" / "file_reward_current_item.py"
    outcome = _run(path, ["HC413"])["HC413"]
    assert outcome.status is Status.FAILED, outcome
    relation = [f for f in outcome.findings if "get_next_item" in f.subject]
    assert relation and relation[0].severity.value == "error", outcome


def test_a_correct_file_task_with_tool_transcripts_keeps_the_relation() -> None:
    """The twin: file_task_env.py reads its item argument; the same transcripts hold the relation."""
    outcome = _run(CORPUS / "good" / "file_task_env.py", ["HC413"])["HC413"]
    assert outcome.status is Status.PASSED, outcome
