"""The offline browser: one tab per task over the fake web corpus, driven through the DOM model (:mod:`.dom`).

Pages come from the corpus (HTML pages as written, Markdown pages rendered to HTML), plus a built-in search page at
``https://search.hermes.invalid/?q=...`` listing the corpus search results as links. Forms submit with GET (the
query string is built from the fields); a URL not in the corpus fails with a message saying how to add it.
"""

from __future__ import annotations

import html as html_lib
import re
import threading
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

from .corpus import Corpus, load_corpus, normalize_url
from .dom import Document, Element, parse_html

__all__ = ["DomBrowser", "DomSession", "SEARCH_URL", "markdown_to_html", "search_page_html"]

SEARCH_URL = "https://search.hermes.invalid/"


def markdown_to_html(title: str, markdown: str) -> str:
    """Enough Markdown for corpus pages: headings, paragraphs, ``- `` lists, ``[text](href)`` links, images."""

    def inline(text: str) -> str:
        text = html_lib.escape(text, quote=False)
        text = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", r'<img alt="\1" src="\2">', text)
        text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', text)
        return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)

    body: list[str] = []
    items: list[str] = []
    for block in re.split(r"\n\s*\n", markdown.strip()):
        for line in block.splitlines():
            stripped = line.strip()
            if stripped.startswith(("- ", "* ")):
                items.append(f"<li>{inline(stripped[2:])}</li>")
                continue
            if items:
                body.append("<ul>" + "".join(items) + "</ul>")
                items = []
            heading = re.match(r"(#{1,6})\s+(.*)", stripped)
            if heading:
                level = len(heading.group(1))
                body.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            elif stripped:
                body.append(f"<p>{inline(stripped)}</p>")
        if items:
            body.append("<ul>" + "".join(items) + "</ul>")
            items = []
    return f"<html><head><title>{html_lib.escape(title)}</title></head><body>{''.join(body)}</body></html>"


def search_page_html(corpus: Corpus, query: str) -> str:
    rows = corpus.search(query, 10) if query.strip() else []
    items = "".join(
        f'<li><a href="{html_lib.escape(r["url"])}">{html_lib.escape(r["title"])}</a> '
        f"<p>{html_lib.escape(r.get('description', ''))}</p></li>"
        for r in rows
    )
    return (
        f"<html><head><title>{html_lib.escape(query) + ' - ' if query else ''}Search</title></head><body>"
        f'<h1>Search</h1><form action="{SEARCH_URL}"><input type="search" name="q" aria-label="Search" '
        f'value="{html_lib.escape(query)}"><button type="submit">Search</button></form>'
        f"<ul>{items or ('<li>No results</li>' if query else '')}</ul></body></html>"
    )


