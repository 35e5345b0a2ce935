#!/usr/bin/env python
"""Build the small offline tokenizer shipped in ``hermes_envs/testing/assets/tokenizer/``.

The tokenizer exists so tests and local runs never need the Hugging Face Hub: atroposlib's ``BaseEnv`` always
calls ``AutoTokenizer.from_pretrained(config.tokenizer_name)``, and pointing ``tokenizer_name`` at this folder
loads in well under a second with no network.

What it is:

* byte-level BPE (GPT-2 style pre-tokenizer, newlines isolated, no normalizer), so ``decode(encode(s)) == s`` for every string;
* about 3k tokens, trained on the small corpus embedded below (prose, Python, JSON, tool-call markup);
* ChatML special tokens ``<|im_start|>``, ``<|im_end|>`` (eos) and ``<|endoftext|>`` (pad);
* Hermes tool markup (``<tool_call>``, ``<tool_response>``, ``<think>``, ``<tools>`` and their closers) as added
  NON-special tokens: each is one id, and they survive ``decode(..., skip_special_tokens=True)``;
* a ChatML/Hermes chat template (Qwen2.5 style) that is prefix-consistent (see ``CHAT_TEMPLATE``).

The build is deterministic: running it twice gives byte-identical files. Usage::

    python scripts/build_tokenizer.py            # (re)write the asset folder
    python scripts/build_tokenizer.py --check    # exit 1 if the committed files differ from a fresh build
    python scripts/build_tokenizer.py --out DIR  # write somewhere else
"""

from __future__ import annotations

import argparse
import filecmp
import itertools
import json
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "hermes_envs" / "testing" / "assets" / "tokenizer"

VOCAB_SIZE = 3072  # an upper bound: the corpus runs out of merges a little below it
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP_TOKENS = [
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
    "<tools>",
    "</tools>",
]
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"
ADDITIONAL_SPECIAL = [t for t in SPECIAL_TOKENS if t not in (EOS_TOKEN, PAD_TOKEN)]
OUTPUT_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")

# ChatML / Hermes template in the style of Qwen2.5, with one deliberate difference: it is PREFIX-CONSISTENT.
# For every k, render(messages[:k]) is a prefix of render(messages[:k+1]) -- with add_generation_prompt=True on
# the left side when messages[k] is an assistant message. Training masks are built on that property.
# Qwen2.5 closes a group of consecutive tool messages with <|im_end|> after the LAST one in the list, so a
# transcript cut between two tool results is not a prefix of the longer one. Here the <|im_end|>\n that closes a
# tool-result turn is written by whatever comes NEXT (the next non-tool message, or the generation prompt).
# Consequence: a render that ends with a tool message and add_generation_prompt=False leaves that user turn open.
CHAT_TEMPLATE = r"""{%- macro render_content(content) -%}
    {%- if content is none -%}
    {%- elif content is string -%}
        {{- content -}}
    {%- else -%}
        {%- for part in content -%}
            {%- if part is string -%}{{- part -}}{%- elif part.text is defined -%}{{- part.text -}}{%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro -%}
{%- set has_system = messages | length > 0 and messages[0].role == 'system' -%}
{%- if tools -%}
    {{- '<|im_start|>system\n' -}}
    {%- if has_system -%}{{- render_content(messages[0].content) + '\n\n' -}}{%- endif -%}
    {{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' -}}
    {{- 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>' -}}
    {%- for tool in tools -%}
        {{- '\n' + (tool | tojson) -}}
    {%- endfor -%}
    {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- elif has_system -%}
    {{- '<|im_start|>system\n' + render_content(messages[0].content) + '<|im_end|>\n' -}}
{%- endif -%}
{%- for message in messages -%}
    {%- set prev_role = messages[loop.index0 - 1].role if loop.index0 > 0 else none -%}
    {%- if prev_role == 'tool' and message.role != 'tool' -%}
        {{- '<|im_end|>\n' -}}
    {%- endif -%}
    {%- if message.role == 'system' and loop.first -%}
    {%- elif message.role == 'assistant' -%}
        {{- '<|im_start|>assistant\n' + render_content(message.content) -}}
        {%- for tool_call in message.tool_calls or [] -%}
            {%- if tool_call.function is defined -%}{%- set tool_call = tool_call.function -%}{%- endif -%}
            {%- if not loop.first or render_content(message.content) -%}{{- '\n' -}}{%- endif -%}
            {{- '<tool_call>\n{"name": "' + tool_call.name + '", "arguments": ' -}}
            {%- if tool_call.arguments is string -%}
                {{- tool_call.arguments -}}
            {%- else -%}
                {{- tool_call.arguments | tojson -}}
            {%- endif -%}
            {{- '}\n</tool_call>' -}}
        {%- endfor -%}
        {{- '<|im_end|>\n' -}}
    {%- elif message.role == 'tool' -%}
        {%- if prev_role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}
        {{- '\n<tool_response>\n' + render_content(message.content) + '\n</tool_response>' -}}
    {%- else -%}
        {{- '<|im_start|>' + message.role + '\n' + render_content(message.content) + '<|im_end|>\n' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {%- if messages | length > 0 and messages[-1].role == 'tool' -%}{{- '<|im_end|>\n' -}}{%- endif -%}
    {{- '<|im_start|>assistant\n' -}}
{%- endif -%}"""

