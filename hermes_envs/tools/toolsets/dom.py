"""A deterministic DOM model: HTML parsed into elements, rendered as an accessibility snapshot with ``@eN`` refs.

This is the offline browser's page: no JavaScript runs (inline ``console.*("...")`` calls and ``throw`` statements
are read as console output), no pixels are drawn. Roles follow the accessibility tree a real browser reports for
the common elements (links, buttons, text boxes, check boxes, headings, images, list items).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Document", "Element", "parse_html"]

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_SKIP = {"script", "style", "noscript", "template", "head"}
_BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "li",
    "tr",
    "form",
    "table",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "aside",
    "figure",
    "body",
}
_TEXT_INPUTS = {"text", "search", "email", "password", "url", "tel", "number", ""}
#: Elements nest at most this deep; deeper tags are flattened into the element at this depth, so the tree walks
#: (text, snapshot, Markdown) never run out of Python's recursion limit on a hostile page.
MAX_DEPTH = 200
_CONSOLE = re.compile(r"console\.(log|info|warn|error|debug)\(\s*([\"'])(.*?)\2\s*\)")
_THROW = re.compile(r"throw\s+new\s+\w*Error\(\s*([\"'])(.*?)\1\s*\)")


@dataclass(eq=False)
class Element:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)
    parent: Element | None = field(default=None, repr=False)
    value: str = ""
    checked: bool = False

    def text(self) -> str:
        out: list[str] = []
        for child in self.children:
            if isinstance(child, str):
                out.append(child)
            elif child.tag not in _SKIP:
                out.append(child.text())
        return re.sub(r"\s+", " ", " ".join(out)).strip()

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def ancestor(self, tag: str) -> Element | None:
        node = self.parent
        while node is not None and node.tag != tag:
            node = node.parent
        return node

    @property
    def role(self) -> str | None:
        tag, kind = self.tag, self.attrs.get("type", "").lower()
        if "role" in self.attrs:
            return self.attrs["role"]
        if tag == "a" and "href" in self.attrs:
            return "link"
        if tag == "button" or (tag == "input" and kind in ("submit", "button", "reset")):
            return "button"
        if (tag == "input" and kind in _TEXT_INPUTS) or tag == "textarea":
            return "textbox"
        if tag == "input" and kind in ("checkbox", "radio"):
            return kind
        if tag == "select":
            return "combobox"
        if re.fullmatch(r"h[1-6]", tag):
            return "heading"
        if tag == "img":
            return "img"
        if tag == "li":
            return "listitem"
        return None

    def name(self) -> str:
        """The accessible name: aria-label, alt, a <label for>, placeholder, value, or the text inside."""
        for key in ("aria-label", "alt", "title"):
            if self.attrs.get(key):
                return self.attrs[key]
        if self.tag == "input" and self.attrs.get("type", "").lower() in ("submit", "button", "reset"):
            return self.attrs.get("value", "Submit")
        label = getattr(self, "_label", "")
        if label:
            return label
        if self.tag in ("input", "textarea", "select"):
            return self.attrs.get("placeholder") or self.attrs.get("name", "")
        return self.text()


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document")
        self.stack = [self.root]
        self.title = ""
        self.meta: dict[str, str] = {}
        self.canonical = ""
        self.scripts: list[str] = []
        self._in: list[str] = []
        self._over: list[str] = []  # tags opened past MAX_DEPTH (not nested further)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): (v if v is not None else "") for k, v in attrs}
        if tag == "meta" and values.get("name"):
            self.meta[values["name"].lower()] = values.get("content", "")
        if tag == "link" and values.get("rel", "").lower() == "canonical":
            self.canonical = values.get("href", "")
        if tag not in _VOID and len(self.stack) > MAX_DEPTH:
            self._over.append(tag)  # deeper than any real page: its content stays at this depth
            return
        node = Element(tag, values, parent=self.stack[-1])
        node.value = values.get("value", "") if tag in ("input", "textarea") else ""
        node.checked = "checked" in values
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)
            self._in.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        over = len(self._over)
        self.handle_starttag(tag, attrs)
        if len(self._over) > over:
            self._over.pop()
        elif tag not in _VOID and self.stack[-1].tag == tag:
            self.stack.pop()
            self._in.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if self._over and self._over[-1] == tag:
            self._over.pop()
            return
        for depth in range(len(self.stack) - 1, 0, -1):  # close up to the matching open tag (forgiving HTML)
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                del self._in[depth - 1 :]
                return

    def handle_data(self, data: str) -> None:
        current = self.stack[-1]
        if current.tag == "title":
            self.title += data.strip()
        elif current.tag == "script":
            self.scripts.append(data)
        if current.tag == "textarea":
            current.value += data
        current.children.append(data)


@dataclass
class Document:
    """A parsed page: its root element, title, <meta> names, canonical URL and inline scripts."""

    root: Element
    title: str
    meta: dict[str, str]
    canonical: str
    scripts: list[str]
    refs: dict[str, Element] = field(default_factory=dict)

    def body(self) -> Element:
        return next((e for e in self.root.iter() if e.tag == "body"), self.root)

    def console(self) -> tuple[list[dict], list[dict]]:
        """(console messages, uncaught errors) of the inline scripts, read without running them."""
        messages, errors = [], []
        for script in self.scripts:
            for kind, _q, text in _CONSOLE.findall(script):
                messages.append(
                    {"type": "log" if kind == "debug" else kind, "text": text, "source": "console"}
                )
            for _q, text in _THROW.findall(script):
                errors.append({"message": f"Uncaught Error: {text}", "source": "exception"})
        return messages, errors

    def images(self) -> list[dict]:
        return [
            {
                "src": e.attrs.get("src", ""),
                "alt": e.attrs.get("alt", ""),
                "width": int(e.attrs.get("width", "0") or 0) if e.attrs.get("width", "").isdigit() else 0,
                "height": int(e.attrs.get("height", "0") or 0) if e.attrs.get("height", "").isdigit() else 0,
            }
            for e in self.body().iter()
            if e.tag == "img" and e.attrs.get("src") and not e.attrs["src"].startswith("data:")
        ]

    def snapshot(self, full: bool = False) -> str:
        """The accessibility tree as text; interactive elements and headings get ``[ref=eN]`` (used as ``@eN``).

        Compact (default): headings, links, buttons, form fields, images. Full: also the text of every block.
        Refs are numbered in document order and renumbered on every snapshot of a new page.
        """
        labels = {
            e.attrs["for"]: e.text() for e in self.root.iter() if e.tag == "label" and e.attrs.get("for")
        }
        for e in self.root.iter():
            if e.attrs.get("id") in labels:
                e._label = labels[e.attrs["id"]]
        self.refs = {}
        lines: list[str] = []

        def walk(node: Element, depth: int) -> None:
            for child in node.children:
                if isinstance(child, str):
                    text = " ".join(child.split())
                    if full and text and node.role is None and node.tag not in _SKIP | {"title"}:
                        lines.append(f"{'  ' * depth}- text: {text}")
                    continue
                if child.tag in _SKIP or "hidden" in child.attrs:
                    continue
                role = child.role
                if role and role != "listitem" or (role == "listitem" and full):
                    ref = f"e{len(self.refs) + 1}"
                    self.refs[ref] = child
                    extra = ""
                    if role == "heading":
                        extra = f" [level={child.tag[1]}]"
                    elif role == "textbox" and child.value:
                        extra = f": {child.value}"
                    elif role in ("checkbox", "radio"):
                        extra = " [checked]" if child.checked else ""
                    elif role == "link" and full:
                        extra = f" -> {child.attrs.get('href', '')}"
                    lines.append(f'{"  " * depth}- {role} "{child.name()}" [ref={ref}]{extra}')
                    if role in ("link", "button", "heading", "textbox", "img", "combobox"):
                        continue  # their text is their name
                    walk(child, depth + 1)
                else:
                    walk(child, depth)

        walk(self.body(), 0)
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The page's text as Markdown (headings, paragraphs, list items, links as ``[text](href)``)."""
        out: list[str] = []

        def inline(node: Element) -> str:
            parts: list[str] = []
            for child in node.children:
                if isinstance(child, str):
                    parts.append(child)
                elif child.tag in _SKIP:
                    continue
                elif child.tag == "a" and child.attrs.get("href"):
                    parts.append(f" [{child.text()}]({child.attrs['href']}) ")
                elif child.tag == "img":
                    parts.append(f" ![{child.attrs.get('alt', '')}]({child.attrs.get('src', '')}) ")
                elif child.tag in ("input", "button", "select", "textarea", "label"):
                    parts.append(f" {child.name() if child.tag != 'label' else child.text()} ")
                else:
                    parts.append(inline(child))
            return re.sub(r"\s+", " ", "".join(parts)).strip()

        def block(node: Element) -> None:
            if node.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                out.append("#" * int(node.tag[1]) + " " + inline(node))
                return
            run = Element("#run")
            prefix = "- " if node.tag == "li" else ""

            def flush() -> None:
                text = inline(run)
                if text:
                    out.append(prefix + text)
                run.children = []

            for child in node.children:
                if isinstance(child, Element) and child.tag in _BLOCK:
                    flush()
                    block(child)
                elif not (isinstance(child, Element) and child.tag in _SKIP):
                    run.children.append(child)
            flush()

        block(self.body())
        return "\n\n".join(line for line in out if line.strip()) + "\n"


def parse_html(html: str) -> Document:
    """Parse ``html`` (forgiving: unclosed tags are closed at their parent's end)."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return Document(builder.root, builder.title, builder.meta, builder.canonical, builder.scripts)
