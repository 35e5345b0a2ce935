"""Every error a user can trigger is a HermesEnvsError (and still the fitting builtin).

The test walks the AST of ``hermes_envs`` and counts ``raise <Builtin>(...)`` per file. A file may hold at most the
bare raises listed in ``KNOWN`` (each with the reason it stays a builtin); a new bare raise fails here. To fix one:
raise a subclass from ``hermes_envs.errors`` (``ConfigError``, ``ArgumentTypeError``, ``MissingFileError``,
``UsageError`` ...) that inherits the same builtin, so ``except ValueError`` keeps working.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from pathlib import Path

import pytest

import hermes_envs
from hermes_envs import errors

PACKAGE = Path(hermes_envs.__file__).parent
_BUILTIN_ERRORS = {
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)
}

# Bare builtin raises that stay, per file: (builtin, how many, why).
KNOWN: dict[str, list[tuple[str, int, str]]] = {
    # Module __getattr__ must raise AttributeError (the import protocol).
    "__init__.py": [("AttributeError", 1, "module __getattr__ protocol")],
    "_lazy.py": [("AttributeError", 1, "module __getattr__ protocol")],
    # OS failures passed through with errno (not a user mistake).
    "testing/_netns.py": [
        (
            "OSError",
            5,
            "unshare/setns failed (errno from the kernel); a sock_diag answer we cannot read (caught: "
            "the /proc listing is used instead)",
        ),
    ],
    "conformance/_container.py": [
        (
            "OSError",
            3,
            "mount/unshare failed (errno from the kernel); caught: the kit runs uncontained and says so",
        ),
    ],
    # An optional extra that is missing: ImportError is what code importing the module (and pytest) expects.
    "testing/snapshots.py": [("ImportError", 1, "syrupy missing: the message names the snapshots extra")],
    # A command-line run that ends with its reason: SystemExit prints the message and exits 1, no traceback.
    "env/_base.py": [("SystemExit", 1, "process run stopped by a dead model server: exit 1 with the reason")],
    # A hash-seed worker told to stop by SIGTERM unwinds as on sys.exit(0): with-blocks close, sandboxes go.
    "conformance/_hashseed.py": [("SystemExit", 1, "worker stopped by SIGTERM unwinds like sys.exit(0)")],
    # Abstract method placeholders.
    "tools/context_web.py": [("NotImplementedError", 1, "mixin placeholder; ToolContext provides it")],
    # Model-facing: raised inside a tool while the model calls it; the agent loop shows the model
    # "Tool execution failed: <Type>: <message>", so the builtin name is part of recorded transcripts.
    "tools/registry.py": [("TypeError", 2, "model-facing: bad tool arguments")],
    "tools/builtin.py": [
        ("ValueError", 3, "model-facing: patch tool text not found / ambiguous"),
        (
            "FileNotFoundError",
            1,
            "model-facing: no such host file (an absolute path outside the task, as upstream)",
        ),
        ("IsADirectoryError", 1, "model-facing: a host folder where a file was asked"),
    ],
    # Runs in the sandbox's own python3 (copied there as hermes_tools.py), where hermes_envs is not importable;
    # the script's author sees the builtin in the script's traceback, as with upstream's module.
    "tools/toolsets/_script_api.py": [
        ("RuntimeError", 1, "an execute_code script's tool call failed"),
        ("ValueError", 4, "an execute_code script's patch() arguments"),
    ],
    "tools/_sandbox.py": [
        ("TypeError", 3, "model-facing: command/path/content type"),
        ("ValueError", 2, "model-facing: NUL byte, bad timeout"),
    ],
    "tools/_task_files.py": [
        ("TypeError", 1, "model-facing: path type"),
        ("ValueError", 1, "model-facing: NUL byte in path"),
        ("FileNotFoundError", 3, "model-facing: no such file in the task folder"),
        ("IsADirectoryError", 5, "model-facing: a folder where a file was asked"),
        ("NotADirectoryError", 2, "model-facing: a file where a folder was asked"),
    ],
    # Left to other areas (being reshaped by other helpers while this list was written). Pooled per folder or
    # file prefix, so moving a raise between modules of one area (a split) keeps this green.
    "conformance/": [
        ("AssertionError", 1, "conformance area"),
        ("ValueError", 1, "conformance area"),
        ("TypeError", 1, "conformance area"),
        ("AttributeError", 5, "conformance area: probe objects that break an env's contract on purpose"),
        ("TimeoutError", 1, "conformance area"),
        (
            "RuntimeError",
            3,
            "HC206's fresh-interpreter worker failed (caught by the check, which skips naming why); HC414's failing "
            "tool backend (2: a tool call failing as a real tool's would, turned into an error result)",
        ),
        ("KeyError", 1, "the Mapping protocol of the read-only CHECKS view (CHECKS[unknown id])"),
    ],
    "parsers/": [
        ("NotImplementedError", 3, "parsers area: abstract methods"),
        ("ValueError", 15, "parsers area: internal decode signals, caught and reported as parse errors"),
    ],
    "testing/_cassette_matching.py": [
        ("AssertionError", 3, "vcrpy matcher protocol: a mismatch is an AssertionError")
    ],
    "testing/fake_server/": [
        ("TypeError", 4, "fake-server area"),
        ("ValueError", 13, "fake-server area"),
        (
            "RuntimeError",
            10,
            "fake-server area: a server that failed to start (the same in start() and serve_forever())",
        ),
        ("AssertionError", 1, "fake-server area"),
        ("EOFError", 1, "fake-server area"),
    ],
    "tools/toolsets/": [
        ("TypeError", 3, "toolsets area"),
        ("KeyError", 1, "toolsets area"),
        ("ValueError", 1, "toolsets area"),
    ],
}


def bare_raises() -> dict[str, Counter[str]]:
    """``{relative path: Counter(builtin name)}`` of every ``raise Builtin(...)`` / ``raise Builtin`` in the package."""
    found: dict[str, Counter[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            func = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(func, ast.Name) and func.id in _BUILTIN_ERRORS:
                found.setdefault(path.relative_to(PACKAGE).as_posix(), Counter())[func.id] += 1
    return found


def _pool(path: str) -> str:
    """The KNOWN key a file's raises count against: its own path, else the longest prefix listed."""
    keys = [k for k in KNOWN if path == k or (not k.endswith(".py") and path.startswith(k))]
    return max(keys, key=len) if keys else path


