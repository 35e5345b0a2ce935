"""Makes the good corpus envs importable from the bad ones (``from _good import LetterCountEnv``).

The good modules are loaded by path under private names, so they never clash with same-named modules elsewhere
on ``sys.path`` (e.g. an ``environments/file_task_env.py``).
"""

import importlib.util
import sys
from pathlib import Path

_GOOD = Path(__file__).resolve().parents[1] / "good"


def _load(stem: str):
    name = f"hermes_corpus_good_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _GOOD / f"{stem}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


LetterCountEnv = _load("exact_answer_env").LetterCountEnv
final_answer = _load("exact_answer_env").final_answer
make_items = _load("exact_answer_env").make_items
FileWriteEnv = _load("file_task_env").FileWriteEnv
JudgedQAEnv = _load("judge_env").JudgedQAEnv
RawSumEnv = _load("raw_atropos_env").RawSumEnv
RAW_QA_DATA = _load("raw_qa_env").DATA
qa_grade = _load("raw_qa_env").grade
qa_norm = _load("raw_qa_env").norm
ListEnv = _load("list_answer_env").ListEnv
parse_list = _load("list_answer_env").parse_list
last_answer = _load("list_answer_env").last_answer
NotesEnv = _load("named_file_env").NotesEnv
PeopleEnv = _load("json_fields_env").PeopleEnv
parse_object = _load("json_fields_env").parse_object
same = _load("json_fields_env").same
UnitsEnv = _load("unit_conversion_env").UnitsEnv

__all__ = [
    "RAW_QA_DATA",
    "FileWriteEnv",
    "JudgedQAEnv",
    "LetterCountEnv",
    "ListEnv",
    "NotesEnv",
    "PeopleEnv",
    "RawSumEnv",
    "UnitsEnv",
    "final_answer",
    "last_answer",
    "make_items",
    "parse_list",
    "parse_object",
    "qa_grade",
    "qa_norm",
    "same",
]
RawJudgeEnv = _load("raw_judge_env").RawJudgeEnv
ExpressionEnv = _load("expression_env").ExpressionEnv
Unreadable = _load("expression_env").Unreadable
evaluate_expression = _load("expression_env").evaluate_expression
last_fence = _load("expression_env").last_fence
TallyFileEnv = _load("tally_file_env").TallyFileEnv
ScriptHiddenTestsEnv = _load("script_hidden_tests_env").ScriptHiddenTestsEnv
RubricJudgeEnv = _load("rubric_judge_env").RubricJudgeEnv
rubric_final = _load("rubric_judge_env")._final
