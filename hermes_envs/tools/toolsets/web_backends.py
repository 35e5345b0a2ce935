"""The real web backends upstream supports (Firecrawl, Parallel, Tavily, Exa), plus the corpus served by another
process. Each maps its service's answer to upstream's shapes, and sends every call through the recorder hook with a
request that holds no credentials (keys go in headers, or are added to the body outside the recorded request)."""

from __future__ import annotations

import os
from typing import Any

from ._backends import FAKE
from ._limits import ToolBackendError, timeout_for
from .recording import recorded_call

__all__ = ["CorpusServerBackend", "ExaBackend", "FirecrawlBackend", "ParallelBackend", "TavilyBackend"]

SEARCH_LIMIT = 5


def _has(name: str) -> bool:
    return bool(os.environ.get(name, "").strip())


def _http_post(url: str, payload: dict, headers: dict[str, str]) -> dict:
    import httpx

    response = httpx.post(url, json=payload, headers=headers, timeout=timeout_for("web"))
    if response.status_code >= 400:
        raise ToolBackendError(
            f"the web backend at {url} should answer 2xx; got HTTP {response.status_code}: {response.text[:300]}. "
            "Fix: check the API key and your plan's limits."
        )
    return response.json()


def _key(name: str, backend: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ToolBackendError(
            f"the {backend} web backend should have {name} set; got no such environment variable. Fix: export "
            f"{name}=..., or HERMES_WEB_BACKEND={FAKE} for the offline corpus."
        )
    return value


class FirecrawlBackend:
    """Firecrawl's REST API (``FIRECRAWL_API_KEY``; ``FIRECRAWL_API_URL`` for a self-hosted instance)."""

    name = "firecrawl"

    def _call(self, endpoint: str, payload: dict) -> dict:
        base = os.environ.get("FIRECRAWL_API_URL", "").strip().rstrip("/") or "https://api.firecrawl.dev"
        headers = {}
        if _has("FIRECRAWL_API_KEY") or not _has("FIRECRAWL_API_URL"):
            headers["Authorization"] = f"Bearer {_key('FIRECRAWL_API_KEY', self.name)}"
        return _http_post(f"{base}/v1/{endpoint}", payload, headers)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("search", {"query": query, "limit": limit})
            rows = raw.get("data") or []
            rows = rows.get("web", []) if isinstance(rows, dict) else rows
            return {
                "success": True,
                "data": {
                    "web": [
                        {
                            "title": r.get("title", ""),
                            "url": r.get("url", ""),
                            "description": r.get("description", ""),
                            "position": i,
                        }
                        for i, r in enumerate(rows, 1)
                    ]
                },
            }

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            results = []
            for url in urls:
                try:
                    raw = self._call("scrape", {"url": url, "formats": ["markdown"]}).get("data", {})
                    meta = raw.get("metadata", {})
                    results.append(
                        {
                            "url": url,
                            "title": meta.get("title", ""),
                            "content": raw.get("markdown", ""),
                            "error": None,
                        }
                    )
                except ToolBackendError as exc:
                    results.append({"url": url, "title": "", "content": "", "error": str(exc)})
            return {"results": results}

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class TavilyBackend:
    """Tavily's REST API (``TAVILY_API_KEY``; ``TAVILY_API_URL`` for a proxy)."""

    name = "tavily"

    def _call(self, endpoint: str, payload: dict) -> dict:
        base = os.environ.get("TAVILY_API_URL", "").strip().rstrip("/") or "https://api.tavily.com"
        return _http_post(f"{base}/{endpoint}", {**payload, "api_key": _key("TAVILY_API_KEY", self.name)}, {})

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("search", {"query": query, "max_results": limit})
            rows = [
                {
                    "title": r.get("title", ""),
                    "url": r.get("url", ""),
                    "description": r.get("content", ""),
                    "position": i,
                }
                for i, r in enumerate(raw.get("results", []), 1)
            ]
            return {"success": True, "data": {"web": rows}}

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("extract", {"urls": urls})
            results = [
                {
                    "url": r.get("url", ""),
                    "title": r.get("title", ""),
                    "content": r.get("raw_content") or r.get("content", ""),
                    "error": None,
                }
                for r in raw.get("results", [])
            ]
            results += [
                {
                    "url": f.get("url", ""),
                    "title": "",
                    "content": "",
                    "error": f.get("error", "extraction failed"),
                }
                for f in raw.get("failed_results", [])
            ]
            return {"results": results}

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class ExaBackend:
    """Exa's REST API (``EXA_API_KEY``)."""

    name = "exa"

    def _call(self, endpoint: str, payload: dict) -> dict:
        return _http_post(
            f"https://api.exa.ai/{endpoint}", payload, {"x-api-key": _key("EXA_API_KEY", self.name)}
        )

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call(
                "search", {"query": query, "numResults": limit, "contents": {"highlights": True}}
            )
            rows = [
                {
                    "title": r.get("title") or "",
                    "url": r.get("url", ""),
                    "description": " ".join(r.get("highlights") or []) or r.get("text", "")[:300],
                    "position": i,
                }
                for i, r in enumerate(raw.get("results", []), 1)
            ]
            return {"success": True, "data": {"web": rows}}

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("contents", {"urls": urls, "text": True})
            found = {r.get("url"): r for r in raw.get("results", [])}
            return {
                "results": [
                    {
                        "url": u,
                        "title": found[u].get("title") or "",
                        "content": found[u].get("text", ""),
                        "error": None,
                    }
                    if u in found
                    else {"url": u, "title": "", "content": "", "error": "extraction failed"}
                    for u in urls
                ]
            }

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class ParallelBackend:
    """Parallel's SDK (``PARALLEL_API_KEY``; the ``parallel-web`` package, imported on first use)."""

    name = "parallel"

    def _client(self) -> Any:
        key = _key("PARALLEL_API_KEY", self.name)
        try:
            from parallel import Parallel  # type: ignore[import-not-found]
        except ImportError:
            raise ToolBackendError(
                "the parallel web backend should have the 'parallel-web' package installed; got ImportError. "
                f"Fix: pip install parallel-web, or choose another backend (HERMES_WEB_BACKEND={FAKE})."
            ) from None
        return Parallel(api_key=key)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._client().beta.search(objective=query, max_results=limit)
            rows = [
                {
                    "title": getattr(r, "title", "") or "",
                    "url": getattr(r, "url", ""),
                    "description": " ".join(getattr(r, "excerpts", None) or []),
                    "position": i,
                }
                for i, r in enumerate(getattr(raw, "results", []), 1)
            ]
            return {"success": True, "data": {"web": rows}}

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            raw = self._client().beta.extract(urls=urls, full_content=True)
            return {
                "results": [
                    {
                        "url": getattr(r, "url", ""),
                        "title": getattr(r, "title", "") or "",
                        "content": getattr(r, "full_content", "") or "",
                        "error": None,
                    }
                    for r in getattr(raw, "results", [])
                ]
            }

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class CorpusServerBackend:
    """The fake corpus served by another process (``hermes-envs fake-server --web-corpus``) at
    ``HERMES_WEB_CORPUS_URL`` (``http://127.0.0.1:PORT/web``)."""

    name = "corpus-server"

    def _url(self) -> str:
        url = os.environ.get("HERMES_WEB_CORPUS_URL", "").strip().rstrip("/")
        if not url:
            raise ToolBackendError(
                "the corpus-server web backend should have HERMES_WEB_CORPUS_URL set; got none. Fix: export the URL "
                "`hermes-envs fake-server --web-corpus` prints (http://127.0.0.1:PORT/web)."
            )
        return url

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        import httpx

        response = httpx.get(self._url() + "/search", params={"q": query}, timeout=timeout_for("web"))
        response.raise_for_status()
        return response.json()

    def extract(self, urls: list[str]) -> dict[str, Any]:
        return _http_post(self._url() + "/extract", {"urls": urls}, {})
