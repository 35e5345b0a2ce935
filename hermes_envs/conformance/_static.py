"""Static counterparts of checks: what the env file's source alone shows when the module cannot be imported.

A file that does not import offline (a missing package, a Hub download at import time, a stub base after a failed
import) used to get one finding, HC101, and every other check skipped behind it. The contract rules that need no
execution (method kinds, config_init's shape, ``name``, the ``__main__`` block, literal keys, AgentResult read as
a dict, a parser name that does not exist) are judged here from the syntax tree instead; each finding says so.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Severity

#: Check id -> its static counterpart (takes the session; reads only ``s.path`` and ``s.class_name``).
STATIC: dict[str, Callable[[Any], list[Finding]]] = {}

#: The note on an outcome judged from the source.
STATIC_NOTE = "judged from the source: the module could not be imported (see HC101/HC102)"

ASYNC_METHODS = ("setup", "get_next_item", "compute_reward", "evaluate", "wandb_log")
SYNC_METHODS = ("format_prompt",)
#: What an env subclassing the contract's base directly must implement (the bases' abstract methods).
_REQUIRED = {
    "HermesAgentBaseEnv": ("setup", "get_next_item", "format_prompt", "compute_reward", "evaluate"),
    "BaseEnv": ("setup", "get_next_item", "evaluate"),
}
#: AgentResult attributes authors reach for that it does not have.
_NOT_ON_RESULT = ("final_response", "tool_calls", "tools_used", "output", "response")


def static(check_id: str) -> Callable[[Callable[[Any], list[Finding]]], Callable[[Any], list[Finding]]]:
    """Register ``fn`` as the static counterpart of ``check_id``."""

    def register(fn: Callable[[Any], list[Finding]]) -> Callable[[Any], list[Finding]]:
        STATIC[check_id] = fn
        return fn

    return register


def _tree(s: Any) -> ast.Module:
    source: str = s.path.read_text(encoding="utf-8")
    return ast.parse(source)


def _base_names(cls: ast.ClassDef) -> list[str]:
    return [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in cls.bases]


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def env_classes(s: Any) -> list[ast.ClassDef]:
    """The env classes of the file, read from its source: the ``::Class`` named, else every class whose base name
    ends in ``Env`` or that defines ``compute_reward`` / ``get_next_item``. NotApplicable when there is none."""
    found = []
    for node in ast.walk(_tree(s)):
        if not isinstance(node, ast.ClassDef):
            continue
        if s.class_name and node.name != s.class_name:
            continue
        methods = _methods(node)
        if any(b.endswith("Env") for b in _base_names(node)) or {"compute_reward", "get_next_item"} & set(
            methods
        ):
            found.append(node)
    if not found:
        raise NotApplicable("the source defines no env class to judge")
    return found


def _mark(message: str) -> str:
    return f"{message} (judged from the source: the module could not be imported, see HC101.)"


@static("HC103")
def method_kinds(s: Any) -> list[Finding]:
    """HC103 from the source: sync where the base awaits, async where it calls, and the bases' abstract methods."""
    findings = []
    classes = env_classes(s)
    defined_anywhere = {name for cls in classes for name in _methods(cls)}
    for cls in classes:
        methods = _methods(cls)
        for name in ASYNC_METHODS:
            fn = methods.get(name)
            if isinstance(fn, ast.FunctionDef):
                findings.append(
                    Finding(
                        "HC103",
                        _mark(
                            f"{cls.name}.{name} (line {fn.lineno}) should be `async def` (atroposlib awaits it); "
                            "got a plain `def`."
                        ),
                        f"write `async def {name}(...)`.",
                        subject=f"{cls.name}.{name}",
                    )
                )
        for name in SYNC_METHODS:
            fn = methods.get(name)
            if isinstance(fn, ast.AsyncFunctionDef):
                findings.append(
                    Finding(
                        "HC103",
                        _mark(
                            f"{cls.name}.{name} (line {fn.lineno}) should be a plain `def` (the base calls it "
                            "without await, so the prompt would be a coroutine object); got `async def`."
                        ),
                        f"write `def {name}(self, item) -> str:`.",
                        subject=f"{cls.name}.{name}",
                    )
                )
        for base in _base_names(cls):
            missing = [m for m in _REQUIRED.get(base, ()) if m not in defined_anywhere]
            if missing:
                findings.append(
                    Finding(
                        "HC103",
                        _mark(
                            f"{cls.name} should implement every abstract method of {base}; got "
                            f"{', '.join(missing)} missing."
                        ),
                        f"add `{'def' if missing[0] in SYNC_METHODS else 'async def'} {missing[0]}(...)` to "
                        f"{cls.name}.",
                        subject=cls.name,
                    )
                )
    return findings


