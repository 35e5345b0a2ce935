"""The fake web corpus over HTTP on 127.0.0.1, for runs by hand (``hermes-envs fake-server --web-corpus DIR``)
and for env processes that should share one corpus server.

Routes: ``GET /web/search?q=...`` (web_search's result), ``POST /web/extract`` with ``{"urls": [...]}``
(web_extract's result), ``GET /web/page?url=...`` (the page's HTML, what a browser would load), ``GET /web/`` (an
index of the pages). An env process uses it with ``HERMES_WEB_BACKEND=corpus-server`` and
``HERMES_WEB_CORPUS_URL=http://127.0.0.1:PORT/web``.
"""

from __future__ import annotations

import html
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from .browser_dom import markdown_to_html
from .corpus import DEFAULT_CORPUS, load_corpus
from .web import EXTRACT_LIMIT, SEARCH_LIMIT, FakeWebBackend

__all__ = ["CorpusServer", "serve_web_corpus"]


class _Handler(BaseHTTPRequestHandler):
    server: CorpusServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the fake server logs its own requests
        pass

    def _send(self, status: int, body: str, kind: str = "application/json") -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        backend = self.server.backend
        if parts.path == "/web/search":
            self._send(200, json.dumps(backend.search(query.get("q", [""])[0], SEARCH_LIMIT)))
        elif parts.path == "/web/page":
            page = backend.corpus.get(query.get("url", [""])[0])
            if page is None:
                self._send(404, "<html><body><h1>Not in the corpus</h1></body></html>", "text/html")
            else:
                self._send(200, page.html or markdown_to_html(page.title, page.markdown), "text/html")
        elif parts.path in ("/web", "/web/"):
            rows = "".join(
                f'<li><a href="/web/page?url={quote(p.url, safe="")}">{html.escape(p.title)}</a> {html.escape(p.url)}</li>'
                for p in backend.corpus.pages.values()
            )
            self._send(200, f"<html><body><h1>Fake web corpus</h1><ul>{rows}</ul></body></html>", "text/html")
        else:
            self._send(404, json.dumps({"error": f"no route {parts.path}; try /web/"}))

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/web/extract":
            self._send(404, json.dumps({"error": "POST only /web/extract"}))
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            urls = json.loads(self.rfile.read(length) or b"{}").get("urls") or []
        except ValueError:
            self._send(400, json.dumps({"error": 'the body should be {"urls": [...]}'}))
            return
        self._send(200, json.dumps(self.server.backend.extract([str(u) for u in urls][:EXTRACT_LIMIT])))


class CorpusServer(ThreadingHTTPServer):
    """A corpus served on ``host:port`` (0: a free port) in a daemon thread; ``url`` ends in ``/web``."""

    daemon_threads = True

    def __init__(self, root: str | Path | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        load_corpus(root)  # a bad folder fails now, with the corpus's own message
        self.backend = FakeWebBackend(root)
        self.root = Path(root) if root else DEFAULT_CORPUS
        super().__init__((host, port), _Handler)
        self._thread = threading.Thread(target=self.serve_forever, daemon=True, name="hermes-web-corpus")

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/web"  # type: ignore[str-bytes-safe]  # an AF_INET host is a str

    def start(self) -> CorpusServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def __enter__(self) -> CorpusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_web_corpus(root: str | None, host: str = "127.0.0.1") -> CorpusServer:
    """Start serving ``root`` (None or "": the shipped corpus) and say on stderr how an env process uses it."""
    server = CorpusServer(root or None, host=host).start()
    folder = server.root.resolve()
    print(
        f"fake web corpus ({len(server.backend.corpus.pages)} pages) at {server.url}\n"
        f"  for env processes: export HERMES_TOOL_BACKENDS=fake HERMES_WEB_CORPUS={folder}\n"
        f"  or, through this server: export HERMES_WEB_BACKEND=corpus-server HERMES_WEB_CORPUS_URL={server.url}",
        file=sys.stderr,
        flush=True,
    )
    return server