# ---------------------------------------------------------------------------------------------------------------
# Training corpus. Fixed text only (no randomness, nothing read from the machine) so the build is reproducible.
# ---------------------------------------------------------------------------------------------------------------

PROSE = """\
The quick brown fox jumps over the lazy dog. A reinforcement learning environment gives an agent a task, lets it
act, and scores the result. In this project the agent is a language model that calls tools: it reads the user's
request, decides which function to call, reads the tool's response, and answers. Each episode is a conversation.
The environment collects groups of trajectories, computes a reward for each one, and sends them to the trainer.
Good environments are deterministic, fast, and easy to test. They never depend on the network during tests; a fake
model server replays scripted answers so that every step can be checked. When something fails, the error message
should say what went wrong and how to fix it. Write small functions, name things clearly, and keep the data you
send to the trainer exactly as the model saw it: the tokens, the masks, and the log probabilities.
The weather in Paris today is sunny with a high of 24 degrees. Tomorrow it will rain in the afternoon.
Please summarize the following document in three sentences. What is the capital of France? It is Paris.
How many files are in the current directory? Let me check by listing them. There are twelve files.
I could not find that file. Would you like me to create it? Yes, please create it with the default settings.
Thank you! You're welcome. Is there anything else I can help you with today? No, that's all for now.
The model answered correctly on the first try, so the reward is one. The second answer was wrong, so its reward is
zero. The advantage of each answer is its reward minus the mean reward of the group, divided by the spread.
Search the web for the latest release notes, then open the first result and read the changelog section.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 256 1024 2048 3.14159 2.71828 -1 1e-5 2026-11-30 12:30:45 UTC.
"""

WORDS = """\
the be to of and a in that have it for not on with he as you do at this but his by from they we say her she or
an will my one all would there their what so up out if about who get which go me when make can like time no just
him know take people into year your good some could them see other than then now look only come its over think
also back after use two how our work first well way even new want because any these give day most us is was are
been has had were said did made found used called may each part number sound word write find long down side
between important until children feet land since world own page answer school grow study still learn plant
cover food sun four thought let keep eye never last door tree cross farm hard start might story saw far sea draw
left late run while press close night real life few north open seem together next white begin got walk example
ease paper group always music those both mark often letter mile river car care second enough plain girl usual
young ready above ever red list though feel talk bird soon body dog family direct pose leave song measure state
product black short numeral class wind question happen complete ship area half rock order fire south problem
piece told knew pass farm top whole king size heard best hour better true during hundred five remember step
early hold west ground interest reach fast verb sing listen six table travel less morning ten simple several
vowel toward war lay against pattern slow center love person money serve appear road map science rule govern
pull cold notice voice fall power town fine certain fly unit lead dry wonder machine note wait plan figure star
box noun field rest correct able pound done beauty drive stood contain front teach week final gave green quick
develop sleep warm free minute strong special mind behind clear tail produce fact street inch lot nothing course
stay wheel full force blue object decide surface deep moon island foot yet busy test record boat common gold
possible plane age wonder laugh thousand ago ran check game shape yes hot miss brought heat snow bed bring sit
perhaps fill east weight language among environment agent model reward trajectory episode training trainer
policy gradient advantage token tokenizer template message assistant system user function argument parameter
response request server client config configuration default value error exception warning debug info logging
timeout retry connection network offline online sandbox directory file path folder workspace command execute
process thread async await coroutine callback handler result status success failure message content document
summary search query index database table column schema validate validation parse parser format string integer
boolean number array object dictionary mapping sequence iterator generator decorator property attribute method
instance module package import export install version release update upgrade dependency requirement library
framework benchmark metric evaluation score accuracy precision baseline experiment dataset sample batch epoch
learning rate optimizer checkpoint inference generation completion prompt context window length maximum minimum
temperature probability distribution logprob logprobs mask masks masked weather city country capital population
weather temperature humidity forecast email address subject calendar event meeting schedule reminder tomorrow
yesterday today monday tuesday wednesday thursday friday saturday sunday january february march april june july
august september october november december morning evening afternoon midnight hello please thanks sorry welcome
""".split()