@static("HC104")
def config_init_shape(s: Any) -> list[Finding]:
    """HC104 from the source: config_init a classmethod returning a pair whose second part is a list."""
    findings = []
    for cls in env_classes(s):
        fn = _methods(cls).get("config_init")
        if fn is None:
            continue
        decorators = {getattr(d, "id", getattr(d, "attr", "")) for d in fn.decorator_list}
        if "classmethod" not in decorators:
            findings.append(
                Finding(
                    "HC104",
                    _mark(f"{cls.name}.config_init (line {fn.lineno}) should be a @classmethod; got none."),
                    "decorate it with @classmethod (atroposlib calls it on the class).",
                    subject=f"{cls.name}.config_init",
                )
            )
        for ret in (n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None):
            value = ret.value
            if not isinstance(value, ast.Tuple) or len(value.elts) != 2:
                if isinstance(value, (ast.Call, ast.Constant, ast.Dict, ast.List)):
                    findings.append(
                        Finding(
                            "HC104",
                            _mark(
                                f"config_init() should return a (config, [APIServerConfig, ...]) pair; line "
                                f"{ret.lineno} returns `{ast.unparse(value)[:80]}`."
                            ),
                            "return `config, [APIServerConfig(...)]`.",
                            subject=f"{cls.name}.config_init",
                        )
                    )
                continue
            servers = value.elts[1]
            single = isinstance(servers, ast.Call) and getattr(
                servers.func, "id", getattr(servers.func, "attr", "")
            ).endswith("ServerConfig")
            if single or isinstance(servers, ast.Tuple):
                findings.append(
                    Finding(
                        "HC104",
                        _mark(
                            f"config_init() should return a LIST of APIServerConfig; line {ret.lineno} returns "
                            f"{'a tuple' if isinstance(servers, ast.Tuple) else 'a single APIServerConfig'}. "
                            "atroposlib treats a non-list as a baseline and talks to localhost:9004-9007, dropping "
                            "base_url and api_key, so --openai.base_url has no effect and `process` hangs."
                        ),
                        "wrap it in a list: `return config, [APIServerConfig(...)]`.",
                        subject=f"{cls.name}.config_init",
                    )
                )
    return findings


@static("HC105")
def name_set(s: Any) -> list[Finding]:
    """HC105 from the source: the class (or a class of the file it derives from) assigns a non-empty ``name``."""
    tree = _tree(s)
    by_name = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}

    def sets_name(cls: ast.ClassDef, seen: set[str]) -> bool:
        for stmt in cls.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == "name" for t in targets
            ):
                value = stmt.value
                return not (isinstance(value, ast.Constant) and not value.value)
        return any(
            sets_name(by_name[b], seen | {b}) for b in _base_names(cls) if b in by_name and b not in seen
        )

    return [
        Finding(
            "HC105",
            _mark(f"{cls.name}.name should be set; got no `name = ...` in the class."),
            f'add `name = "{cls.name.lower()}"` to the class.',
            Severity.WARNING,
        )
        for cls in env_classes(s)
        if not sets_name(cls, {cls.name})
        and not any(b in ("object",) for b in _base_names(cls))
        and any(b.endswith("Env") for b in _base_names(cls))
    ]


