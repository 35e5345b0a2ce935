"""What a FakeOpenAIServer recorded, and the assertion helpers over it (a mixin of the server)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._records import Call
from ._view import tool_names

if TYPE_CHECKING:
    from ._hosts import Host

__all__ = ["CHAT_ROUTES", "RecordedCalls"]

CHAT_ROUTES = ("/v1/chat/completions", "/chat/completions")


class RecordedCalls:
    """The server's records (:attr:`calls`, :attr:`misses`, :attr:`failures`) and the helpers tests assert with.

    The server provides ``_model`` (its FakeModel) and ``_hosting`` (its Host, which reads the served model's
    records: ours, or the child process's while it serves).
    """

    _model: Any
    _hosting: Host

    def _records(self) -> tuple[list[Call], list[str]]:
        return self._hosting.records()

    @property
    def calls(self) -> list[Call]:
        return self._records()[0]

    @property
    def call_count(self) -> int:
        return len(self._records()[0])

    @property
    def request_count(self) -> int:
        """Requests received since the start (or ``reset()``), however few :attr:`calls` the history keeps."""
        return self._hosting.request_count()

    @property
    def miss_count(self) -> int:
        """Misses since the start (or ``reset()``), however few :attr:`misses` the history keeps."""
        return self._hosting.miss_count()

    def calls_to(self, route: str) -> list[Call]:
        """Calls to a route; ``"/v1/chat/completions"`` also matches the un-prefixed path."""
        route = route.rstrip("/")
        alt = route[3:] if route.startswith("/v1/") else "/v1" + route
        return [c for c in self.calls if c.route in (route, alt)]

    @property
    def chat_calls(self) -> list[Call]:
        return [c for c in self.calls if c.route in CHAT_ROUTES]

    @property
    def misses(self) -> list[str]:
        """Every unanswered request's message (strict or not)."""
        return self._records()[1]

    @property
    def failures(self) -> list[str]:
        """Misses that fail the test (empty when ``strict=False``)."""
        return self.misses if self._model.strict else []

    def assert_no_failures(self) -> None:
        failures = self.failures
        if failures:
            body = "\n\n".join(f"[{i + 1}] {f}" for i, f in enumerate(failures))
            raise AssertionError(f"the fake model server got {len(failures)} unmatched request(s):\n\n{body}")

    # ------------------------------------------------------------------------------------ assertion helpers
    def tools_offered(self) -> list[list[str]]:
        """Per chat call, the names of the tools offered."""
        return [tool_names((c.body or {}).get("tools")) for c in self.chat_calls if isinstance(c.body, dict)]

    def temperatures(self) -> list[float | None]:
        """Per chat call, the requested temperature (None when absent)."""
        return [(c.body or {}).get("temperature") for c in self.chat_calls if isinstance(c.body, dict)]

    def turns(self) -> list[int | None]:
        """Per chat call, the 1-based scripted turn that answered it (None for policy answers and misses)."""
        return [None if c.turn_index is None else c.turn_index + 1 for c in self.chat_calls]

    def conversations(self) -> int:
        """How many conversations started (chat calls answered as turn 1)."""
        return sum(1 for t in self.turns() if t == 1)
