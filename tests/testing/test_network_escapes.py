"""Ten ways out of the network guard, each held: Python-level calls by the guard itself (a readable
NetworkBlockedError), child processes, forked children and native code by the loopback-only network namespace.

The target is 192.0.2.1 (TEST-NET-1). The ways that only the namespace holds are skipped where no namespace can
be made, and each checks, in the thread or process that would send, that it runs inside the namespace before it
tries (so a broken guard fails the test without sending a packet); inside, the attempt fails at once (ENETUNREACH):
the namespace has no route but loopback.
"""

from __future__ import annotations

import _socket
import asyncio
import ctypes
import ctypes.util
import errno
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hermes_envs.testing import loopback_namespace
from hermes_envs.testing.offline import NetworkBlockedError, block_network

TARGET = "192.0.2.1"
PORT = 80
needs_namespace = pytest.mark.skipif(loopback_namespace() is None, reason="no network namespace (needs root)")
HOST_NS = os.readlink("/proc/thread-self/ns/net")
#: Shell prefix: refuse to go on in the host namespace (exit 99) rather than send anything.
GATE = f'[ "$(readlink /proc/self/ns/net)" != "{HOST_NS}" ] || exit 99; '


def _held(exc: BaseException | int) -> bool:
    if isinstance(exc, NetworkBlockedError):
        return True
    code = exc if isinstance(exc, int) else getattr(exc, "errno", None)
    return code in (errno.ENETUNREACH, errno.EHOSTUNREACH)


@pytest.fixture
def no_route_out():
    """Run the test's thread inside the loopback-only namespace: the Python-level guard is what the test checks,
    and on this machine the TEST-NET target can be the real default gateway, so a guard that regressed must hit
    ENETUNREACH (a failed test), never send a packet. Skipped where no namespace can be made."""
    ns = loopback_namespace()
    if ns is None:
        pytest.skip(
            "no network namespace: the Python-level guard tests would risk real traffic if it regressed"
        )
    ns.enter()
    try:
        yield
    finally:
        ns.leave()


@pytest.mark.usefixtures("no_route_out")
def test_python_socket_connect_is_blocked_with_a_message() -> None:
    with block_network(isolate=True) as guard, pytest.raises(NetworkBlockedError, match="192.0.2.1:80"):
        socket.socket().connect((TARGET, PORT))
    assert [str(a) for a in guard.blocked] == ["connect 192.0.2.1:80"]


@pytest.mark.usefixtures("no_route_out")
def test_create_connection_is_blocked() -> None:
    with block_network(isolate=True), pytest.raises(NetworkBlockedError):
        socket.create_connection((TARGET, PORT), timeout=1)


@pytest.mark.usefixtures("no_route_out")
def test_raw_socket_module_connect_is_blocked_by_the_audit_hook() -> None:
    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        with block_network(isolate=True) as guard, pytest.raises(NetworkBlockedError):
            s.connect((TARGET, PORT))
    finally:
        s.close()
    assert guard.blocked and guard.blocked[0].operation == "connect"


@pytest.mark.usefixtures("no_route_out")
def test_udp_sendmsg_is_blocked() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        with block_network(isolate=True) as guard, pytest.raises(NetworkBlockedError):
            s.sendmsg([b"x"], [], 0, (TARGET, 53))
    assert guard.blocked[0].operation == "sendmsg"


@pytest.mark.usefixtures("no_route_out")
def test_reverse_dns_is_blocked() -> None:
    with block_network(isolate=True), pytest.raises(NetworkBlockedError, match="gethostbyaddr"):
        socket.gethostbyaddr(TARGET)
    with block_network(isolate=True), pytest.raises(NetworkBlockedError, match="getnameinfo"):
        socket.getnameinfo((TARGET, PORT), 0)


