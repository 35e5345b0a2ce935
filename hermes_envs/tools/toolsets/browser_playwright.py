"""The real browser backend: headless Chromium through Playwright (imported here only, on first use).

Each task gets its own browser context and page, driven from one thread per tab (Playwright's sync API must stay on
the thread that started it). Refs (``@eN``) are written into the page as ``data-hermes-ref`` attributes by the
snapshot script, using the same roles as the offline DOM model, so scripts and tests read the same snapshot format
from both. With ``HERMES_BROWSER_CORPUS=1`` every request is answered from the fake web corpus (nothing leaves the
machine): the corpus pages tested in a real browser. Not exercised by this repository's tests (no Chromium in CI);
the offline DOM model is.
"""

from __future__ import annotations

import base64
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ._limits import ToolBackendError, timeout_for

__all__ = ["PlaywrightBrowser", "PlaywrightSession"]

SNAPSHOT_JS = r"""
(full) => {
  const lines = []; let n = 0;
  document.querySelectorAll('[data-hermes-ref]').forEach(e => e.removeAttribute('data-hermes-ref'));
  const textInputs = ['text', 'search', 'email', 'password', 'url', 'tel', 'number', ''];
  const roleOf = (e) => {
    const t = e.tagName.toLowerCase(), k = (e.getAttribute('type') || '').toLowerCase();
    if (e.getAttribute('role')) return e.getAttribute('role');
    if (t === 'a' && e.hasAttribute('href')) return 'link';
    if (t === 'button' || (t === 'input' && ['submit', 'button', 'reset'].includes(k))) return 'button';
    if ((t === 'input' && textInputs.includes(k)) || t === 'textarea') return 'textbox';
    if (t === 'input' && (k === 'checkbox' || k === 'radio')) return k;
    if (t === 'select') return 'combobox';
    if (/^h[1-6]$/.test(t)) return 'heading';
    if (t === 'img') return 'img';
    if (t === 'li') return 'listitem';
    return null;
  };
  const nameOf = (e) => {
    for (const a of ['aria-label', 'alt', 'title']) if (e.getAttribute(a)) return e.getAttribute(a);
    if (e.labels && e.labels.length) return e.labels[0].innerText.trim();
    if (['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName))
      return e.type === 'submit' ? (e.value || 'Submit') : (e.getAttribute('placeholder') || e.name || '');
    return (e.innerText || '').replace(/\s+/g, ' ').trim();
  };
  const walk = (node, depth) => {
    for (const c of node.childNodes) {
      if (c.nodeType === 3) {
        const text = c.textContent.replace(/\s+/g, ' ').trim();
        if (full && text && !roleOf(node)) lines.push('  '.repeat(depth) + '- text: ' + text);
        continue;
      }
      if (c.nodeType !== 1 || ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(c.tagName) || c.hidden) continue;
      const role = roleOf(c);
      if (role && (role !== 'listitem' || full)) {
        const ref = 'e' + (++n);
        c.setAttribute('data-hermes-ref', ref);
        let extra = '';
        if (role === 'heading') extra = ' [level=' + c.tagName[1] + ']';
        else if (role === 'textbox' && c.value) extra = ': ' + c.value;
        else if ((role === 'checkbox' || role === 'radio') && c.checked) extra = ' [checked]';
        else if (role === 'link' && full) extra = ' -> ' + c.getAttribute('href');
        lines.push('  '.repeat(depth) + '- ' + role + ' "' + nameOf(c) + '" [ref=' + ref + ']' + extra);
        if (!['link', 'button', 'heading', 'textbox', 'img', 'combobox'].includes(role)) walk(c, depth + 1);
      } else walk(c, depth);
    }
  };
  walk(document.body || document.documentElement, 0);
  return {snapshot: lines.join('\n'), count: n};
}
"""
IMAGES_JS = """() => [...document.images].map(i => ({src: i.src, alt: i.alt || '', width: i.naturalWidth,
height: i.naturalHeight})).filter(i => i.src && !i.src.startsWith('data:'))"""


