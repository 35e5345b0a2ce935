"""Which host servers the loopback-only namespace relays to: every TCP port listening on loopback (or the wildcard
address) when a process is spawned, found by asking the kernel (sock_diag) rather than reading the machine's whole
socket table from /proc."""

from __future__ import annotations

import socket
import sys

import pytest

from hermes_envs.testing import _netns

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def _listening(host: str, family: int = socket.AF_INET) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen(1)
    return sock


def test_the_kernel_names_the_loopback_listeners_and_no_other_socket() -> None:
    with _listening("127.0.0.1") as loop, _listening("0.0.0.0") as wild, socket.socket() as idle:
        idle.bind(("127.0.0.1", 0))  # bound, not listening: nothing to relay
        found = _netns._loopback_listeners()
        assert (socket.AF_INET, loop.getsockname()[1]) in found
        assert (socket.AF_INET, wild.getsockname()[1]) in found
        assert (socket.AF_INET, idle.getsockname()[1]) not in found


def test_ipv6_loopback_listeners_are_found_too() -> None:
    try:
        server = _listening("::1", socket.AF_INET6)
    except OSError:
        pytest.skip("no IPv6 loopback")
    with server:
        assert (socket.AF_INET6, server.getsockname()[1]) in _netns._loopback_listeners()


def test_sock_diag_and_the_proc_tables_agree() -> None:
    """The /proc reading stays as the fallback where sock_diag is refused: both say the same (read a few times:
    other programs of the machine may open or close a listener between the two readings)."""
    with _listening("127.0.0.1") as server:
        ours = (socket.AF_INET, server.getsockname()[1])
        for _ in range(5):
            try:
                by_kernel = sorted(_netns._listeners_by_netlink())
            except OSError:
                pytest.skip("sock_diag unavailable here")
            from_proc = sorted(_netns._listeners_from_proc())
            if by_kernel == from_proc:
                break
        assert by_kernel == from_proc and ours in by_kernel
