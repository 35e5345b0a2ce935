"""The socket-level network guard: any connection (or DNS lookup) beyond the allowed (loopback) hosts raises
:class:`NetworkBlockedError` at once, before a packet leaves the machine.

Python-level calls are caught by a patch of :mod:`socket` and backed up by the audit hook of
:mod:`hermes_envs.testing._network_audit` (``_socket`` calls, ``sendmsg``, reverse lookups); with ``isolate=True``
child processes, forks and native code run in the loopback-only namespace of :mod:`hermes_envs.testing._netns`.
Users reach it through :func:`hermes_envs.testing.offline.block_network` (or the ``hermes_envs.testing`` facade).
Imports only the standard library.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hermes_envs.errors import HermesEnvsError, UsageError
from hermes_envs.testing._network_audit import _ACTIVE, _ACTIVE_LOCK, _install_hook, _warn_partial

__all__ = ["DEFAULT_ALLOW_HOSTS", "BlockedAttempt", "NetworkBlockedError", "NetworkGuard", "block_network"]

DEFAULT_ALLOW_HOSTS: tuple[str, ...] = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class BlockedAttempt:
    """One connection or lookup the guard refused."""

    host: str
    port: int | None
    operation: (
        str  # "connect", "connect_ex", "create_connection", "sendto", "getaddrinfo", "gethostbyname" ...
    )

    @property
    def target(self) -> str:
        if self.port is None:
            return self.host
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.operation} {self.target}"


class NetworkBlockedError(HermesEnvsError, ConnectionRefusedError):
    """A test tried to reach a host outside the allowed (loopback) hosts while :func:`block_network` was active."""

    def __init__(self, host: str, port: int | None = None, operation: str = "connect") -> None:
        self.attempt = BlockedAttempt(str(host), port, operation)
        self.host = self.attempt.host
        self.port = port
        self.operation = operation
        message = (
            f"network access blocked: {operation} to {self.attempt.target}. Tests run offline and may only reach "
            "loopback. To fix it: mock the call, point the client at the fake model server on 127.0.0.1 "
            "(hermes_envs.testing), or record a cassette once with `pytest --hermes-record` and replay it. "
            "To allow this host on purpose, pass it in block_network(allow_hosts=...)."
        )
        super().__init__(errno.ECONNREFUSED, message)

    def __str__(self) -> str:
        return str(self.strerror)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.host, self.port, self.operation))


def _normalize_host(host: Any) -> str:
    if isinstance(host, bytes):
        host = host.decode("ascii", errors="replace")
    host = str(host).strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.split("%", 1)[0]  # drop an IPv6 zone id ("fe80::1%eth0")


def _as_ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class NetworkGuard:
    """Context manager that refuses every connection and DNS lookup except to ``allow_hosts``.

    ``allow_hosts`` entries may be host names, IP addresses or networks (``"10.0.0.0/8"``). Names resolved through
    ``getaddrinfo`` while the guard is active add their addresses to the allowed set. Unix sockets are always
    allowed. Refused attempts raise :class:`NetworkBlockedError` at once and are recorded in :attr:`blocked`.

    The patch is process-wide (every thread sees it); guards nest and restore the previous functions on exit
    (exit them in reverse order of entry). An audit hook backs the patch up (``_socket``, ``sendmsg``,
    ``gethostbyaddr``, ``getnameinfo``). Native code and other processes are covered only with ``isolate=True``
    and a network namespace (:attr:`isolation` is ``"namespace"``, else ``"partial"``).
    """

    def __init__(self, allow_hosts: Iterable[str] = DEFAULT_ALLOW_HOSTS, *, isolate: bool = False) -> None:
        self.isolate = isolate
        if isinstance(allow_hosts, str):
            allow_hosts = (allow_hosts,)
        self.allow_hosts: tuple[str, ...] = tuple(allow_hosts)
        self.blocked: list[BlockedAttempt] = []
        self._names: set[str] = set()
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in self.allow_hosts:
            host = _normalize_host(entry)
            if "/" in host:
                self._networks.append(ipaddress.ip_network(host, strict=False))
            elif (ip := _as_ip(host)) is not None:
                self._names.add(str(ip))
            else:
                self._names.add(host)
        self._resolved: set[str] = set()
        self._lock = threading.Lock()
        self._saved: dict[str, Any] | None = None

    # -- policy ----------------------------------------------------------------------------------------------

    def is_allowed(self, host: Any) -> bool:
        """True if ``host`` (a name or IP) may be contacted under this guard."""
        if host is None:
            return True  # getaddrinfo(None, port): the local wildcard address
        name = _normalize_host(host)
        if name in ("", "0.0.0.0", "::"):
            return True  # bind-style wildcard
        ip = _as_ip(name)
        if ip is not None:
            text = str(ip)
            return text in self._names or text in self._resolved or any(ip in net for net in self._networks)
        return name in self._names

    def _check(self, host: Any, port: Any, operation: str) -> None:
        if self.is_allowed(host):
            return
        try:
            port_num: int | None = int(port) if port is not None else None
        except (TypeError, ValueError):
            port_num = None
        error = NetworkBlockedError(_normalize_host(host), port_num, operation)
        with self._lock:
            self.blocked.append(error.attempt)
        raise error

    def _check_address(self, sock: socket.socket, address: Any, operation: str) -> None:
        family = getattr(socket, "AF_UNIX", None)
        if family is not None and sock.family == family:
            return
        if isinstance(address, (tuple, list)) and len(address) >= 2:
            self._check(address[0], address[1], operation)
        elif isinstance(address, (str, bytes)):
            self._check(address, None, operation)

    # -- patching --------------------------------------------------------------------------------------------

    @property
    def isolation(self) -> str:
        """``"namespace"``: child processes, forks and native code are confined to loopback too; ``"partial"``:
        only Python-level calls of this process are checked."""
        if self.isolate:
            from hermes_envs.testing._netns import loopback_namespace

            if loopback_namespace() is not None:
                return "namespace"
        return "partial"

    def __enter__(self) -> NetworkGuard:
        if self._saved is not None:
            raise UsageError(
                "this NetworkGuard should be entered once at a time; got a second `with` while it is active. "
                "Fix: create a new NetworkGuard to nest guards."
            )
        if self.isolate and self.isolation == "partial":
            _warn_partial()
        _install_hook()
        with _ACTIVE_LOCK:
            _ACTIVE.append(self)
        guard = self
        sock_cls = socket.socket
        saved: dict[str, Any] = {
            "connect": sock_cls.__dict__.get("connect"),
            "connect_ex": sock_cls.__dict__.get("connect_ex"),
            "sendto": sock_cls.__dict__.get("sendto"),
            "create_connection": socket.create_connection,
            "getaddrinfo": socket.getaddrinfo,
            "gethostbyname": socket.gethostbyname,
            "gethostbyname_ex": socket.gethostbyname_ex,
        }
        prev_connect = sock_cls.connect
        prev_connect_ex = sock_cls.connect_ex
        prev_sendto = sock_cls.sendto
        prev_create = socket.create_connection
        prev_getaddrinfo = socket.getaddrinfo
        prev_gethostbyname = socket.gethostbyname
        prev_gethostbyname_ex = socket.gethostbyname_ex

        def connect(self: socket.socket, address: Any) -> None:
            guard._check_address(self, address, "connect")
            return prev_connect(self, address)

        def connect_ex(self: socket.socket, address: Any) -> int:
            guard._check_address(self, address, "connect_ex")
            return prev_connect_ex(self, address)

        def sendto(self: socket.socket, data: Any, *args: Any) -> int:
            if args:
                guard._check_address(self, args[-1], "sendto")
            return prev_sendto(self, data, *args)

        def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            host, port = address[0], address[1]
            guard._check(host, port, "create_connection")
            return prev_create(address, *args, **kwargs)

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            guard._check(host, port, "getaddrinfo")
            infos = prev_getaddrinfo(host, port, *args, **kwargs)
            if host is not None:
                with guard._lock:
                    for info in infos:
                        address = info[4]
                        if isinstance(address, tuple) and address and (ip := _as_ip(str(address[0]))):
                            guard._resolved.add(str(ip))
            return infos

        def gethostbyname(hostname: str) -> str:
            guard._check(hostname, None, "gethostbyname")
            return prev_gethostbyname(hostname)

        def gethostbyname_ex(hostname: str) -> Any:
            guard._check(hostname, None, "gethostbyname_ex")
            return prev_gethostbyname_ex(hostname)

        sock_cls.connect = connect  # type: ignore[method-assign,assignment]
        sock_cls.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
        sock_cls.sendto = sendto  # type: ignore[method-assign,assignment]
        socket.create_connection = create_connection
        socket.getaddrinfo = getaddrinfo
        socket.gethostbyname = gethostbyname
        socket.gethostbyname_ex = gethostbyname_ex
        self._saved = saved
        return self

    def __exit__(self, *exc_info: object) -> None:
        saved, self._saved = self._saved, None
        if saved is None:
            return
        with _ACTIVE_LOCK:
            if self in _ACTIVE:
                _ACTIVE.remove(self)
        sock_cls = socket.socket
        for name in ("connect", "connect_ex", "sendto"):
            if saved[name] is None:
                # The method came from _socket.socket; drop our override so lookups fall through again.
                if name in sock_cls.__dict__:
                    delattr(sock_cls, name)
            else:
                setattr(sock_cls, name, saved[name])
        for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
            setattr(socket, name, saved[name])

    @property
    def active(self) -> bool:
        return self._saved is not None


def block_network(allow_hosts: Iterable[str] = DEFAULT_ALLOW_HOSTS, *, isolate: bool = False) -> NetworkGuard:
    """Return a :class:`NetworkGuard`; use it as ``with block_network() as guard: ...`` (``isolate=True``: child
    processes, forks and native code in a loopback-only network namespace too, where one can be made)."""
    return NetworkGuard(allow_hosts, isolate=isolate)