class PlaywrightSession:
    """One tab in its own thread; every method runs there and returns upstream's result dict."""

    def __init__(self, corpus: bool) -> None:
        self.url = "about:blank"
        self._calls: queue.Queue[tuple[Callable[[], Any], Future] | None] = queue.Queue()
        self._messages: list[dict] = []
        self._errors: list[dict] = []
        started: Future = Future()
        self._thread = threading.Thread(
            target=self._run, args=(corpus, started), daemon=True, name="hermes-browser"
        )
        self._thread.start()
        started.result(timeout=timeout_for("browser"))

    def _run(self, corpus: bool, started: Future) -> None:
        try:
            from playwright.sync_api import sync_playwright

            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.launch(headless=True)
            context = self._browser.new_context()
            if corpus:
                context.route("**/*", self._from_corpus)
            self.page = context.new_page()
            self.page.on(
                "console",
                lambda m: self._messages.append({"type": m.type, "text": m.text, "source": "console"}),
            )
            self.page.on(
                "pageerror", lambda e: self._errors.append({"message": str(e), "source": "exception"})
            )
        except Exception as exc:
            started.set_exception(
                ToolBackendError(
                    f"the playwright browser backend should start headless Chromium; got {type(exc).__name__}: {exc}. "
                    "Fix: run `playwright install chromium`, or export HERMES_BROWSER_BACKEND=fake."
                )
            )
            return
        started.set_result(True)
        while (item := self._calls.get()) is not None:
            fn, future = item
            try:
                future.set_result(fn())
            except Exception as exc:  # the model sees the failure as a result, as upstream's tools report it
                future.set_result({"success": False, "error": f"{type(exc).__name__}: {exc}"})
        self._browser.close()
        self._pw.stop()

    @staticmethod
    def _from_corpus(route: Any) -> None:
        from urllib.parse import parse_qs, urlsplit

        from .browser_dom import SEARCH_URL, markdown_to_html, search_page_html
        from .corpus import load_corpus

        corpus, url = load_corpus(), route.request.url
        if url.startswith(SEARCH_URL):
            body = search_page_html(corpus, parse_qs(urlsplit(url).query).get("q", [""])[0])
            return route.fulfill(status=200, content_type="text/html", body=body)
        page = corpus.get(url)
        if page is None:
            return route.fulfill(
                status=404, content_type="text/html", body="<h1>Not in the fake web corpus</h1>"
            )
        return route.fulfill(
            status=200,
            content_type="text/html",
            body=page.html or markdown_to_html(page.title, page.markdown),
        )

    def _do(self, fn: Callable[[], Any]) -> Any:
        future: Future = Future()
        self._calls.put((fn, future))
        return future.result(timeout=timeout_for("browser"))

    def _ref(self, ref: str) -> str:
        return f'[data-hermes-ref="{ref.lstrip("@")}"]'

    def _snap(self, full: bool) -> dict[str, Any]:
        return self.page.evaluate(SNAPSHOT_JS, full)

    def navigate(self, url: str) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            self.page.goto(url, wait_until="domcontentloaded", timeout=timeout_for("browser") * 1000)
            self.url = self.page.url
            snap = self._snap(False)
            return {"success": True, "url": self.url, "title": self.page.title(), "snapshot": snap["snapshot"],
                    "element_count": snap["count"]}  # fmt: skip

        return self._do(go)

    def snapshot(self, full: bool = False) -> dict[str, Any]:
        def snap() -> dict[str, Any]:
            found = self._snap(full)
            return {"success": True, "snapshot": found["snapshot"], "element_count": found["count"]}

        return self._do(snap)

    def click(self, ref: str) -> dict[str, Any]:
        return self._do(
            lambda: (self.page.click(self._ref(ref)), {"success": True, "clicked": "@" + ref.lstrip("@")})[1]
        )

    def type(self, ref: str, text: str) -> dict[str, Any]:
        return self._do(
            lambda: (
                self.page.fill(self._ref(ref), text),
                {"success": True, "typed": text, "element": "@" + ref.lstrip("@")},
            )[1]
        )

    def scroll(self, direction: str) -> dict[str, Any]:
        if direction not in ("up", "down"):
            return {"success": False, "error": f"Invalid direction '{direction}'. Use 'up' or 'down'."}
        return self._do(
            lambda: (
                self.page.mouse.wheel(0, 500 if direction == "down" else -500),
                {"success": True, "scrolled": direction},
            )[1]
        )

    def back(self) -> dict[str, Any]:
        def back() -> dict[str, Any]:
            self.page.go_back()
            self.url = self.page.url
            return {"success": True, "url": self.url}

        return self._do(back)

    def press(self, key: str) -> dict[str, Any]:
        return self._do(lambda: (self.page.keyboard.press(key), {"success": True, "pressed": key})[1])

    def images(self) -> dict[str, Any]:
        def images() -> dict[str, Any]:
            found = self.page.evaluate(IMAGES_JS)
            return {"success": True, "images": found, "count": len(found)}

        return self._do(images)

    def console(self, clear: bool = False, expression: str | None = None) -> dict[str, Any]:
        if expression is not None:

            def evaluate() -> dict[str, Any]:
                value = self.page.evaluate(expression)
                return {"success": True, "result": value, "result_type": type(value).__name__}

            return self._do(evaluate)
        messages, errors = list(self._messages), list(self._errors)
        if clear:
            self._messages.clear()
            self._errors.clear()
        return {"success": True, "console_messages": messages, "js_errors": errors,
                "total_messages": len(messages), "total_errors": len(errors)}  # fmt: skip

    def screenshot_data_url(self) -> str:
        data = self._do(lambda: self.page.screenshot(full_page=True))
        return "data:image/png;base64," + base64.b64encode(data).decode("ascii")

    def page_text(self) -> str:
        return self.snapshot(True).get("snapshot", "")

    def close(self) -> None:
        self._calls.put(None)
        self._thread.join(10)


class PlaywrightBrowser:
    """Opens a :class:`PlaywrightSession` per task (``HERMES_BROWSER_CORPUS=1``: pages from the fake corpus)."""

    name = "playwright"

    def __init__(self, corpus: bool | None = None) -> None:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            raise ToolBackendError(
                "the playwright browser backend should have the 'playwright' package; got ImportError. Fix: pip "
                "install playwright && playwright install chromium, or export HERMES_BROWSER_BACKEND=fake."
            ) from None
        self.corpus = os.environ.get("HERMES_BROWSER_CORPUS") == "1" if corpus is None else corpus

    def session(self, task_id: str) -> PlaywrightSession:
        return PlaywrightSession(self.corpus)
