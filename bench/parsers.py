"""Tool-call parser throughput, and the cost of adversarial input relative to ordinary input.

Run: ``.venv/bin/python bench/parsers.py [--size-mb 1.0] [--repeat 3]``

For every format it builds, from a fixed seed, about 1 MB of ordinary model output (prose and well-formed calls,
parsed one message at a time, and also as one 1 MB text) and several 1 MB adversarial texts: every prefix of a
rendered call (thousands of unclosed markers of each shape), the whole call repeated (alone, with prose between
the copies, and followed by inline code), markers followed by deeply nested brackets, markers among code fences,
the GLM shape that made upstream's regex parser quadratic, and every format's markers salted together. It prints
MB/s for the ordinary corpus and, per format, the worst ratio adversarial-time / ordinary-1MB-time measured in
this same run (the target is <= 3: linear time whatever the model emits).

``auto`` reads every format, so it has no output of its own: each adversarial text is compared with the ordinary
1 MB text of the format ``auto`` reads that text as (``detect_format``; hermes when none), parsed by ``auto`` too.
Until this was changed, every ``auto`` ratio was taken against hermes's ordinary text, the fastest format to read,
so a qwen3_coder-shaped input scored 10.25 for ``auto`` while the same parse scored 5.2 for qwen3_coder: the
time was the same, the baseline was not. (Its "msgs" and "1MB" columns are still hermes output, what ``auto``
renders.)

Runs are timed with the garbage collector paused (after a full collection), as ``timeit`` does. With it running,
one full collection of the whole process heap (about 60 ms here, proportional to everything the process has
imported, not to the text) lands on whichever run happens to cross CPython's threshold, ordinary or adversarial,
and made the ratios swing between 7 and 11 from one run to the next. ``--with-gc`` times with it running.

``--upstream DIR`` compares with upstream hermes-agent's parsers instead: DIR holds a copy of upstream's
``environments/tool_call_parsers/`` package (fetched by hand into a temp folder, never committed; it needs
``openai`` importable). For every format both have, in one run, interleaved, it prints our time / upstream's time
for (1) replies with no tool call (final answers: prose, Markdown with code and braces, reasoning), each parsed
alone, and (2) each adversarial text above (``--size-mb`` defaults to 0.1 here: upstream is quadratic on some),
with the worst ratio, and the adversarial texts where upstream is faster (where we return more calls than upstream,
also the time of building that many call objects alone over upstream's parse: a floor for that text).
"""

from __future__ import annotations

import argparse
import gc
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_envs.parsers import get_parser, list_parsers
from hermes_envs.parsers.auto import detect_format

ALIASES = ("qwen", "deepseek_v31", "llama4_json", "deepseek_dsml", "deepseek_v32")
FORMATS = [n for n in list_parsers() if n not in ALIASES]
MARKERS = [
    "<tool_call>", "</tool_call>", "<longcat_tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<function=f>",
    "<parameter=k>", "</parameter>", "</function>", "<arg_key>k</arg_key>", "<arg_value>", "</arg_value>",
    "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
    "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
    "```\n", '{"name": "f", "arguments": {"a": "', "[", "{", '"',
]  # fmt: skip


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(n))


def _calls(rng: random.Random) -> list[tuple[str, dict]]:
    calls = []
    for _ in range(rng.randint(1, 3)):
        args = {
            "path": f"/work/{_words(rng, 1)}.py",
            "content": "\n".join(_words(rng, rng.randint(3, 12)) for _ in range(rng.randint(1, 20))),
            "limit": rng.randint(0, 1000),
            "options": {"recursive": rng.random() < 0.5, "tags": [_words(rng, 1) for _ in range(3)]},
        }
        calls.append((rng.choice(["write_file", "read_file", "search"]), args))
    return calls


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "limit": {"type": "integer"},
                    "options": {"type": "object"},
                },
            },
        },
    }
    for name in ("write_file", "read_file", "search")
]


