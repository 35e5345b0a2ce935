"""Make atroposlib's layered retries fast for tests.

atroposlib wraps its server calls in tenacity (3 attempts outside, 3 inside, random waits up to 10 s) and the openai
client retries on its own (2 more, with back-off). Against a fake server that returns an error on purpose, one
failing call then takes a minute. :func:`fast_retries` sets every tenacity layer of atroposlib's server classes to
one attempt with no wait, and :func:`disable_client_retries` sets ``max_retries=0`` on the openai clients of a
``ServerManager``. ``fast_retries`` is undone when its block exits; ``disable_client_retries`` replaces the clients of
that one ServerManager for good (use it on test envs only). Production code is never touched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

_RETRYING_METHODS = (
    "chat_completion",
    "_chat_comp",
    "_chat_eval",
    "completion",
    "_comp",
    "_comp_eval",
    "tokens_and_logprobs_completion",
    "_tokens_and_logprobs_comp",
    "_tokens_and_logprobs_comp_eval",
    "get_logprobs",
)


_FOUND: dict[int, list[Any]] = {}


def _retry_objects() -> list[Any]:
    """The tenacity ``Retrying`` objects of atroposlib's server classes, found once per module object (a check run
    enters :func:`fast_retries` hundreds of times; the classes' decorators never change)."""
    from atroposlib.envs.server_handling import server_baseline

    key = id(server_baseline)
    if key not in _FOUND:
        _FOUND[key] = _find_retry_objects(server_baseline)
    return _FOUND[key]


def _find_retry_objects(server_baseline: Any) -> list[Any]:
    found = []
    for klass in vars(server_baseline).values():
        if not isinstance(klass, type):
            continue
        for name in _RETRYING_METHODS:
            retrying = getattr(getattr(klass, name, None), "retry", None)
            if retrying is not None and hasattr(retrying, "stop") and retrying not in found:
                found.append(retrying)
    return found


@contextlib.contextmanager
def fast_retries(attempts: int = 1) -> Iterator[None]:
    """Within the block, atroposlib's tenacity retries make ``attempts`` tries with no wait between them."""
    from tenacity import stop_after_attempt, wait_none

    saved = [(r, r.stop, r.wait) for r in _retry_objects()]
    try:
        for retrying, _, _ in saved:
            retrying.stop = stop_after_attempt(attempts)
            retrying.wait = wait_none()
        yield
    finally:
        for retrying, stop, wait in saved:
            retrying.stop = stop
            retrying.wait = wait


def disable_client_retries(server_manager: Any) -> None:
    """Set ``max_retries=0`` on the openai client of every server of an atroposlib ``ServerManager``."""
    for server in getattr(server_manager, "servers", []):
        client = getattr(server, "openai", None)
        if client is not None and hasattr(client, "with_options"):
            server.openai = client.with_options(max_retries=0)
