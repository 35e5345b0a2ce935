"""The network guard's audit hook (PEP 578): Python-level network calls the ``socket`` patch cannot see
(``_socket``, ``sendmsg``, reverse DNS), and moving threads in and out of the loopback-only namespace around
process spawns and native code (:mod:`hermes_envs.testing._netns`).

One hook is installed on first use (a hook cannot be removed) and does nothing while no guard is active and no
thread is in the namespace. :class:`~hermes_envs.testing.offline.NetworkGuard` registers itself in ``_ACTIVE``.
"""

from __future__ import annotations

import socket
import sys
import threading
from typing import Any

from hermes_envs._spawn_namespace import UNKNOWN, set_probe

__all__ = ["NetworkGuardPartialWarning", "spawn_namespace"]


class NetworkGuardPartialWarning(UserWarning):
    """An isolating guard could not make a network namespace: only Python-level calls of this process are checked."""


_PARTIAL_WARNED = [False]


def _warn_partial() -> None:
    if _PARTIAL_WARNED[0]:
        return
    _PARTIAL_WARNED[0] = True
    import warnings

    from hermes_envs.testing._netns import unavailable_reason

    warnings.warn(
        NetworkGuardPartialWarning(
            "the network guard is partial: it checks this process's Python-level socket calls, but child "
            f"processes, forked children and native code can still reach the network ({unavailable_reason()}). "
            "Fix: run as root (or with CAP_SYS_ADMIN) on Linux, e.g. in a CI container, to confine them to "
            "loopback."
        ),
        stacklevel=3,
    )


# ---------------------------------------------------------------------------------------------------------------
# The audit hook: Python-level network calls the patch cannot see, and moving threads in and out of the namespace
# ---------------------------------------------------------------------------------------------------------------

_ACTIVE: list[Any] = []  # the active NetworkGuards, innermost last
_ACTIVE_LOCK = threading.Lock()
_HOOK_INSTALLED = [False]
_SWITCH_FAILED = [False]  # setns was refused once: threads may have been left in either namespace
_TLS = threading.local()
_CHECKED = {
    "socket.connect": "connect",
    "socket.sendto": "sendto",
    "socket.sendmsg": "sendmsg",
}
_LOOKUPS = {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo"}
#: Events after which code runs outside this process's Python sockets: enter the namespace first.
_OUTSIDE = {
    "subprocess.Popen",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.exec",
    "os.spawn",
    "os.system",
    "pty.spawn",
    "ctypes.call_function",
    "ctypes.dlopen",
    "ctypes.dlsym",
    "ctypes.dlsym/handle",
}
_EVENTS = frozenset(_CHECKED) | _LOOKUPS | _OUTSIDE | {"socket.__new__"}


def spawn_namespace() -> str | None:
    """The network namespace a process started now is put in, decided as :func:`_handle` does: the loopback-only
    one while an isolating guard is active, the host's otherwise; ``None`` while no namespace was made (no thread
    switches), :data:`~hermes_envs._spawn_namespace.UNKNOWN` once switching failed (threads stay where they were).
    The sandbox pool asks it before it hands a pre-started shell to a task."""
    if _SWITCH_FAILED[0]:
        return UNKNOWN
    ns = getattr(sys.modules.get("hermes_envs.testing._netns"), "_STATE", {}).get("ns")
    if ns is None:
        return None
    isolating = any(g.isolate for g in list(_ACTIVE))  # read as the hook reads it: no lock taken
    return str(ns.id if isolating else ns.host_id)


def _install_hook() -> None:
    if not _HOOK_INSTALLED[0]:
        _HOOK_INSTALLED[0] = True
        set_probe(spawn_namespace)  # before the hook: no thread switches namespace until the hook does it
        sys.addaudithook(_audit)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _EVENTS or getattr(_TLS, "busy", False):
        return
    _TLS.busy = True
    try:
        _handle(event, args)
    finally:
        _TLS.busy = False


def _handle(event: str, args: tuple[Any, ...]) -> None:
    guards = list(_ACTIVE)
    if guards and event in _CHECKED:
        sock, address = args[0], args[1] if len(args) > 1 else None
        if getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6) and address is not None:
            for guard in reversed(guards):
                guard._check_address(sock, address, _CHECKED[event])
    elif guards and event in _LOOKUPS:
        host: Any = args[0] if args else None
        port = args[1] if event == "socket.getaddrinfo" and len(args) > 1 else None
        if event == "socket.getnameinfo" and isinstance(host, tuple) and host:
            host, port = host[0], host[1] if len(host) > 1 else None
        operation = event.split(".", 1)[1]
        for guard in reversed(guards):
            guard._check(host, port, operation)
    # Never imported or created from here: the hook fires mid-import and while the namespace is being made.
    state = getattr(sys.modules.get("hermes_envs.testing._netns"), "_STATE", None)
    if state is None:
        return
    ns = state["ns"]
    if ns is None:
        return
    try:
        if event in _OUTSIDE:
            if any(
                g.isolate for g in guards
            ):  # the guard made the namespace on entry (never made from the hook)
                if not getattr(ns.local, "relay", False):
                    ns.enter()
            else:
                ns.leave()
        elif event == "socket.__new__" and not getattr(ns.local, "relay", False):
            ns.leave()  # this process's own sockets live in the host namespace, where the guard checks them
    except OSError as exc:  # setns refused (a seccomp profile, no /proc): stop using the namespace, say so
        _SWITCH_FAILED[0] = True
        state["ns"], state["reason"] = None, f"switching namespaces failed: {exc}"
        _PARTIAL_WARNED[0] = False
        _warn_partial()
