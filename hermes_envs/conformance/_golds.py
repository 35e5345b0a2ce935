"""Gold answers derived from an item: what a correct rollout of it would say or do, in the shapes models use.

The reward checks need transcripts that SHOULD score well, without knowing the task. They are derived from the
item's own fields: a scalar written as an answer ("Answer: 42", "\\boxed{42}"), a dict or list field written as
JSON (or a comma list), a path field and a text field written to that file with the env's file tool, a
command-like field run with its terminal tool. When none of them scores, the env's own ``conformance_transcripts``
are the proof; when there is neither, the kit says it could not derive a gold (never that the reward is wrong).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._probes import Responder, play, say

__all__ = [
    "ANSWER_FIELDS",
    "ANSWER_FORMATS",
    "Positive",
    "STRUCTURED_FORMATS",
    "UNIT_FIELDS",
    "derivable",
    "fenced",
    "gold_answers",
    "gold_value",
    "gold_positives",
    "prompt_formats",
    "prompt_paths",
    "scalar_fields",
    "structured_fields",
    "structured_renderings",
    "varied_answers",
]

#: How a gold value is written in an answer: rewards parse answers in these common shapes.
ANSWER_FORMATS: tuple[tuple[str, str], ...] = (
    ("bare", "{v}"),
    ("answer-line", "Answer: {v}"),
    ("boxed", "The answer is \\boxed{{{v}}}."),
    ("answer-tag", "<answer>{v}</answer>"),
    ("gsm8k", "#### {v}"),
    ("sentence", "The answer is {v}."),
)
#: A fence the prompt shows or asks for ("End with your query in a ```sql block"), with its language if any.
_FENCE = re.compile(r"```([A-Za-z][\w+#-]{0,15})?")
#: Words that ask for a fenced block without showing one.
_FENCE_WORDS = re.compile(r"\b(code block|fenced block|code fence)\b", re.I)
#: A tag pair the prompt shows an answer in ("<final>...</final>"); <answer> is already a common shape.
_PROMPT_TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})>[^<>]{0,80}</\1>")


def prompt_formats(prompt: str) -> tuple[tuple[str, str], ...]:
    """The answer shapes the env's own prompt asks for beyond the common ones: a code fence (with the language
    it names, e.g. a SQL or Python answer) and a tag pair it shows. The env told the model so; a gold written
    that way is what a correct rollout says."""
    out: list[tuple[str, str]] = []
    languages = list(dict.fromkeys(m.group(1) or "" for m in _FENCE.finditer(prompt)))
    if not languages and _FENCE_WORDS.search(prompt):
        languages = [""]
    for language in languages[:3]:
        out.append((f"fence {language or 'plain'}", f"```{language}\n{{v}}\n```"))
    tags = [t for t in dict.fromkeys(_PROMPT_TAG.findall(prompt)) if t.lower() not in ("answer", "think")]
    for tag in tags[:2]:
        out.append((f"tag {tag}", f"<{tag}>{{v}}</{tag}>"))
    return tuple(out)


def fenced(template: str) -> bool:
    """Whether an answer shape puts the value in a code fence (where markup is code, not decoration)."""
    return template.startswith("```")


#: How a structured (dict / list) gold is written: rewards parse JSON out of the reply.
STRUCTURED_FORMATS: tuple[tuple[str, str], ...] = (
    ("bare", "{v}"),
    ("json-fence", "```json\n{v}\n```"),
    ("answer-line", "Answer: {v}"),
    ("answer-tag", "<answer>{v}</answer>"),
)

#: Field names that usually hold the expected answer: tried first, and their failure is an error (not a doubt).
ANSWER_FIELDS = (
    "answer",
    "answers",
    "solution",
    "target",
    "label",
    "gold",
    "expected",
    "ground_truth",
    "reference",
    "output",
    "result",
    "correct",
    "final_answer",
)
#: Parameter names of a tool that runs a shell command / writes a file (the env's own terminal / file tools).
_COMMAND_PARAMS = ("command", "cmd", "script")
_PATH_PARAMS = ("path", "file_path", "filename", "file")
_CONTENT_PARAMS = ("content", "contents", "text", "data")
_PATHLIKE = re.compile(r"^[\w.\-/]+\.\w{1,6}$|^[\w.\-]+/[\w.\-/]+$")


@dataclass(frozen=True)
class Positive:
    """A transcript that should score above the controls: a gold-answer probe or the env's own good transcript."""

    name: str  # e.g. "field 'answer' answered as 'Answer: 42'", "tool write_file(path, content) from fields"
    responder: Responder
    source: str  # "field", "tool" or "env"
    field: str | None = None
    value: str | None = None  # the gold as text (JSON for structured golds)
    template: str | None = None  # the answer shape ("Answer: {v}") the gold was written in
    kind: str = "scalar"  # "scalar", "dict", "list", "file", "command"


