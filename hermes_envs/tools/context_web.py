"""ToolContext's web and browser helpers, as upstream's ToolContext has them, plus awaitable twins.

``ctx.web_search(query)``, ``ctx.web_extract(urls)``, ``ctx.browser_navigate(url)`` and ``ctx.browser_snapshot()``
call the same tools the rollout used, for the rollout's task id (so ``browser_snapshot`` sees the page the model left
open), and return the parsed JSON result (``{"error": ...}`` when the tool failed). The ``a``-prefixed twins run off
the event loop.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["WebBrowserContextMixin"]


class WebBrowserContextMixin:
    """Mixed into :class:`~hermes_envs.tools.context.ToolContext` (which provides ``call_tool``)."""

    def call_tool(self, name: str, args: dict) -> str:  # pragma: no cover - provided by ToolContext
        raise NotImplementedError

    def _tool_json(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        raw = self.call_tool(name, args)
        try:
            parsed = json.loads(raw)
        except (TypeError, ValueError):
            return {"error": raw}
        return parsed if isinstance(parsed, dict) else {"result": parsed}

    def web_search(self, query: str) -> dict[str, Any]:
        """Search the web (the fake corpus under tests): ``{"success", "data": {"web": [...]}}``."""
        return self._tool_json("web_search", {"query": query})

    def web_extract(self, urls: list[str]) -> dict[str, Any]:
        """Extract pages as Markdown: ``{"results": [{"url", "title", "content", "error"}]}``."""
        return self._tool_json("web_extract", {"urls": list(urls)})

    def browser_navigate(self, url: str) -> dict[str, Any]:
        """Open ``url`` in the rollout's browser tab: ``{"success", "url", "title", "snapshot", ...}``."""
        return self._tool_json("browser_navigate", {"url": url})

    def browser_snapshot(self) -> dict[str, Any]:
        """The accessibility snapshot of the rollout's current page: ``{"success", "snapshot", "element_count"}``."""
        return self._tool_json("browser_snapshot", {})

    async def aweb_search(self, query: str) -> dict[str, Any]:
        from .sandbox import run_off_loop

        return await run_off_loop(self.web_search, query)

    async def aweb_extract(self, urls: list[str]) -> dict[str, Any]:
        from .sandbox import run_off_loop

        return await run_off_loop(self.web_extract, urls)

    async def abrowser_navigate(self, url: str) -> dict[str, Any]:
        from .sandbox import run_off_loop

        return await run_off_loop(self.browser_navigate, url)

    async def abrowser_snapshot(self) -> dict[str, Any]:
        from .sandbox import run_off_loop

        return await run_off_loop(self.browser_snapshot)
