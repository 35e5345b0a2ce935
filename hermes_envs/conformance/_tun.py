"""Connections the container's processes attempt beyond loopback, by any route: seen on a TUN device, refused at once.

The container's network namespace has only loopback; :func:`start` adds a TUN interface and a default IPv4 route
through it, so a packet for any other address (from a subprocess such as ``curl``, from native code called through
ctypes, from a C extension) reaches this module's reader instead of failing silently with ``ENETUNREACH``. The
reader records the attempt (TCP connect, UDP datagram, DNS query with its name), names who made it (the process's
command line, or for this process the env's frame blocked in the call) and answers at once (a TCP reset, an ICMP
port-unreachable), so the caller fails as fast as it does offline. Nothing is ever forwarded.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import struct
import threading
from collections.abc import Callable
from types import FrameType

__all__ = ["start"]

_TUNSETIFF, _IFF_TUN, _IFF_NO_PI = 0x400454CA, 0x0001, 0x1000
_SIOCSIFADDR, _SIOCGIFFLAGS, _SIOCSIFFLAGS, _SIOCADDRT = 0x8916, 0x8913, 0x8914, 0x890B
_IFF_UP, _RTF_UP = 0x1, 0x1
_NAME = b"hermes0"
_ADDRESS = "10.255.255.254"


class _Sockaddr(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("data", ctypes.c_char * 14)]


class _Rtentry(ctypes.Structure):
    _fields_ = [
        ("pad1", ctypes.c_ulong),
        ("dst", _Sockaddr),
        ("gateway", _Sockaddr),
        ("genmask", _Sockaddr),
        ("flags", ctypes.c_ushort),
        ("pad2", ctypes.c_short),
        ("pad3", ctypes.c_ulong),
        ("pad4", ctypes.c_void_p),
        ("metric", ctypes.c_short),
        ("dev", ctypes.c_char_p),
        ("mtu", ctypes.c_ulong),
        ("window", ctypes.c_ulong),
        ("irtt", ctypes.c_ushort),
    ]


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _ip(src: bytes, dst: bytes, proto: int, payload: bytes) -> bytes:
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0, 64, proto, 0, src, dst)
    return header[:10] + struct.pack("!H", _checksum(header)) + header[12:] + payload


def _reset(packet: bytes, ihl: int) -> bytes:
    """A TCP RST+ACK answering the SYN ``packet``."""
    src, dst = packet[12:16], packet[16:20]
    sport, dport, seq = struct.unpack("!HHI", packet[ihl : ihl + 8])
    tcp = struct.pack("!HHIIBBHHH", dport, sport, 0, (seq + 1) & 0xFFFFFFFF, 5 << 4, 0x14, 0, 0, 0)
    pseudo = dst + src + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", _checksum(pseudo + tcp)) + tcp[18:]
    return _ip(dst, src, 6, tcp)


def _unreachable(packet: bytes, ihl: int) -> bytes:
    """An ICMP port-unreachable answering the datagram ``packet``."""
    body = packet[: ihl + 8]
    icmp = struct.pack("!BBHI", 3, 3, 0, 0) + body
    icmp = icmp[:2] + struct.pack("!H", _checksum(icmp)) + icmp[4:]
    return _ip(packet[16:20], packet[12:16], 1, icmp)


def _dns_name(payload: bytes) -> str:
    """The first question's name of a DNS query, or ``""``."""
    labels, i = [], 12
    with contextlib.suppress(IndexError):
        while payload[i]:
            n = payload[i]
            labels.append(payload[i + 1 : i + 1 + n].decode("ascii", "replace"))
            i += 1 + n
    return ".".join(labels)