def _rank(name: str) -> int:
    try:
        return ANSWER_FIELDS.index(name.lower())
    except ValueError:
        return len(ANSWER_FIELDS)


#: Field names holding the unit of an item's numeric answer ("12.5" with unit "km" is answered "12.5 km").
UNIT_FIELDS = ("unit", "units", "unit_symbol", "target_unit", "uom")


def _unit(item: dict[str, Any]) -> str | None:
    for key in UNIT_FIELDS:
        value = item.get(key)
        if isinstance(value, str) and 0 < len(value.strip()) <= 16 and "\n" not in value:
            return value.strip()
    return None


def gold_value(item: Any, field: str, kind: str) -> str:
    """``item``'s value of ``field`` as a gold of ``kind`` is written ("" when it has none of that kind)."""
    value = item.get(field) if isinstance(item, dict) else None
    if kind in ("dict", "list") and isinstance(value, (dict, list)) and value:
        return json.dumps(value)
    if kind == "scalar":  # (a field the kit derives, such as "value unit", is one of scalar_fields)
        return dict(scalar_fields(item)).get(field, "")
    return ""


def scalar_fields(item: Any) -> list[tuple[str, str]]:
    """(name, text) of the item's string / number fields, answer-like names first; a number of an item that names
    its unit also comes with the unit (``"value unit"``: "12.5 km"), right after the number alone."""
    if not isinstance(item, dict):
        return []
    unit = _unit(item)
    out = []
    for key, value in item.items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        text = str(value).strip()
        if text and len(text) <= 2000:
            out.append((str(key), text))
            if unit is not None and isinstance(value, (int, float)):
                out.append((f"{key} unit", f"{text} {unit}"))
    return sorted(out, key=lambda kv: _rank(kv[0].removesuffix(" unit")))


def structured_fields(item: Any) -> list[tuple[str, str, Any]]:
    """(name, kind, value) of the item's JSON-able dict / list fields (a dict of fields, a list answer)."""
    if not isinstance(item, dict):
        return []
    out = []
    for key, value in item.items():
        if isinstance(value, (dict, list, tuple)) and value:
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                continue
            out.append((str(key), "dict" if isinstance(value, dict) else "list", value))
    return sorted(out, key=lambda kv: _rank(kv[0]))


def structured_renderings(kind: str, value: Any) -> list[str]:
    """The usual texts of a dict / list gold: compact and spaced JSON; for a list also "a, b, c"."""
    texts = [json.dumps(value), json.dumps(value, indent=2)]
    if kind == "list" and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        texts.append(", ".join(str(v) for v in value))
    return texts


def gold_answers(item: Any) -> list[tuple[str, str, str]]:
    """``(field, value, answer text)`` for each of the item's fields written in each common answer shape."""
    return [
        (name, text, template.format(v=text))
        for name, text in scalar_fields(item)
        for _s, template in ANSWER_FORMATS
    ]


