"""A loopback-only network namespace for what the network guard cannot see: child processes and native code.

Python-level socket calls are refused by :class:`~hermes_envs.testing.offline.NetworkGuard` (a patch plus an audit
hook, which sees ``_socket`` calls too). A subprocess (``curl``, another Python), a forked child, or ``connect``
called through ctypes are invisible to both; while an *isolating* guard is active, they run in a network namespace
whose only interface is loopback, so any connection beyond it fails at once (``ENETUNREACH``) and nothing leaves
the machine.

How: namespaces are per thread on Linux. The first use creates the namespace (``unshare(CLONE_NEWNET)`` in a
helper thread, loopback brought up) and keeps a handle to it. The guard's audit hook moves the calling thread into
it (``setns``) just before it spawns a process, forks or calls native code, and back to the host namespace before it
creates a Python socket — so the process's own sockets, and the servers it runs (the fake model server), stay in the
host namespace where the guard checks them. Processes started inside reach the host's loopback servers through a
relay: each TCP port listening on loopback when a process is spawned gets a forwarder inside the namespace.

Limit: native code is caught when it loads a library or looks a function up (``ctypes.CDLL``, ``libc.connect``
on first use: the audit events ctypes raises); a function pointer looked up before the guard and called later, or a
C extension opening sockets itself, from a thread that has not spawned or loaded anything since, is not.

Needs Linux and CAP_SYS_ADMIN (root, as in CI containers); elsewhere :func:`loopback_namespace` returns ``None`` and
:attr:`unavailable_reason` says why — the guard is then partial (Python-level calls only).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import struct
import sys
import threading
from typing import Any

__all__ = ["LoopbackNamespace", "adopt_current_namespace", "loopback_namespace", "unavailable_reason"]

_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"ns": None, "tried": False, "reason": ""}


def _libc() -> Any:
    # The interpreter's own symbols include libc's unshare/setns: ctypes.util.find_library("c") would run
    # `ldconfig -p` in a child process (a fork of this large process) only to name the same library.
    return ctypes.CDLL(None, use_errno=True)


def _current() -> str:
    return os.readlink("/proc/thread-self/ns/net")


class LoopbackNamespace:
    """A network namespace with only ``lo`` (up), and the host namespace to go back to."""

    def __init__(self) -> None:
        self._libc = _libc()
        self.host_fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        self.host_id = _current()
        made: dict[str, Any] = {}

        def create() -> None:
            try:
                if self._libc.unshare(_CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                    ifr = struct.pack("16sH14s", b"lo", 0, b"")
                    flags = struct.unpack("16sH14s", fcntl.ioctl(s, _SIOCGIFFLAGS, ifr))[1]
                    fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))
                made["fd"] = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
                made["id"] = _current()
            except OSError as exc:
                made["error"] = exc

        thread = threading.Thread(target=create, name="hermes-netns-create", daemon=True)
        thread.start()
        thread.join()
        if "error" in made:
            os.close(self.host_fd)
            raise made["error"]
        self.fd: int = made["fd"]
        self.id: str = made["id"]
        self._forwarded: dict[tuple[int, int], socket.socket | None] = {}
        self.local = threading.local()

    # -- switching the calling thread ---------------------------------------------------------------------------
    def inside(self) -> bool:
        """True when the calling thread is in this namespace."""
        return _current() == self.id

    def _setns(self, fd: int) -> None:
        if self._libc.setns(fd, _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns: {os.strerror(err)}")

    def enter(self) -> None:
        """Move the calling thread in (after starting forwarders for the host's loopback listeners)."""
        if self.inside():
            return
        self.forward_listeners()
        self._setns(self.fd)

    def leave(self) -> None:
        """Move the calling thread back to the host namespace (not in a process forked inside: it stays)."""
        if _confined[0] or not self.inside():
            return
        self._setns(self.host_fd)

    # -- relay to the host's loopback servers -------------------------------------------------------------------
    def forward_listeners(self) -> None:
        """A forwarder inside the namespace for each TCP port listening on the host's loopback (or wildcard); the
        forwarders of ports nobody listens on any more are closed (their threads end)."""
        listening = set(_loopback_listeners())
        for key in [k for k in self._forwarded if k not in listening]:
            listener = self._forwarded.pop(key)
            if listener is not None:
                with contextlib.suppress(OSError):
                    listener.shutdown(socket.SHUT_RDWR)
                listener.close()
        for family, port in listening:
            if (family, port) not in self._forwarded:
                self._forwarded[(family, port)] = self._start_forwarder(family, port)

    def _start_forwarder(self, family: int, port: int) -> socket.socket | None:
        host = "127.0.0.1" if family == socket.AF_INET else "::1"
        self._setns(self.fd)
        try:
            listener = socket.socket(family, socket.SOCK_STREAM)
            try:
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind((host, port))
                listener.listen(64)
            except OSError:
                listener.close()  # something inside already listens there: connections reach it directly
                return None
        finally:
            self._setns(self.host_fd)
        threading.Thread(
            target=self._accept_loop, args=(listener, family, host, port), name=f"hermes-netns-relay:{port}",
            daemon=True,
        ).start()  # fmt: skip
        return listener

    def _accept_loop(self, listener: socket.socket, family: int, host: str, port: int) -> None:
        self.local.relay = True
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed: nobody listens on the host port any more
            try:
                upstream = socket.socket(family, socket.SOCK_STREAM)
                upstream.connect((host, port))
            except OSError:
                with contextlib.suppress(OSError):
                    conn.close()
                continue
            pair = _Pair(conn, upstream)
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=pair.pump, args=(a, b), name="hermes-netns-pump", daemon=True).start()


