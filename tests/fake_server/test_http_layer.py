"""The HTTP layer (aiohttp's low-level server, app.py): what an aiohttp Application did for us still happens."""

from __future__ import annotations

import json
import socket

import httpx

from hermes_envs.testing.fake_server import FakeOpenAIServer


def _raw_exchange(port: int, head: bytes, body: bytes, wait_continue: bool) -> tuple[bytes, bytes]:
    """Send ``head``, optionally wait for the interim response, then ``body``; return (interim, final)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        interim = b""
        if wait_continue:
            while not interim.endswith(b"\r\n\r\n"):
                chunk = s.recv(1)
                assert chunk, "the server closed the connection before answering Expect"
                interim += chunk
        s.sendall(body)
        final = b""
        while b"\r\n\r\n" not in final or len(final.split(b"\r\n\r\n", 1)[1]) < _length(final):
            chunk = s.recv(65536)
            if not chunk:
                break
            final += chunk
    return interim, final


def _length(response: bytes) -> int:
    for line in response.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def test_expect_100_continue_is_answered_before_the_body():
    # curl sends ``Expect: 100-continue`` for bodies over 1 KB and waits for the 100 before sending the body
    body = json.dumps({"model": "f", "messages": [{"role": "user", "content": "x" * 2000}]}).encode()
    with FakeOpenAIServer(policy="answer:text=ok") as srv:
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
        ).encode()
        interim, final = _raw_exchange(srv.port, head, body, wait_continue=True)
        assert interim.startswith(b"HTTP/1.1 100 Continue")
        assert final.startswith(b"HTTP/1.1 200")
        assert json.loads(final.split(b"\r\n\r\n", 1)[1])["choices"][0]["message"]["content"] == "ok"
        srv.assert_no_failures()


def test_an_unknown_expectation_is_refused_with_417():
    with FakeOpenAIServer(policy="answer:text=ok") as srv:
        head = (
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\nContent-Length: 0\r\n\r\n"
        )
        _, final = _raw_exchange(srv.port, head, b"", wait_continue=False)
        assert final.startswith(b"HTTP/1.1 417")
        assert srv.call_count == 0  # refused before it reached the model


def test_a_body_over_aiohttps_default_limit_is_read():
    # aiohttp refuses bodies over 1 MB unless told otherwise: a long history with big tool results gets there
    big = "y" * (3 * 1024 * 1024)
    with FakeOpenAIServer(policy="answer:text=ok") as srv:
        r = httpx.post(
            srv.base_url + "/chat/completions",
            json={"model": "f", "messages": [{"role": "user", "content": big}]},
            timeout=30,
        )
        assert r.status_code == 200, r.text
        assert srv.calls[0].body["messages"][0]["content"] == big
        srv.assert_no_failures()


def test_serve_forever_refuses_a_running_server():
    with FakeOpenAIServer(policy="answer:text=ok") as srv:
        try:
            srv.serve_forever()
        except RuntimeError as e:
            assert "serve_forever() should be called on a stopped server" in str(e) and "Fix:" in str(e)
        else:
            raise AssertionError("serve_forever() on a running server should raise")
