"""Offline helpers: env vars, lazy imports, and the socket-level network guard."""

from __future__ import annotations

import asyncio
import os
import pickle
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from hermes_envs.errors import HermesEnvsError
from hermes_envs.testing import offline
from hermes_envs.testing.offline import (
    NetworkBlockedError,
    NetworkGuard,
    block_network,
    offline_environ,
    offline_mode,
    offline_tokenizer_path,
)

UNROUTABLE = ("10.255.255.1", 9)

EXPECTED_ENV = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "WANDB_MODE": "disabled",
    "WANDB_SILENT": "true",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "HERMES_TOOL_BACKENDS": "fake",
}


# -- fixtures -------------------------------------------------------------------------------------------------


@pytest.fixture
def echo_server():
    """A tiny TCP echo server on 127.0.0.1; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.05)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                data = conn.recv(1024)
                if data:
                    conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=5)
    server.close()


@pytest.fixture
def originals():
    """The socket functions as they were before a test; the test asserts they come back."""
    return {
        "cls": dict(socket.socket.__dict__),
        "create_connection": socket.create_connection,
        "getaddrinfo": socket.getaddrinfo,
        "gethostbyname": socket.gethostbyname,
        "gethostbyname_ex": socket.gethostbyname_ex,
    }


def _assert_restored(originals) -> None:
    for name in ("connect", "connect_ex", "sendto"):
        assert socket.socket.__dict__.get(name) is originals["cls"].get(name)
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        assert getattr(socket, name) is originals[name]


def _echo(port: int, host: str = "127.0.0.1") -> bytes:
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(b"ping")
        return conn.recv(1024)


# -- import hygiene, env vars ---------------------------------------------------------------------------------


def test_import_does_not_pull_heavy_dependencies():
    code = (
        "import sys, hermes_envs.testing.offline as o\n"
        "o.offline_tokenizer_path(); o.offline_environ()\n"
        "with o.offline_mode(), o.block_network():\n    pass\n"
        "heavy = [m for m in ('transformers', 'atroposlib', 'tokenizers', 'torch', 'wandb', 'huggingface_hub')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_offline_tokenizer_path_is_absolute_folder():
    path = offline_tokenizer_path()
    assert os.path.isabs(path) and os.path.isfile(os.path.join(path, "tokenizer.json"))


def test_offline_environ_values_and_copy():
    env = offline_environ()
    assert env == EXPECTED_ENV
    env["HF_HUB_OFFLINE"] = "0"
    assert offline_environ()["HF_HUB_OFFLINE"] == "1"


def test_offline_mode_sets_and_restores(monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with offline_mode() as env:
        assert env == EXPECTED_ENV
        for key, value in EXPECTED_ENV.items():
            assert os.environ[key] == value
    assert os.environ["WANDB_MODE"] == "online"
    assert "HF_HUB_OFFLINE" not in os.environ


def test_offline_mode_restores_on_error(monkeypatch):
    monkeypatch.delenv("DO_NOT_TRACK", raising=False)
    with pytest.raises(KeyError), offline_mode():
        raise KeyError("boom")
    assert "DO_NOT_TRACK" not in os.environ


def test_offline_mode_flips_already_imported_hub_constant():
    constants = pytest.importorskip("huggingface_hub.constants")
    before = constants.HF_HUB_OFFLINE
    with offline_mode():
        assert constants.HF_HUB_OFFLINE is True
        assert constants.is_offline_mode()
    assert constants.HF_HUB_OFFLINE == before


# -- the error ------------------------------------------------------------------------------------------------


def test_error_types_message_and_pickle():
    err = NetworkBlockedError("example.com", 443, "connect")
    assert isinstance(err, HermesEnvsError)
    assert isinstance(err, ConnectionRefusedError) and isinstance(err, OSError)
    text = str(err)
    assert "example.com:443" in text
    assert "mock" in text and "fake model server" in text and "--hermes-record" in text
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is NetworkBlockedError and str(clone) == text
    assert str(NetworkBlockedError("::2", 80)).count("[::2]:80") == 1


# -- the guard ------------------------------------------------------------------------------------------------


def test_loopback_allowed(echo_server, originals):
    with block_network() as guard:
        assert _echo(echo_server) == b"ping"
        assert _echo(echo_server, "localhost") == b"ping"
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            assert raw.connect_ex(("127.0.0.1", echo_server)) == 0
        finally:
            raw.close()
    assert guard.blocked == []
    _assert_restored(originals)


def test_unroutable_ip_refused_immediately_without_reaching_the_socket(monkeypatch, originals):
    reached = []
    real_connect = socket.socket.connect

    def recording_connect(self, address):
        reached.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    with block_network() as guard:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            start = time.perf_counter()
            with pytest.raises(NetworkBlockedError) as info:
                sock.connect(UNROUTABLE)
            assert time.perf_counter() - start < 0.5
            with pytest.raises(NetworkBlockedError):
                sock.connect_ex(UNROUTABLE)
        finally:
            sock.close()
    assert reached == []  # the real connect was never called: nothing left the machine
    assert "10.255.255.1:9" in str(info.value)
    assert "--hermes-record" in str(info.value)
    assert [str(a) for a in guard.blocked] == ["connect 10.255.255.1:9", "connect_ex 10.255.255.1:9"]
    assert socket.socket.__dict__["connect"] is recording_connect


def test_hostname_refused_before_dns(monkeypatch):
    lookups = []
    real_getaddrinfo = socket.getaddrinfo

    def recording_getaddrinfo(host, *args, **kwargs):
        lookups.append(host)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", recording_getaddrinfo)
    with block_network() as guard:
        start = time.perf_counter()
        with pytest.raises(NetworkBlockedError, match=r"example\.com:80"):
            socket.create_connection(("example.com", 80), timeout=5)
        with pytest.raises(NetworkBlockedError, match=r"getaddrinfo to example\.com:443"):
            socket.getaddrinfo("example.com", 443)
        with pytest.raises(NetworkBlockedError):
            socket.gethostbyname("example.com")
        with pytest.raises(NetworkBlockedError):
            socket.gethostbyname_ex("example.com")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            with pytest.raises(NetworkBlockedError):
                sock.connect(("example.com", 80))  # connect() with a name resolves in C: checked first
        finally:
            sock.close()
        assert time.perf_counter() - start < 0.5
        socket.getaddrinfo("localhost", 80)  # loopback names still resolve
    assert lookups == ["localhost"]
    assert [a.operation for a in guard.blocked] == [
        "create_connection",
        "getaddrinfo",
        "gethostbyname",
        "gethostbyname_ex",
        "connect",
    ]


def test_udp_sendto_refused():
    with block_network():
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            with pytest.raises(NetworkBlockedError):
                sock.sendto(b"x", ("8.8.8.8", 53))
        finally:
            sock.close()


def test_unix_sockets_allowed():
    if not hasattr(socket, "AF_UNIX"):
        pytest.skip("no AF_UNIX")
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        path = os.path.join(tmp, "s")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen()
        with block_network(allow_hosts=()) as guard:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(path)
            conn, _ = server.accept()
            client.sendall(b"hi")
            assert conn.recv(2) == b"hi"
            for s in (client, conn, server):
                s.close()
    assert guard.blocked == []


def test_asyncio_connections(echo_server):
    async def scenario() -> bytes:
        with pytest.raises(NetworkBlockedError):
            await asyncio.open_connection("example.com", 80)
        with pytest.raises(NetworkBlockedError):
            await asyncio.open_connection(*UNROUTABLE)
        reader, writer = await asyncio.open_connection("127.0.0.1", echo_server)
        writer.write(b"ping")
        data = await reader.read(4)
        writer.close()
        await writer.wait_closed()
        return data

    with block_network() as guard:
        assert asyncio.run(asyncio.wait_for(scenario(), 5)) == b"ping"
    assert {a.host for a in guard.blocked} == {"example.com", "10.255.255.1"}


def test_real_http_client_fails_fast_with_our_message():
    httpx = pytest.importorskip("httpx")
    with block_network(), httpx.Client(timeout=5) as client:
        start = time.perf_counter()
        with pytest.raises(httpx.ConnectError, match="--hermes-record"):
            client.get("https://example.com/")
        assert time.perf_counter() - start < 1


def test_restored_after_exit_and_after_error(originals):
    with block_network():
        assert socket.getaddrinfo is not originals["getaddrinfo"]
        assert "connect" in socket.socket.__dict__
    _assert_restored(originals)
    with pytest.raises(NetworkBlockedError), block_network():
        socket.create_connection(UNROUTABLE)
    _assert_restored(originals)


def test_nested_guards(echo_server, originals):
    with block_network() as outer:
        with block_network(allow_hosts=()) as inner:
            with pytest.raises(NetworkBlockedError):
                _echo(echo_server)
        assert _echo(echo_server) == b"ping"  # the outer guard allows loopback again
        with pytest.raises(NetworkBlockedError):
            socket.getaddrinfo("example.com", 80)
    _assert_restored(originals)
    assert [a.host for a in inner.blocked] == ["127.0.0.1"]
    assert [a.host for a in outer.blocked] == ["example.com"]


def test_guard_cannot_be_entered_twice():
    guard = NetworkGuard()
    with guard, pytest.raises(RuntimeError), guard:
        pass
    assert not guard.active


def test_allow_hosts_names_ips_and_networks():
    guard = block_network(allow_hosts=("LocalHost", "::1", "127.0.0.0/8", "api.internal", "10.1.0.0/16"))
    assert guard.is_allowed("localhost")
    assert guard.is_allowed("127.5.6.7")
    assert guard.is_allowed("::ffff:127.0.0.1")
    assert guard.is_allowed("[::1]")
    assert guard.is_allowed(b"api.internal")
    assert guard.is_allowed("10.1.2.3")
    assert guard.is_allowed(None)  # getaddrinfo(None, port): local wildcard
    assert not guard.is_allowed("10.2.0.1")
    assert not guard.is_allowed("example.com")
    assert not guard.is_allowed("::2")
    default = block_network()
    assert default.allow_hosts == offline.DEFAULT_ALLOW_HOSTS
    assert not default.is_allowed("127.0.0.2")  # only the listed loopback addresses by default