UNICODE = """\
Café, naïve, façade, jalapeño, Zürich, São Paulo, Kraków, Ærø, Øresund, ß, İstanbul.
Привет, как дела? Всё хорошо, спасибо. Γειά σου κόσμε. שלום עולם. مرحبا بالعالم. नमस्ते दुनिया.
你好，世界！今天天气很好。我们去公园散步吧。こんにちは、世界。今日はいい天気ですね。안녕하세요, 세계.
Emoji: 😀 😂 🎉 🚀 ✅ ❌ ⚠️ 👍🏽 👩‍💻 🇫🇷. Math: ∑ ∫ √ ∞ ≈ ≠ ≤ ≥ → ← ⇒ ∀ ∃ ∈ λ π θ μ σ Ω. Quotes: “ ” ‘ ’ « » — – …
"""

CODE = '''\
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ToolCall:
    """One function call requested by the model."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


def parse_tool_calls(text: str) -> list[ToolCall]:
    calls = []
    for chunk in text.split("<tool_call>")[1:]:
        body, _, _ = chunk.partition("</tool_call>")
        try:
            data = json.loads(body.strip())
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid tool call: {exc}") from exc
        calls.append(ToolCall(name=data["name"], arguments=data.get("arguments", {})))
    return calls


async def run_episode(env, server, item, max_turns: int = 8) -> float:
    messages = [{"role": "user", "content": item["question"]}]
    for turn in range(max_turns):
        response = await server.chat_completion(messages=messages, tools=env.tools, temperature=0.7)
        message = response.choices[0].message
        messages.append({"role": "assistant", "content": message.content or ""})
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            result = await env.call_tool(call.function.name, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})
    return env.score(messages, item)


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def read_file(self, path: str) -> str:
        target = (self.root / path).resolve()
        if not str(target).startswith(str(self.root)):
            raise PermissionError(f"{path!r} is outside the sandbox")
        return target.read_text(encoding="utf-8")

    def write_file(self, path: str, content: str) -> int:
        target = (self.root / path).resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        return target.write_text(content, encoding="utf-8")


if __name__ == "__main__":
    print(parse_tool_calls('<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>'))
    for i in range(10):
        if i % 2 == 0 and i != 4 or i >= 8:
            os.environ.setdefault("KEY", str(i))
'''

SHELL = """\
$ ls -la
total 48
drwxr-xr-x  5 user user 4096 Nov 30 12:00 .
-rw-r--r--  1 user user  220 Nov 30 12:00 README.md
$ python -m pytest -q tests/
........................................                                 [100%]
40 passed in 1.23s
$ git status --short
 M src/main.py
?? notes.txt
$ cat config.yaml
env:
  tokenizer_name: ./tokenizer
  group_size: 8
  max_token_length: 2048
Traceback (most recent call last):
  File "main.py", line 12, in <module>
KeyError: 'name'
"""

TOOLS = [
    {"name": "get_weather", "description": "Get the current weather for a city.", "args": {"city": "Paris", "unit": "celsius"}},
    {"name": "search_web", "description": "Search the web and return the top results.", "args": {"query": "atropos rl environments", "max_results": 5}},
    {"name": "read_file", "description": "Read a text file from the workspace.", "args": {"path": "src/main.py"}},
    {"name": "write_file", "description": "Write text to a file in the workspace.", "args": {"path": "notes.txt", "content": "hello world\\n"}},
    {"name": "run_python", "description": "Run Python code and return stdout.", "args": {"code": "print(sum(range(10)))"}},
    {"name": "calculator", "description": "Evaluate an arithmetic expression.", "args": {"expression": "(12 + 30) * 2"}},
    {"name": "list_files", "description": "List files in a directory.", "args": {"directory": ".", "recursive": False}},
    {"name": "send_email", "description": "Send an email message.", "args": {"to": "alice@example.com", "subject": "Report", "body": "See attached."}},
]  # fmt: skip

RESULTS = [
    '{"temperature": 24, "condition": "sunny", "humidity": 0.41}',
    '[{"title": "Atropos", "url": "https://github.com/NousResearch/atropos"}]',
    "def main():\n    return 0\n",
    '{"ok": true, "bytes_written": 12}',
    "45\n",
    "84",
    '["README.md", "src", "tests", "pyproject.toml"]',
    '{"error": "permission denied", "code": 403}',
]


def _tool_schema(tool: dict) -> dict:
    props = {
        key: {"type": "integer" if isinstance(v, int) and not isinstance(v, bool) else "boolean" if isinstance(v, bool) else "string"}
        for key, v in tool["args"].items()
    }  # fmt: skip
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": {"type": "object", "properties": props, "required": list(tool["args"])},
        },
    }