def _owner(local_port: int, udp: bool) -> int | None:
    """The pid of this namespace's process holding a socket bound to ``local_port`` (IPv4)."""
    inode = ""
    with contextlib.suppress(OSError), open(f"/proc/net/{'udp' if udp else 'tcp'}", encoding="ascii") as fh:
        for row in fh.read().splitlines()[1:]:
            fields = row.split()
            if len(fields) > 9 and int(fields[1].rsplit(":", 1)[1], 16) == local_port:
                inode = fields[9]
                break
    if not inode:
        return None
    wanted = f"socket:[{inode}]"
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == wanted:
                        return int(pid)
    return None


def _who(pid: int | None, reader: int, site_of_threads: Callable[[int], str]) -> str:
    if pid is None:
        return "a process of the env"
    if pid == os.getpid():
        site = site_of_threads(reader)
        return f"native code in the env's process{f' at {site}' if site else ''}"
    with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as fh:
        argv = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
        command = " ".join(argv)
        return f"a process the env started (`{command[:100]}`)"
    return "a process the env started"


def _site_of_threads(reader: int) -> str:
    """The env's frame in any thread of this process but the reader (the one blocked in the native call)."""
    from hermes_envs.conformance._sites import current_frames, is_author_file

    for ident, top in current_frames().items():
        if ident == reader:
            continue
        frame: FrameType | None = top
        while frame is not None:
            if is_author_file(frame.f_code.co_filename):
                import linecache

                line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
                return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}: {line}"
            frame = frame.f_back
    return ""


def _configure() -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH22x", _NAME, _IFF_TUN | _IFF_NO_PI))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            address = struct.pack("HH4s8x", socket.AF_INET, 0, socket.inet_aton(_ADDRESS))
            fcntl.ioctl(s, _SIOCSIFADDR, struct.pack("16s", _NAME) + address)
            ifr = struct.pack("16sH14s", _NAME, 0, b"")
            flags = struct.unpack("16sH14s", fcntl.ioctl(s, _SIOCGIFFLAGS, ifr))[1]
            fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14s", _NAME, flags | _IFF_UP, b""))
            route = _Rtentry()
            route.dst.family = route.genmask.family = socket.AF_INET
            route.flags = _RTF_UP
            route.dev = _NAME
            fcntl.ioctl(s, _SIOCADDRT, bytes(route))
    except OSError:
        os.close(fd)
        raise
    return fd


def start(report: Callable[[str, str, int | None, str], None]) -> str:
    """Route every IPv4 address but loopback to the reader; ``report(operation, host, port, who)`` is called per
    attempt. Returns why it could not start (empty when it did)."""
    try:
        fd = _configure()
    except OSError as exc:
        return f"no TUN device in the container ({exc})"

    def read() -> None:
        me = threading.get_ident()
        seen_dns: set[tuple[str, int]] = set()
        while True:
            try:
                packet = os.read(fd, 65535)
            except OSError:
                return
            if len(packet) < 28 or packet[0] >> 4 != 4:
                continue
            ihl, proto = (packet[0] & 0xF) * 4, packet[9]
            host = socket.inet_ntoa(packet[16:20])
            sport, dport = struct.unpack("!HH", packet[ihl : ihl + 4])
            try:
                if proto == 6 and packet[ihl + 13] & 0x02 and not packet[ihl + 13] & 0x10:  # SYN, not SYN+ACK
                    who = _who(_owner(sport, False), me, _site_of_threads)
                    os.write(fd, _reset(packet, ihl))
                    report(f"connect, by {who}, to", host, dport, who)
                elif proto == 17:
                    who = _who(_owner(sport, True), me, _site_of_threads)
                    os.write(fd, _unreachable(packet, ihl))
                    name = _dns_name(packet[ihl + 8 :]) if dport == 53 else ""
                    key = (name or host, dport)
                    if key not in seen_dns:  # a resolver retries each server: one report per name
                        seen_dns.add(key)
                        report(
                            f"a DNS lookup of {name}, by {who}, via" if name else f"sendto, by {who}, to",
                            host,
                            dport,
                            who,
                        )
            except Exception:  # a malformed packet, a process gone: never stop reading
                continue

    threading.Thread(target=read, name="hermes-contain-tun", daemon=True).start()
    return ""