class DomSession:
    """One tab: the current page, its history, the focused field and the scroll position."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.history: list[str] = []
        self.url = "about:blank"
        self.doc: Document = parse_html("<html><body></body></html>")
        self.focus: Element | None = None
        self.scroll_y = 0
        self._console_seen = (0, 0)
        self.lock = threading.Lock()

    # -------------------------------------------------------------- loading
    def _load(self, url: str) -> dict[str, Any]:
        absolute = url if urlsplit(url).scheme else "https://" + url
        if normalize_url(absolute).startswith(normalize_url(SEARCH_URL).rstrip("/")):
            query = parse_qs(urlsplit(absolute).query).get("q", [""])[0]
            html = search_page_html(self.corpus, query)
        else:
            page = self.corpus.get(absolute)
            if page is None:
                return {
                    "success": False,
                    "error": f"Navigation failed: {absolute} is not in the fake web corpus ({len(self.corpus.pages)} "
                    f"pages under {self.corpus.root}); add a .md or .html page with that url to serve it, or search "
                    f"with {SEARCH_URL}?q=...",
                }
            html = page.html or markdown_to_html(page.title, page.markdown)
            absolute = page.url
        self.url = absolute
        self.doc = parse_html(html)
        self.focus = None
        self.scroll_y = 0
        self._console_seen = (0, 0)
        return {"success": True, "url": self.url, "title": self.doc.title}

    def navigate(self, url: str) -> dict[str, Any]:
        previous = self.url
        result = self._load(url)
        if result["success"] and previous != "about:blank":
            self.history.append(previous)
        if result["success"]:
            snap = self.doc.snapshot()
            result.update(snapshot=snap, element_count=len(self.doc.refs))
        return result

    def _need_page(self) -> dict[str, Any] | None:
        if self.url == "about:blank":
            return {"success": False, "error": "No page is open. Call browser_navigate first."}
        return None

    def _element(self, ref: str) -> Element | dict[str, Any]:
        key = ref.lstrip("@")
        if not self.doc.refs:
            self.doc.snapshot()
        element = self.doc.refs.get(key)
        if element is None:
            return {
                "success": False,
                "error": f"Unknown ref {ref!r} on this page (refs are @e1..@e{len(self.doc.refs)}). "
                "Call browser_snapshot for the current refs.",
            }
        return element

    # -------------------------------------------------------------- actions
    def snapshot(self, full: bool = False) -> dict[str, Any]:
        missing = self._need_page()
        if missing:
            return missing
        text = self.doc.snapshot(full)
        return {"success": True, "snapshot": text, "element_count": len(self.doc.refs)}

    def click(self, ref: str) -> dict[str, Any]:
        missing = self._need_page()
        if missing:
            return missing
        element = self._element(ref)
        if isinstance(element, dict):
            return element
        ref = "@" + ref.lstrip("@")
        role = element.role
        if role == "link":
            outcome = self.navigate(urljoin(self.url, element.attrs.get("href", "")))
            return {"success": True, "clicked": ref} if outcome["success"] else outcome
        if role in ("checkbox", "radio"):
            element.checked = not element.checked if role == "checkbox" else True
        elif role == "textbox":
            self.focus = element
        elif role == "button" and element.attrs.get("type", "submit").lower() == "submit":
            form = element.ancestor("form")
            if form is not None:
                outcome = self._submit(form)
                if not outcome["success"]:
                    return outcome
        return {"success": True, "clicked": ref}

    def _submit(self, form: Element) -> dict[str, Any]:
        fields = []
        for e in form.iter():
            name = e.attrs.get("name")
            if not name:
                continue
            if e.role in ("checkbox", "radio") and not e.checked:
                continue
            if e.tag in ("input", "textarea", "select") and e.attrs.get("type", "").lower() not in (
                "submit",
                "button",
            ):
                fields.append(
                    (name, e.value or e.attrs.get("value", "") if e.role not in ("checkbox",) else "on")
                )
        action = urljoin(self.url, form.attrs.get("action", "") or self.url)
        target = action.split("?", 1)[0] + ("?" + urlencode(fields) if fields else "")
        return self.navigate(target)

    def type(self, ref: str, text: str) -> dict[str, Any]:
        missing = self._need_page()
        if missing:
            return missing
        element = self._element(ref)
        if isinstance(element, dict):
            return element
        if element.role not in ("textbox", "combobox"):
            return {
                "success": False,
                "error": f"Failed to type into @{ref.lstrip('@')}: it is a {element.role}, not a text field.",
            }
        element.value = text
        self.focus = element
        return {"success": True, "typed": text, "element": "@" + ref.lstrip("@")}

    def scroll(self, direction: str) -> dict[str, Any]:
        missing = self._need_page()
        if missing:
            return missing
        if direction not in ("up", "down"):
            return {"success": False, "error": f"Invalid direction '{direction}'. Use 'up' or 'down'."}
        self.scroll_y = max(self.scroll_y + (500 if direction == "down" else -500), 0)
        return {"success": True, "scrolled": direction}

    def back(self) -> dict[str, Any]:
        if not self.history:
            return {"success": False, "error": "Failed to go back: no previous page in this tab's history."}
        previous = self.history.pop()
        result = self._load(previous)
        return {"success": True, "url": self.url} if result["success"] else result

    def press(self, key: str) -> dict[str, Any]:
        missing = self._need_page()
        if missing:
            return missing
        if key == "Enter" and self.focus is not None:
            form = self.focus.ancestor("form")
            if form is not None:
                outcome = self._submit(form)
                if not outcome["success"]:
                    return outcome
        elif key == "Tab":
            fields = [
                e for e in self.doc.refs.values() if e.role in ("textbox", "button", "link", "checkbox")
            ]
            if fields:
                index = fields.index(self.focus) + 1 if self.focus in fields else 0
                self.focus = fields[index % len(fields)]
        return {"success": True, "pressed": key}

    def images(self) -> dict[str, Any]:
        missing = self._need_page()
        if missing:
            return missing
        images = [dict(img, src=urljoin(self.url, img["src"])) for img in self.doc.images()]
        return {"success": True, "images": images, "count": len(images)}

    def console(self, clear: bool = False, expression: str | None = None) -> dict[str, Any]:
        if expression is not None:
            return self._evaluate(expression)
        messages, errors = self.doc.console()
        seen_messages, seen_errors = self._console_seen
        messages, errors = messages[seen_messages:], errors[seen_errors:]
        if clear:
            self._console_seen = (seen_messages + len(messages), seen_errors + len(errors))
        return {
            "success": True,
            "console_messages": messages,
            "js_errors": errors,
            "total_messages": len(messages),
            "total_errors": len(errors),
        }

    def _evaluate(self, expression: str) -> dict[str, Any]:
        expr = expression.strip().rstrip(";")
        value: Any
        if expr == "document.title":
            value = self.doc.title
        elif expr in ("location.href", "window.location.href", "document.URL"):
            value = self.url
        elif expr in ("document.body.innerText", "document.body.textContent"):
            value = self.doc.body().text()
        else:
            match = re.fullmatch(
                r"document\.querySelectorAll\(\s*([\"'])([a-zA-Z][\w-]*)\1\s*\)\.length", expr
            )
            if not match:
                return {
                    "success": False,
                    "error": "JavaScript evaluation is not supported by this browser backend (the offline DOM model "
                    "answers document.title, location.href, document.body.innerText and "
                    "document.querySelectorAll('tag').length).",
                }
            value = sum(1 for e in self.doc.root.iter() if e.tag == match.group(2).lower())
        return {"success": True, "result": value, "result_type": type(value).__name__}

    def page_text(self) -> str:
        """What the page shows, for browser_vision (no pixels here: the full snapshot stands in for a screenshot)."""
        return f"URL: {self.url}\nTitle: {self.doc.title}\n\n{self.doc.snapshot(full=True)}"


class DomBrowser:
    """The offline browser backend: a :class:`DomSession` per task over ``corpus`` (default: the web corpus)."""

    name = "dom"

    def __init__(self, corpus: str | Corpus | None = None) -> None:
        self._corpus = corpus

    def session(self, task_id: str) -> DomSession:
        corpus = self._corpus if isinstance(self._corpus, Corpus) else load_corpus(self._corpus)
        return DomSession(corpus)