def _transcripts() -> list[str]:
    """ChatML transcripts with tool calls, written with the same markup the chat template produces."""
    out = []
    schemas = "\n".join(json.dumps(_tool_schema(t), ensure_ascii=False) for t in TOOLS)
    system = (
        "<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to "
        "assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML "
        f"tags:\n<tools>\n{schemas}\n</tools>\n\nFor each function call, return a json object with function name "
        'and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
        '"arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    )
    for tool, result in zip(TOOLS, RESULTS, strict=True):
        call = json.dumps({"name": tool["name"], "arguments": tool["args"]}, ensure_ascii=False)
        out.append(
            system
            + f"<|im_start|>user\nPlease {tool['description'].lower()}<|im_end|>\n"
            + "<|im_start|>assistant\n<think>\nThe user wants this, so I will call "
            + f"{tool['name']}.\n</think>\n<tool_call>\n{call}\n</tool_call><|im_end|>\n"
            + f"<|im_start|>user\n<tool_response>\n{result}\n</tool_response><|im_end|>\n"
            + f"<|im_start|>assistant\nHere is the result: {result}<|im_end|>\n<|endoftext|>"
        )
    return out


def _json_records() -> list[str]:
    keys = ["id", "name", "value", "score", "tokens", "masks", "messages", "role", "content", "reward"]
    values = [0, 1, -100, 0.5, True, None, "text", [1, 2, 3], {"a": 1}, "assistant"]
    records = []
    for n, (k1, k2) in enumerate(itertools.combinations(keys, 2)):
        obj = {k1: values[n % len(values)], k2: values[(n * 7 + 3) % len(values)], "index": n}
        records.append(json.dumps(obj))
        records.append(json.dumps(obj, indent=2))
    return records


def corpus() -> list[str]:
    """All training texts, in a fixed order."""
    texts = [PROSE, UNICODE, CODE, SHELL]
    # Each word twice, bare and after a space, so both forms become tokens.
    texts += [" ".join(word for word in WORDS for _ in range(2)), "\n".join(WORDS * 2)]
    texts += _transcripts()
    texts += _json_records()
    # Repeat the core material so frequent English/code merges are learned before rare JSON ones.
    texts += [PROSE, CODE] * 3
    return texts


# ---------------------------------------------------------------------------------------------------------------


def build_backend():
    """Train the ``tokenizers.Tokenizer`` (byte-level BPE)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    # Every "\n" is its own pre-token, so a newline is always a token boundary: the chat template ends each
    # message header/turn with "\n", and this makes prefix consistency hold at the TOKEN level too, whatever the
    # next message's content starts with (GPT-2's regex alone would merge "\n" with following whitespace).
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split("\n", behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE - len(MARKUP_TOKENS),
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS],
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    return tok


def build(out_dir: Path) -> list[Path]:
    """Write the tokenizer folder to ``out_dir``; return the written files."""
    from transformers import PreTrainedTokenizerFast

    out_dir.mkdir(parents=True, exist_ok=True)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=build_backend(),
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        extra_special_tokens=ADDITIONAL_SPECIAL,
        chat_template=CHAT_TEMPLATE,
        clean_up_tokenization_spaces=False,
        model_max_length=32768,
        padding_side="right",
    )
    fast.save_pretrained(str(out_dir), save_jinja_files=False)
    # Keep only the files we commit, with stable formatting.
    for path in out_dir.iterdir():
        if path.name not in OUTPUT_FILES:
            path.unlink()
    config = json.loads((out_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["chat_template"] = CHAT_TEMPLATE
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config["clean_up_tokenization_spaces"] = False
    config.pop("name_or_path", None)
    # transformers 5 writes "extra_special_tokens"; 4.x reads that key as a dict, so store the list under the
    # older "additional_special_tokens" name, which both major versions read.
    config.pop("extra_special_tokens", None)
    config["additional_special_tokens"] = ADDITIONAL_SPECIAL
    _write_json(out_dir / "tokenizer_config.json", config)
    special_map = {
        "additional_special_tokens": ADDITIONAL_SPECIAL,
        "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN,
    }
    _write_json(out_dir / "special_tokens_map.json", special_map)
    backend = json.loads((out_dir / "tokenizer.json").read_text(encoding="utf-8"))
    (out_dir / "tokenizer.json").write_text(
        json.dumps(backend, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    return [out_dir / name for name in OUTPUT_FILES]


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output folder (default: the package asset)"
    )
    parser.add_argument(
        "--check", action="store_true", help="compare a fresh build with --out; exit 1 on drift"
    )
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp))
            _, mismatch, errors = filecmp.cmpfiles(tmp, args.out, OUTPUT_FILES, shallow=False)
        if mismatch or errors:
            print(f"tokenizer out of date in {args.out}: {mismatch + errors}; run scripts/build_tokenizer.py")
            return 1
        print(f"tokenizer in {args.out} is up to date")
        return 0
    files = build(args.out)
    total = sum(p.stat().st_size for p in files)
    print(f"wrote {len(files)} files, {total / 1024:.1f} KiB, to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
