"""pytest fixtures for the fake model server and other HTTP traffic.

- ``fake_openai``: a started :class:`FakeOpenAIServer` for one test; strict — the test errors at teardown when the
  server got a request no scripted turn matched. Configure with
  ``@pytest.mark.fake_openai(script=..., policy=..., strict=..., faults=[...], tokenizer=..., process=...)`` (a
  relative script path is resolved beside the test file; ``process=True`` serves from its own Python process, for
  many concurrent rollouts) or by setting ``fake_openai.script = ...`` in the test.
- ``fake_openai_session``: one server for the whole session (reset it per test with ``.reset()`` and set its
  ``.script``); its failures are reported at session end.
- ``fake_http``: a respx router for ``httpx`` traffic other than the model (a judge, a web search): every request
  to a host that is not mocked fails, loopback passes through. (respx does not patch ``httpx2``; the fake server
  covers the model traffic of openai 3.x.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["fake_http", "fake_openai", "fake_openai_session"]

_MARKER = "fake_openai"


def _server_options() -> set[str]:
    """What ``@pytest.mark.fake_openai`` accepts: the keyword arguments of FakeOpenAIServer itself, read from its
    signature so the marker never lags behind the server (host/port stay the fixture's: a random loopback port)."""
    import inspect

    from hermes_envs.testing.fake_server import FakeOpenAIServer

    return set(inspect.signature(FakeOpenAIServer).parameters) - {"host", "port"}


def _marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    # closest marker wins: iterate from the farthest (module/class) to the closest (function)
    for mark in reversed(list(request.node.iter_markers(_MARKER))):
        if mark.args:
            kwargs["script"] = mark.args[0]
        kwargs.update(mark.kwargs)
    options = _server_options()
    unknown = set(kwargs) - options
    if unknown:
        raise pytest.UsageError(
            f"@pytest.mark.fake_openai should only take {', '.join(sorted(options))}; got {sorted(unknown)}."
        )
    script = kwargs.get("script")
    if isinstance(script, (str, Path)):
        p = Path(script)
        if not p.is_absolute() and not p.exists():
            p = Path(str(request.node.path)).parent / p
        kwargs["script"] = p
    return kwargs


@pytest.fixture
def fake_openai(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A strict fake OpenAI-compatible server for one test (``.base_url``, ``.calls``, ``.failures``)."""
    from hermes_envs.testing.fake_server import FakeOpenAIServer

    srv = FakeOpenAIServer(**_marker_kwargs(request))
    with srv:
        yield srv
    if srv.failures:
        body = "\n\n".join(f"[{i + 1}] {f}" for i, f in enumerate(srv.failures))
        pytest.fail(
            f"the fake model server got {len(srv.failures)} unmatched request(s):\n\n{body}", pytrace=False
        )


@pytest.fixture(scope="session")
def fake_openai_session() -> Iterator[Any]:
    """One fake server for the whole session; call ``.reset()`` and set ``.script`` per test."""
    from hermes_envs.testing.fake_server import FakeOpenAIServer

    srv = FakeOpenAIServer()
    with srv:
        yield srv
    if srv.failures:
        body = "\n\n".join(f"[{i + 1}] {f}" for i, f in enumerate(srv.failures))
        pytest.fail(
            f"the session fake model server got {len(srv.failures)} unmatched request(s):\n\n{body}",
            pytrace=False,
        )


@pytest.fixture
def fake_http() -> Iterator[Any]:
    """A respx router for non-model httpx traffic; unmocked hosts fail, 127.0.0.1/localhost pass through."""
    try:
        import respx
    except (
        ImportError
    ):  # an extra, not a dependency: its pytest plugin would cost every pytest run (pyproject)
        pytest.fail(
            "the fake_http fixture needs respx, which hermes-envs installs only with its fake-http extra. "
            "Fix: pip install 'hermes-envs[fake-http]' (or pip install respx).",
            pytrace=False,
        )

    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        router.route(host="127.0.0.1").pass_through()
        router.route(host="localhost").pass_through()
        router.route(host="::1").pass_through()
        yield router