class _Pair:
    """Two relayed sockets: each direction is pumped by a thread; the last one to finish closes both."""

    def __init__(self, a: socket.socket, b: socket.socket) -> None:
        self.sockets = (a, b)
        self.running = 2
        self.lock = threading.Lock()

    def pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)
            with self.lock:
                self.running -= 1
                last = self.running == 0
            if last:
                for s in self.sockets:
                    s.close()


def _loopback_listeners() -> list[tuple[int, int]]:
    """(family, port) of TCP sockets listening on loopback or the wildcard address, as the host sees them."""
    try:
        return _listeners_by_netlink()
    except OSError:  # no sock_diag (an old kernel, a seccomp profile): the /proc tables say the same, slower
        return _listeners_from_proc()


_LOOPBACK_ADDRESSES: dict[int, tuple[bytes, bytes]] = {
    socket.AF_INET: (bytes([127, 0, 0, 1]), bytes(4)),
    socket.AF_INET6: (bytes(15) + b"\x01", bytes(16)),
}
_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY, _NLMSG_ERROR, _NLMSG_DONE = 4, 20, 2, 3
_NLM_F_REQUEST_DUMP = 0x1 | 0x300
_TCP_LISTEN = 10


def _listeners_by_netlink() -> list[tuple[int, int]]:
    """Ask the kernel (sock_diag) for the listening TCP sockets only. /proc/net/tcp lists every socket of the
    machine, TIME_WAIT ones included: on a busy machine reading it costs ~10 ms per call; this walks the listening
    table alone. Raises OSError when the kernel cannot answer."""
    out: list[tuple[int, int]] = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as sock:
        sock.settimeout(2.0)
        for seq, family in enumerate((socket.AF_INET, socket.AF_INET6), start=1):
            # inet_diag_req_v2: family, protocol, ext, pad, states, then an empty inet_diag_sockid (48 bytes)
            request = struct.pack("=BBBxI48x", family, socket.IPPROTO_TCP, 0, 1 << _TCP_LISTEN)
            header = struct.pack(
                "=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST_DUMP, seq, 0
            )
            sock.send(header + request)
            out.extend(_read_dump(sock, family))
    return out


def _read_dump(sock: socket.socket, family: int) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    while True:
        data = sock.recv(65536)
        if not data:
            raise OSError("sock_diag closed the socket")
        offset = 0
        while offset + 16 <= len(data):
            length, kind = struct.unpack_from("=IH", data, offset)
            if length < 16:
                raise OSError("sock_diag sent a malformed message")
            if kind == _NLMSG_DONE:
                return found
            if kind == _NLMSG_ERROR:
                code = struct.unpack_from("=i", data, offset + 16)[0]
                raise OSError(-code, "sock_diag refused the request")
            if kind == _SOCK_DIAG_BY_FAMILY:
                # inet_diag_msg: family, state, timer, retrans, then the sockid: sport, dport (big-endian), src
                msg_family, state = struct.unpack_from("=BB", data, offset + 16)
                port = struct.unpack_from("!H", data, offset + 20)[0]
                size = 4 if msg_family == socket.AF_INET else 16
                address = data[offset + 24 : offset + 24 + size]
                if msg_family == family and state == _TCP_LISTEN and address in _LOOPBACK_ADDRESSES[family]:
                    found.append((family, port))
            offset += (length + 3) & ~3


def _listeners_from_proc() -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    loopback = {
        socket.AF_INET: ("0100007F", "00000000"),
        socket.AF_INET6: ("00000000000000000000000001000000", "00000000000000000000000000000000"),
    }
    for family, name in ((socket.AF_INET, "tcp"), (socket.AF_INET6, "tcp6")):
        try:
            with open(f"/proc/thread-self/net/{name}", encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 3 and fields[3] == "0A":  # LISTEN
                address, _, port = fields[1].partition(":")
                if address in loopback[family]:
                    out.append((family, int(port, 16)))
    return out


_confined = [False]  # a process forked from a thread inside the namespace never leaves it


def _after_fork_in_child() -> None:
    ns = _STATE["ns"]
    if ns is not None and ns.inside():
        _confined[0] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def loopback_namespace() -> LoopbackNamespace | None:
    """The process's loopback-only namespace, created on first call; ``None`` where it cannot be made."""
    with _LOCK:
        if not _STATE["tried"]:
            _STATE["tried"] = True
            if not sys.platform.startswith("linux"):
                _STATE["reason"] = f"network namespaces need Linux; this is {sys.platform}"
            else:
                try:
                    _STATE["ns"] = LoopbackNamespace()
                except OSError as exc:
                    _STATE["reason"] = f"unshare(CLONE_NEWNET) failed: {exc} (needs root / CAP_SYS_ADMIN)"
        return _STATE["ns"]


def unavailable_reason() -> str:
    """Why :func:`loopback_namespace` is ``None`` (empty when it is available or was not tried)."""
    return str(_STATE["reason"])


class _OwnNamespace:
    """The process's own network namespace, loopback-only already (made by the conformance container): nothing
    switches, and every process or native call of the process is in it."""

    def __init__(self) -> None:
        self.id = self.host_id = _current()
        self.local = threading.local()

    def inside(self) -> bool:
        return True

    def enter(self) -> None:
        pass

    def leave(self) -> None:
        pass

    def forward_listeners(self) -> None:
        pass


def adopt_current_namespace() -> None:
    """Use the calling process's namespace as the loopback-only one: the process was started in a namespace with
    only loopback (the kit's container), so an isolating guard needs no namespace or relay of its own."""
    with _LOCK:
        _STATE.update(tried=True, ns=_OwnNamespace(), reason="")