def varied_answers(item: Any) -> Responder:
    """A responder whose answers differ (across requests and across the n choices of one request): the item's
    fields written as answers (the first three fields), alternating with wrong ones, so that scores can differ."""
    golds = [answer for _name, _value, answer in gold_answers(item)[: 3 * len(ANSWER_FORMATS)]]
    counter = iter(range(1_000_000))

    def answer() -> str:
        i = next(counter)
        if i % 2 == 0 and golds:
            return golds[(i // 2) % len(golds)]
        return f"I think the answer is {i + 7}."

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        n = max(1, int(body.get("n") or 1))
        return {"choices": [{"content": answer()} for _ in range(n)]}

    return respond


def _param_names(function: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    params = function.get("parameters") or {}
    return (params.get("properties") or {}), list(params.get("required") or [])


#: A file name the prompt names ("save it as `solution.py`", "write answer.json"): quoted, or with a usual extension.
_QUOTED_PATH = re.compile(r"[`'\"]([\w.\-/]+\.[A-Za-z]\w{0,5})[`'\"]")
_BARE_PATH = re.compile(
    r"(?<![\w/.:-])([\w\-]+(?:/[\w.\-]+)*\.(?:json|jsonl|txt|md|csv|tsv|py|sh|sql|ya?ml|toml|html|xml|log|out))\b"
)
#: File answers tried per item (each is a rollout scored by the reward): two paths, two contents.
MAX_PROMPT_FILES = 4


def prompt_paths(prompt: str) -> list[str]:
    """Relative file names the prompt tells the model to write (at most two; no URL, no absolute path)."""
    found = [*_QUOTED_PATH.findall(prompt), *_BARE_PATH.findall(prompt)]
    out = [p for p in dict.fromkeys(found) if not p.startswith("/") and "://" not in p and ".." not in p]
    return out[:2]


def _file_contents(item: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, text) an answer file may hold: answer-like fields as text (JSON for a dict or list), then the
    item's other dict / list fields as JSON (a record of counts, a list of names)."""
    ranked = sorted(item.items(), key=lambda kv: _rank(str(kv[0])))
    out = []
    for key, value in ranked:
        answer_like = _rank(str(key)) < len(ANSWER_FIELDS)
        if isinstance(value, (dict, list)) and value:
            try:
                out.append((str(key), json.dumps(value)))
            except (TypeError, ValueError):
                continue
        elif answer_like and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = str(value)
            if text.strip() and len(text) <= 20_000:
                out.append((str(key), text if text.endswith("\n") or "\n" not in text else text + "\n"))
    return out


def _prompt_file_positives(item: Any, tools: list[dict[str, Any]], prompt: str) -> list[Positive]:
    """The env's file tool writing an answer field (or a record of the item, as JSON) to a file the prompt names,
    then "Done.": the shape of tasks whose reward reads the file the model was told to write."""
    raw = item if isinstance(item, dict) else {}
    named = [p for p in prompt_paths(prompt) if p not in raw.values()]
    contents = _file_contents(raw)[:2]
    for tool in tools if named and contents else []:
        function = tool.get("function", tool)
        props, required = _param_names(function)
        path_param = next((p for p in _PATH_PARAMS if p in props), None)
        content_param = next((p for p in _CONTENT_PARAMS if p in props), None)
        if not (path_param and content_param and set(required) <= {path_param, content_param}):
            continue
        name = function.get("name", "")
        return [
            Positive(
                f"tool {name} writing field {field!r} to {path!r} (the file the prompt names)",
                play(
                    [
                        {
                            "content": "",
                            "tool_calls": [
                                {"name": name, "arguments": {path_param: path, content_param: text}}
                            ],
                        },
                        {"content": "Done."},
                    ]
                ),
                "tool",
                field=field,
                value=text,
                kind="file",
            )
            for path, (field, text) in [(p, c) for p in named for c in contents][:MAX_PROMPT_FILES]
        ]
    return []


def _tool_positives(item: Any, tools: list[dict[str, Any]]) -> list[Positive]:
    """Tool calls a correct rollout would make: parameters named like item fields; a file tool writing a text
    field to a path field; a terminal tool running a command-like field."""
    raw = item if isinstance(item, dict) else {}
    fields = scalar_fields(item)
    done = next((v for k, v in fields if k.lower() in ANSWER_FIELDS), "Done.")
    out: list[Positive] = []

    def call_then_done(name: str, about: str, arguments: dict[str, Any], kind: str) -> Positive:
        call = {"name": name, "arguments": arguments}
        return Positive(
            about, play([{"content": "", "tool_calls": [call]}, {"content": done}]), "tool", kind=kind
        )

    strings = [(k, v) for k, v in fields if isinstance(raw.get(k), str)]
    for tool in tools:
        function = tool.get("function", tool)
        name = function.get("name", "")
        props, required = _param_names(function)
        shared = [p for p in props if p in raw]
        if shared and all(r in raw for r in required):
            arguments = {p: raw[p] for p in shared}
            out.append(
                call_then_done(
                    name, f"tool {name}({', '.join(shared)}) from the item's fields", arguments, "tool"
                )
            )
            continue
        path_param = next((p for p in _PATH_PARAMS if p in props), None)
        content_param = next((p for p in _CONTENT_PARAMS if p in props), None)
        command_param = next((p for p in _COMMAND_PARAMS if p in props), None)
        if path_param and content_param and set(required) <= {path_param, content_param}:
            for path_field, path in strings:
                if not _PATHLIKE.match(path):
                    continue
                for text_field, _text in strings:
                    if text_field != path_field:
                        out.append(
                            call_then_done(
                                name,
                                f"tool {name} writing field {text_field!r} to the path in field {path_field!r}",
                                {path_param: path, content_param: raw[text_field]},
                                "file",
                            )
                        )
        elif command_param and set(required) <= {command_param}:
            for field, text in strings:
                if (
                    " " in text
                    and "\n" not in text.strip()
                    and len(text) <= 300
                    and _rank(field) < len(ANSWER_FIELDS)
                ):
                    out.append(
                        call_then_done(
                            name,
                            f"tool {name} running field {field!r} as a command",
                            {command_param: text},
                            "command",
                        )
                    )
    return out


def gold_positives(item: Any, tools: list[dict[str, Any]], prompt: str = "") -> list[Positive]:
    """Gold-answer probes for ``item``: tool calls built from its fields, structured fields as JSON, then each
    scalar field in each answer shape, the common ones first, then those its ``prompt`` asks for; last, an
    answer written to the file the prompt names."""
    positives = _tool_positives(item, tools)
    for name, kind, value in structured_fields(item):
        for text in structured_renderings(kind, value):
            for _shape, template in STRUCTURED_FORMATS:
                answer = template.format(v=text)
                positives.append(
                    Positive(
                        f"field {name!r} ({kind}) answered as {answer[:80]!r}",
                        say(answer),
                        "field",
                        field=name,
                        value=json.dumps(value),
                        template=template,
                        kind=kind,
                    )
                )
    extra = prompt_formats(prompt)
    for name, text in scalar_fields(item):
        # The shape's own template, not the answer with the value replaced back: a one-letter gold ("A") also
        # occurs in the shape's words ("Answer: A"), so replacing its first occurrence misplaces it.
        for _shape, template in (*ANSWER_FORMATS, *extra):
            answer = template.format(v=text)
            positives.append(
                Positive(
                    f"field {name!r} answered as {answer[:80]!r}",
                    say(answer),
                    "field",
                    field=name,
                    value=text,
                    template=template,
                )
            )
    return positives + _prompt_file_positives(item, tools, prompt)


def derivable(item: Any) -> bool:
    """Whether the kit can say what a correct answer of ``item`` is: an answer-like field holding a number or a
    short one-line string, or a structured (dict / list) answer-like field. Otherwise, failing gold probes say
    nothing about the reward."""
    if not isinstance(item, dict):
        return False
    for key, value in item.items():
        if _rank(str(key)) >= len(ANSWER_FIELDS) or isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            return True
        if isinstance(value, str) and value.strip() and "\n" not in value.strip() and len(value) <= 80:
            return True
        if isinstance(value, (dict, list)) and value:
            return True
    return False