def ordinary_messages(name: str, size: int) -> list[str]:
    rng = random.Random(1234)
    parser = get_parser(name)
    out, total = [], 0
    while total < size:
        if rng.random() < 0.3:
            text = "\n\n".join(_words(rng, 40) for _ in range(rng.randint(1, 6)))  # a plain answer
        else:
            content = None if name.startswith("llama") else _words(rng, rng.randint(0, 40))
            text = parser.render(content, _calls(rng))
        out.append(text)
        total += len(text)
    return out


def ordinary_text(name: str, size: int) -> str:
    """One ~size text: the ordinary messages one after another (prose, then calls, then prose ...).

    Llama's format only allows calls at the very start, so its text is one long list of calls instead.
    """
    if name.startswith("llama"):
        rng = random.Random(99)
        calls: list[tuple[str, dict]] = []
        text = ""
        while len(text) < size:
            calls += _calls(rng) * 8
            text = get_parser(name).render(None, calls)
        return text
    return "\n\n".join(ordinary_messages(name, size))


def adversarial_texts(name: str, size: int) -> dict[str, str]:
    parser = get_parser(name)
    one = parser.render(None, [("write_file", {"path": "a", "content": "x\ny", "limit": 3})])
    texts = {}
    cuts = sorted({max(1, len(one) * k // 12) for k in range(1, 12)})
    for cut in cuts:  # thousands of calls cut at the same point
        piece = one[:cut]
        texts[f"prefix{cut:03d}"] = piece * (size // len(piece) + 1)
    # the whole call, again and again (a model looping on a complete call), and with prose between the copies
    texts["calls"] = one * (size // len(one) + 1)
    texts["calls+prose"] = (one + "\n\nx\n\n") * (size // (len(one) + 5) + 1)
    # ... ending in inline code: a reader that checks the whole rest of the text for backticks before building
    # the copies it counted, and then reads them one by one, is quadratic here
    texts["calls+tick"] = one * (size // len(one) - 1) + "`x`"
    marker = one[: max(1, len(one) // 6)]
    opener = _opener(one)
    texts["openers"] = (opener + " ") * (size // (len(opener) + 1) + 1)  # repeated unclosed openers
    # a call whose first string never closes: every later quote flips the decoder's idea of what is a string
    texts["unclosed-str"] = (opener + '{"name": "f", "arguments": {"a": "' + "x" * 40) * (size // 100 + 1)
    texts["one-open-str"] = (
        opener + '{"name": "f", "arguments": {"a": "' + _words(random.Random(3), size // 5)
    )
    texts["nested"] = (marker + "[" * 5000 + "{" * 5000) * (size // 10_000 + 1)
    texts["deep1"] = marker + "[" * size
    texts["glm-shape"] = "<tool_call>f\n<arg_key>k</arg_key>\n<arg_value>" * (size // 44 + 1)
    texts["qwen-shape"] = "<tool_call>\n<function=f>\n<parameter=k>\nv\n</parameter>\n</function>\nx" * (
        size // 70 + 1
    )
    # openings whose name never ends (no ">" or newline): qwen3_coder's head pattern read the rest of the text
    # from each one (minutes for 1 MB)
    texts["unended-names"] = "<function=f <parameter=k " * (size // 25 + 1)
    rng = random.Random(7)
    texts["salted"] = "".join(rng.choice(MARKERS) + _words(rng, rng.randint(0, 3)) for _ in range(size // 12))
    texts["fences"] = ("```\n" + marker + "\n") * (size // (len(marker) + 5) + 1)
    return {k: v[:size] for k, v in texts.items()}


def _opener(rendered: str) -> str:
    """The format's opening marker: the rendered call up to the first character that belongs to the call itself."""
    for stop in ("{", "\n", "get", "write_file", "functions."):
        at = rendered.find(stop, 1)
        if at > 0:
            return rendered[:at]
    return rendered[:12]


PAUSE_GC = True
# CPU time of this process: on a machine shared with other jobs, wall-clock time also counts the time the
# scheduler gave to them, which made the ratios swing by 3x from one run to the next (--wall for wall-clock).
CLOCK = time.process_time


def best_time(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        if PAUSE_GC:
            gc.disable()
        try:
            start = CLOCK()
            fn()
            best = min(best, CLOCK() - start)
        finally:
            gc.enable()
    return best


def plain_replies(n: int = 300) -> list[str]:
    """Final answers with no tool call: prose, Markdown (a fenced code block with braces and brackets, inline
    code, a table), and a reasoning block before the answer, from a fixed seed."""
    rng = random.Random(42)
    out = []
    for i in range(n):
        prose = "\n\n".join(_words(rng, rng.randint(20, 60)) for _ in range(rng.randint(1, 4)))
        if i % 3 == 1:
            code = f'def f(x):\n    return {{"a": [x, {rng.randint(0, 9)}], "b": None}}\n'
            prose += f"\n\nUse `f()` like this:\n\n```python\n{code}```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
        elif i % 3 == 2:
            prose = f"<think>\n{_words(rng, 40)}\n</think>\n\n{prose}"
        out.append(prose)
    return out


UPSTREAM_NAMES = {"qwen": "hermes"}  # our name -> upstream's, where they differ


def _floor(ours: object, theirs: object, text: str, t_up: float, repeat: int) -> str:
    """`` (N calls vs M; building N alone R)`` when we return more calls than upstream: the time of building that
    many call objects alone, over upstream's whole parse (a floor no reading speed removes); else ``""``."""
    from hermes_envs.parsers._calls import make_tool_call

    n = len(ours.parse(text)[1] or [])  # type: ignore[attr-defined]
    m = len(theirs.parse(text)[1] or [])  # type: ignore[attr-defined]
    if n <= m:
        return ""
    t_build = best_time(
        lambda: [make_tool_call("write_file", '{"path": "a", "limit": 3}') for _ in range(n)], repeat
    )
    return f" ({n} calls vs {m}; building {n} alone {t_build / t_up:.1f})"


def compare_upstream(upstream_dir: str, ns: argparse.Namespace) -> int:
    """Ours / upstream's time, per format, on replies without a call and on the adversarial texts."""
    import os

    sys.path.insert(0, upstream_dir)
    import environments.tool_call_parsers as up  # upstream's copy, first on the path

    if not str(Path(up.__file__).resolve()).startswith(str(Path(upstream_dir).resolve())):
        raise SystemExit(f"environments.tool_call_parsers came from {up.__file__}, not {upstream_dir}")
    size = int((ns.size_mb if ns.size_mb_given else 0.1) * 1_000_000)
    load = os.getloadavg()
    print(
        f"ours / upstream, CPU time, best of {ns.repeat} interleaved; load average {load[0]:.2f} {load[1]:.2f}"
    )
    print(f"adversarial texts of {size / 1e6:g} MB\n")
    print(f"{'format':<14}{'no call':>9}{'worst adversarial':>30}{'ratio':>8}   upstream faster on")
    replies = plain_replies()
    worst_plain = 0.0
    for name in [n for n in FORMATS if not ns.formats or n in ns.formats.split(",")]:
        up_name = UPSTREAM_NAMES.get(name, name)
        if up_name not in up.PARSER_REGISTRY:
            continue
        ours, theirs = get_parser(name), up.get_parser(up_name)
        for reply in replies:  # the same answer: no call found by either
            assert ours.parse(reply)[1] is None and theirs.parse(reply)[1] is None, (name, reply[:80])
        t_ours = t_up = float("inf")
        for _ in range(ns.repeat):
            t_ours = min(t_ours, best_time(lambda p=ours: [p.parse(r) for r in replies], 1))
            t_up = min(t_up, best_time(lambda p=theirs: [p.parse(r) for r in replies], 1))
        plain = t_ours / t_up
        worst_plain = max(worst_plain, plain)
        worst_label, worst, faster = "", 0.0, []
        for label, text in adversarial_texts(name, size).items():
            a_ours = a_up = float("inf")
            for _ in range(ns.repeat):
                a_ours = min(a_ours, best_time(lambda p=ours, t=text: p.parse(t), 1))
                a_up = min(a_up, best_time(lambda p=theirs, t=text: p.parse(t), 1))
            ratio = a_ours / a_up
            if ratio > 1:
                faster.append(f"{label} {ratio:.1f}" + _floor(ours, theirs, text, a_up, ns.repeat))
            if ratio > worst:
                worst_label, worst = label, ratio
        print(
            f"{name:<14}{plain:>9.2f}{worst_label:>30}{worst:>8.2f}   {', '.join(faster) or '-'}", flush=True
        )
    print(f"\nworst no-call ratio: {worst_plain:.2f} (target <= 1)")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_known_args(argv)[1]
    opts = argparse.ArgumentParser()
    opts.add_argument("--size-mb", type=float, default=None)
    opts.add_argument(
        "--upstream", default="", help="a folder holding upstream's environments/ (compare with it)"
    )
    opts.add_argument("--repeat", type=int, default=3)
    opts.add_argument("--formats", default="", help="comma-separated formats to run (default: all)")
    opts.add_argument("--with-gc", action="store_true", help="time with the garbage collector running")
    opts.add_argument(
        "--wall", action="store_true", help="time wall-clock instead of this process's CPU time"
    )
    ns = opts.parse_args(args)
    global PAUSE_GC, CLOCK
    PAUSE_GC = not ns.with_gc
    CLOCK = time.perf_counter if ns.wall else time.process_time
    ns.size_mb_given = ns.size_mb is not None
    if ns.upstream:
        return compare_upstream(ns.upstream, ns)
    if ns.size_mb is None:
        ns.size_mb = 1.0
    size = int(ns.size_mb * 1_000_000)
    gc_note = ("collector running" if ns.with_gc else "collector paused") + (
        ", wall clock" if ns.wall else ", CPU time"
    )
    print(f"tool-call parsers, {ns.size_mb:g} MB per corpus, best of {ns.repeat}, {gc_note}\n")
    print(f"{'format':<14}{'msgs MB/s':>10}{'1MB MB/s':>10}{'worst adversarial':>26}{'ratio':>8}")
    worst_overall = 0.0
    for name in [n for n in FORMATS if not ns.formats or n in ns.formats.split(",")]:
        parser = get_parser(name)
        messages = ordinary_messages(name, size)
        mb = sum(len(m) for m in messages) / 1e6
        t_msgs = best_time(lambda p=parser, ms=messages: [p.parse(m, TOOLS) for m in ms], ns.repeat)
        big = ordinary_text(name, size)
        t_big = best_time(lambda p=parser, t=big: p.parse(t, TOOLS), ns.repeat)
        worst_label, worst = "", 0.0
        baselines = {name: big}
        for label, text in adversarial_texts(name, size).items():
            base = name
            if name == "auto":  # against the ordinary output of the format auto reads this text as
                base = (detect_format(text) or ["hermes"])[0]
                if base not in baselines:
                    baselines[base] = ordinary_text(base, size)
            ordinary = baselines[base]
            # interleave with the ordinary text so that load from other processes hits both alike
            t_adv, t_ord = float("inf"), float("inf")
            for _ in range(ns.repeat):
                t_adv = min(t_adv, best_time(lambda p=parser, t=text: p.parse(t, TOOLS), 1))
                t_ord = min(t_ord, best_time(lambda p=parser, t=ordinary: p.parse(t, TOOLS), 1))
            if base == name:
                t_ord = min(t_ord, t_big)
            ratio = (t_adv / len(text)) / (t_ord / len(ordinary))
            if ratio > worst:
                worst_label, worst = (label if base == name else f"{label} ({base})"), ratio
        worst_overall = max(worst_overall, worst)
        print(f"{name:<14}{mb / t_msgs:>10.1f}{len(big) / 1e6 / t_big:>10.1f}{worst_label:>26}{worst:>8.2f}")
    print(f"\nworst adversarial/ordinary ratio: {worst_overall:.2f} (target <= 3)")
    return 0 if worst_overall <= 3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
