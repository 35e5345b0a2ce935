"""The paths a reward hands to its ToolContext (HC604): which files and commands it points at, per rollout.

Under upstream's local backend every rollout shares the host's filesystem, so an absolute path that is not
specific to the task (``/tmp/answer.txt``) is one file for every concurrent rollout: one rollout is graded on
another's file. Our sandbox maps or refuses such paths, which hides the collision; so the kit records them.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["absolute_paths", "record_paths", "shared_paths", "task_has_own_root"]

_PATH_METHODS = (
    "read_file",
    "write_file",
    "upload_file",
    "upload_dir",
    "download_file",
    "download_dir",
    "search",
)
_COMMAND_METHODS = ("terminal",)
#: A slash not glued to a word, a relative path or a glob (`*/.*` in `find -path` is a pattern, not a path), then
#: components each holding a letter or digit (`/.` and `/..` name nothing).
_ABSOLUTE = re.compile(r"(?<![\w.~$*?\]}-])(/(?:[\w.@+-]*\w[\w.@+-]*/?)+)")
#: Absolute paths that are the system's, not the task's: reading them from every rollout is fine.
_SYSTEM = ("/usr/", "/bin/", "/sbin/", "/etc/", "/dev/", "/proc/", "/sys/", "/lib", "/opt/", "/nix/")


def task_has_own_root(backend: str) -> bool:
    """Whether ``terminal_backend=backend`` gives each task a filesystem of its own (an absolute path is then
    private to the task). Asked of the backend class itself, so a backend added or renamed there is never out of
    step with the kit."""
    from hermes_envs.tools.backends import backends

    cls = backends.find(backend)
    return bool(cls is not None and cls.container_paths)


def absolute_paths(text: str) -> list[str]:
    """The absolute paths written in a shell command or path argument (system paths left out)."""
    found = []
    for match in _ABSOLUTE.findall(text or ""):
        path = match.rstrip("/") or "/"
        if path == "/" or any((path + "/").startswith(p) for p in _SYSTEM):
            continue
        found.append(path)
    return found


def record_paths(ctx: Any, seen: list[tuple[str, str]]) -> None:
    """Wrap ``ctx``'s path-taking methods (and their awaitable twins) so each absolute path they are given is
    appended to ``seen`` as ``(method, path)``; the calls themselves are unchanged."""

    def wrap(name: str, fn: Any, is_command: bool) -> Any:
        # The class's method is looked up at call time, not bound now: the event-loop watchdog (HC408) times
        # ToolContext's methods by patching the class while a hook runs, and a method bound here would bypass that.
        on_class = name in dir(type(ctx)) and fn == getattr(type(ctx), name).__get__(ctx)

        @functools.wraps(fn)
        def recorder(*args: Any, **kwargs: Any) -> Any:
            texts = [a for a in (*args, *kwargs.values()) if isinstance(a, str)]
            for text in texts[:1] if is_command else texts:
                candidates = absolute_paths(text) if is_command else ([text] if text.startswith("/") else [])
                seen.extend((name, path) for path in candidates if absolute_paths(path))
            call = getattr(type(ctx), name).__get__(ctx) if on_class else fn
            return call(*args, **kwargs)

        return recorder

    for base, is_command in [(m, False) for m in _PATH_METHODS] + [(m, True) for m in _COMMAND_METHODS]:
        for name in (base, f"a{base}"):
            fn = getattr(ctx, name, None)
            if callable(fn):
                setattr(ctx, name, wrap(name, fn, is_command))


def shared_paths(uses: list[tuple[str, str, str, str]]) -> dict[str, list[str]]:
    """``(item key, task id, method, path)`` -> the paths used by rollouts of two or more different items that
    name neither the task nor anything item-specific (the same path for different tasks), with the methods."""
    by_path: dict[str, tuple[set[str], list[str]]] = {}
    for item_key, task_id, method, path in uses:
        if task_id and task_id in path:
            continue
        items, methods = by_path.setdefault(path, (set(), []))
        items.add(item_key)
        if method not in methods:
            methods.append(method)
    return {path: methods for path, (items, methods) in by_path.items() if len(items) >= 2}