@static("HC106")
def main_block(s: Any) -> list[Finding]:
    """HC106 from the source: a ``__main__`` block calling ``cli()``."""
    tree = _tree(s)
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            if any(isinstance(n, ast.Attribute) and n.attr == "cli" for n in ast.walk(node)):
                return []
    name = env_classes(s)[0].name
    return [
        Finding(
            "HC106",
            _mark(
                f"{s.path.name} should end with a `__main__` block calling {name}.cli(); got none, so `python "
                f"{s.path.name} process ...` does nothing."
            ),
            f'add:\n    if __name__ == "__main__":\n        {name}.cli()',
            Severity.WARNING,
        )
    ]


@static("HC401")
def result_is_object(s: Any) -> list[Finding]:
    """HC401 from the source: compute_reward indexing its AgentResult like a dict, or reading names it lacks."""
    findings = []
    source = s.path.read_text(encoding="utf-8")
    for cls in env_classes(s):
        fn = _methods(cls).get("compute_reward")
        if fn is None:
            continue
        params = [a.arg for a in fn.args.args]
        if len(params) < 3:
            continue
        result = params[2]  # (self, item, result, ctx)
        for node in ast.walk(fn):
            problem = ""
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id == result
                and isinstance(node.slice, ast.Constant)
            ):
                text = ast.get_source_segment(source, node) or ast.unparse(node)
                problem = f"`{text}` indexes it like a dict (AgentResult is a dataclass)"
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == result
                and node.attr in (*_NOT_ON_RESULT, "get", "keys", "items")
            ):
                text = ast.get_source_segment(source, node) or ast.unparse(node)
                problem = f"`{text}` reads a name AgentResult does not have"
            if problem and isinstance(node, ast.expr):  # (a Subscript or an Attribute: it has a line)
                findings.append(
                    Finding(
                        "HC401",
                        _mark(
                            f"compute_reward should read AgentResult's attributes; line {node.lineno}: {problem}."
                        ),
                        "use result.messages / result.turns_used / result.finished_naturally / result.tool_errors; "
                        "`from hermes_envs import final_response` gives the final answer.",
                        subject=f"{cls.name}.compute_reward:{node.lineno}",
                    )
                )
    return findings


@static("HC801")
def parser_exists(s: Any) -> list[Finding]:
    """HC801 from the source: a ``tool_call_parser="name"`` literal naming no registered parser."""
    from hermes_envs.parsers import list_parsers

    names = set(list_parsers())
    findings = []
    for node in ast.walk(_tree(s)):
        if not isinstance(node, ast.keyword) or node.arg != "tool_call_parser":
            continue
        if (
            isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and node.value.value not in names
        ):
            findings.append(
                Finding(
                    "HC801",
                    _mark(
                        f"tool_call_parser should name a registered parser; got {node.value.value!r} at line "
                        f"{node.value.lineno} (available: {', '.join(sorted(names))})."
                    ),
                    "set tool_call_parser to the parser of your model's chat format, e.g. 'hermes'.",
                    subject=f"tool_call_parser={node.value.value!r}",
                )
            )
    return findings


def item_keys(path: Any) -> list[str]:
    """The keys the env's methods read from an item (``item["word"]``, ``item.get("answer")``), in source order:
    what a stand-in item for ``--items`` must hold. Empty when the source does not say."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return []
    keys: list[str] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name not in (
            "format_prompt",
            "compute_reward",
            "collect_trajectory",
        ):
            continue
        params = [a.arg for a in fn.args.args]
        name = params[1] if len(params) > 1 else None  # (self, item, ...)
        for node in ast.walk(fn):
            key = None
            if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == name:
                key = node.slice.value if isinstance(node.slice, ast.Constant) else None
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and getattr(node.func.value, "id", None) == name
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                key = node.args[0].value
            if isinstance(key, str) and key not in keys:
                keys.append(key)
    return keys


__all__ = ["STATIC", "STATIC_NOTE", "env_classes", "item_keys", "static"]