def test_no_new_bare_builtin_raise():
    allowed = {key: Counter({name: n for name, n, _ in rows}) for key, rows in KNOWN.items()}
    pooled: dict[str, Counter[str]] = {}
    for path, counts in bare_raises().items():
        pooled.setdefault(_pool(path), Counter()).update(counts)
    extra = {
        key: dict(counts - allowed.get(key, Counter()))
        for key, counts in pooled.items()
        if counts - allowed.get(key, Counter())
    }
    assert not extra, (
        f"bare builtin raises should be HermesEnvsError subclasses; got new ones {extra}. Fix: raise a class from "
        "hermes_envs.errors that also inherits the builtin, or add the raise to KNOWN with the reason it stays."
    )


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (errors.UsageError, RuntimeError),
        (errors.ArgumentTypeError, TypeError),
        (errors.MissingFileError, FileNotFoundError),
        (errors.ConfigError, ValueError),
        (errors.UnknownNameError, KeyError),
    ],
)
def test_error_classes_keep_the_builtin(cls, builtin):
    assert issubclass(cls, errors.HermesEnvsError) and issubclass(cls, builtin)


def test_fixed_raises_are_hermes_errors(tmp_path):
    """The user-triggerable raises converted from bare builtins: each still catchable as its old builtin."""
    from hermes_envs.testing import lint_paths
    from hermes_envs.testing.offline import NetworkGuard
    from hermes_envs.testing.snapshots import format_rewards
    from hermes_envs.tools.context import ToolContext
    from hermes_envs.tools.registry import ToolRegistry

    with pytest.raises(errors.ConfigError, match=r"task_id should be a non-empty str; got ''\. Fix: "):
        ToolContext("")
    with pytest.raises(KeyError) as info:
        ToolRegistry().get("nope")
    assert isinstance(info.value, errors.UnknownNameError)
    assert str(info.value) == (
        "unknown tool 'nope'; registered tools: []. Fix: register it (@tool) or check the spelling."
    )
    with pytest.raises(TypeError) as info:
        format_rewards(3.0, 0.0)
    assert isinstance(info.value, errors.ArgumentTypeError) and "got float. Fix: " in str(info.value)
    with pytest.raises(FileNotFoundError) as info:
        lint_paths([tmp_path / "absent.yaml"])
    assert isinstance(info.value, errors.MissingFileError)
    guard = NetworkGuard()
    with guard:
        with pytest.raises(RuntimeError) as info:
            guard.__enter__()
    assert isinstance(info.value, errors.UsageError)