@needs_namespace
def test_ctypes_connect_cannot_leave() -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    address = struct.pack("!HH4s8x", socket.AF_INET, PORT, socket.inet_aton(TARGET))
    address = struct.pack("=H", socket.AF_INET) + address[2:]  # sa_family is host byte order
    with block_network(isolate=True):
        fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
        assert fd >= 0
        try:
            assert os.readlink("/proc/thread-self/ns/net") != HOST_NS, "native code ran in the host namespace"
            result = libc.connect(fd, ctypes.c_char_p(address), len(address))
            code = ctypes.get_errno()
        finally:
            libc.close(fd)
    assert result == -1 and _held(code), os.strerror(code)


PY_CONNECT = (
    "import os,socket,sys\n"
    f"if os.readlink('/proc/self/ns/net') == {HOST_NS!r}: sys.exit(99)\n"
    "try:\n socket.create_connection(('192.0.2.1', 80), timeout=5)\nexcept OSError as e:\n sys.exit(e.errno or 1)\n"
)


@needs_namespace
def test_a_python_subprocess_cannot_leave() -> None:
    with block_network(isolate=True):
        done = subprocess.run([sys.executable, "-c", PY_CONNECT], timeout=30)
    assert _held(done.returncode), done.returncode


@needs_namespace
@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl")
def test_curl_in_a_subprocess_cannot_leave() -> None:
    with block_network(isolate=True):
        done = subprocess.run(
            ["sh", "-c", GATE + f"curl -sS --max-time 5 http://{TARGET}/"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 7, done.stderr  # curl: failed to connect (99: it ran in the host namespace)


def _curl_from_a_terminal_tool(task_id: str) -> str:
    """What a rollout's terminal tool prints when it runs the gated curl inside an isolating guard."""
    from hermes_envs.tools import ToolContext

    async def run() -> dict:
        ctx = ToolContext(task_id)
        try:
            return await ctx.aterminal(f"sh -c '{GATE}curl -sS --max-time 5 http://{TARGET}/'; echo rc=$?")
        finally:
            ctx.cleanup()

    with block_network(isolate=True):
        return str(asyncio.run(run()))


@needs_namespace
@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl")
def test_a_terminal_tool_cannot_leave() -> None:

    assert "rc=7" in _curl_from_a_terminal_tool("netns-escape-test")


@needs_namespace
@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl")
def test_a_shell_prestarted_before_the_guard_is_not_handed_to_a_task_inside_it() -> None:
    """Sandboxes keep pre-started shells for new tasks; one started before the guard lives in the host's network
    namespace. Before, a task inside the guard got it and its curl left the namespace (rc=99 from the gate)."""
    import time

    from hermes_envs.tools.sandbox import default_manager, get_sandbox

    warm = get_sandbox("netns-warm")  # starts the spares off the critical path
    for _ in range(200):
        if default_manager.prepared():
            break
        time.sleep(0.05)
    else:
        pytest.skip("no shell was pre-started (prestart=0)")
    warm.cleanup()

    assert "rc=7" in _curl_from_a_terminal_tool("netns-after-warm")


@needs_namespace
def test_a_forked_child_cannot_leave() -> None:
    read, write = os.pipe()
    with block_network(isolate=True):
        pid = os.fork()
        if pid == 0:  # the child: try natively, so only the namespace can stop it
            try:
                if os.readlink("/proc/thread-self/ns/net") == HOST_NS:
                    os.write(write, b"99")
                    os._exit(0)
                libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
                address = struct.pack("=H", socket.AF_INET) + struct.pack(
                    "!H4s8x", PORT, socket.inet_aton(TARGET)
                )
                fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
                libc.connect(fd, ctypes.c_char_p(address), len(address))
                os.write(write, str(ctypes.get_errno()).encode())
            finally:
                os._exit(0)
        os.close(write)
        code = int(os.read(read, 16) or b"0")
        os.close(read)
        os.waitpid(pid, 0)
    assert _held(code), os.strerror(code)


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


@needs_namespace
@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl")
def test_loopback_servers_stay_reachable_from_inside() -> None:
    """The fake model server runs in this process (host namespace): processes inside still reach it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with block_network(isolate=True):
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            done = subprocess.run(["curl", "-sS", "--max-time", "10", url], capture_output=True, text=True)
            assert done.stdout == "hello", done.stderr
            with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=5):
                pass  # and this process's own sockets too
    finally:
        server.shutdown()
        server.server_close()


@needs_namespace
def test_threads_leave_the_namespace_when_the_guard_ends() -> None:
    ns = loopback_namespace()
    assert ns is not None
    with block_network(isolate=True):
        subprocess.run(["true"])
        assert ns.inside()
    socket.socket().close()
    assert not ns.inside()
    assert block_network(isolate=True).isolation == "namespace" and block_network().isolation == "partial"


SNEAKY = """
    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        import _socket, subprocess
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        try:
            s.connect(("192.0.2.1", 80))
        except OSError:
            pass
        finally:
            s.close()
        gate = '[ "$(readlink /proc/self/ns/net)" != "HOST_NS" ] || exit 99; curl -s --max-time 5 http://192.0.2.1/'
        rc = subprocess.run(["sh", "-c", gate]).returncode
        with open(OUT, "a") as fh:
            fh.write(f"{rc}\\n")
        return 1.0

    async def _unused_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:"""


@needs_namespace
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl")
@pytest.mark.parametrize("contain", [False, True], ids=["in-process", "contained"])
def test_hc902_names_the_raw_socket_and_the_namespace_holds_the_subprocess(tmp_path, contain) -> None:
    """An env whose reward connects through ``_socket`` and runs curl: HC902 reports the first (it passed before)
    whether the env runs in the kit's process or contained, and the curl run inside the conformance session cannot
    connect (read from the file the reward writes: on the host only when the env ran uncontained; a contained
    env's writes stay in its overlay)."""
    from pathlib import Path

    from hermes_envs.conformance._runner import load_settings, run_conformance

    source = (Path(__file__).resolve().parents[2] / "environments" / "arithmetic_env.py").read_text()
    marker = "    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:"
    out = tmp_path / "curl_rc.txt"
    env = tmp_path / "sneaky_env.py"
    env.write_text(
        source.replace(marker, SNEAKY.replace("HOST_NS", HOST_NS).replace("OUT", repr(str(out))), 1)
    )
    report = run_conformance([str(env)], load_settings(tmp_path, select=["HC902"], contain=contain))
    findings = [f for o in report.envs[0].outcomes if o.check_id == "HC902" for f in o.findings]
    assert any("connect 192.0.2.1:80" in f.message for f in findings), findings
    if contain:
        assert not out.exists()  # (the container kept the reward's write)
        assert any("curl" in f.message for f in findings), findings  # the subprocess's attempt is named too
        return
    codes = set(out.read_text().split())
    assert codes == {"7"}, codes  # curl could not connect (99 would mean it ran outside the namespace)


_PARTIAL = """
import socket, warnings
from hermes_envs.testing.offline import NetworkBlockedError, NetworkGuardPartialWarning, block_network
guard = block_network(isolate=True)
print(guard.isolation)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with guard:
        try:
            socket.create_connection((%r, %d), timeout=1)
        except NetworkBlockedError:
            print("refused")
print([str(w.message) for w in caught if issubclass(w.category, NetworkGuardPartialWarning)])
"""


def test_without_a_namespace_the_guard_says_it_is_partial() -> None:
    """In a process that may not make a network namespace (root without CAP_SYS_ADMIN here, or not root)."""
    argv = [sys.executable, "-c", _PARTIAL % (TARGET, PORT)]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("needs setpriv (util-linux) to start a child without CAP_SYS_ADMIN")
        argv = ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    isolation, refused, warned = done.stdout.strip().splitlines()
    assert isolation == "partial"
    assert refused == "refused"  # Python-level calls are still refused
    assert "the network guard is partial" in warned and "CAP_SYS_ADMIN" in warned and "root" in warned, warned
