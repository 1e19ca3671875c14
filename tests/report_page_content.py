"""What a report page shows, whoever made it (``goldenkit report``'s notebook export or the site's page):
its headings, its tables, its figures and its text, so two pages can be compared for what a reader sees."""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

_MAIN = re.compile(r"(?s)<main[^>]*>(.*)</main>")
_HEADING = re.compile(r"(?s)<h([1-6])\b[^>]*>(.*?)</h\1>")
_TABLE = re.compile(r"(?s)<table\b.*?</table>")
_BANNER = re.compile(r'class="gk-banner gk-banner-(\w+)"[^>]*>([^<]*)')
_FIGURE = re.compile(r'(?s)<img\b[^>]*\bsrc="(data:image/[^"]+)"|<figure class="gk-figure">(<svg\b.*?</svg>)</figure>')
_SVG_URI = "data:image/svg+xml;base64,"


class _Canonical(HTMLParser):
    """A piece of HTML as a list of tokens (tags with their attributes sorted, text unescaped): the same for two
    serializations of one tree (``<br>`` or ``<br/>``, attributes in any order, ``'`` or ``&#x27;``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[tuple[str, ...]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tokens.append(("<", tag, *sorted(f"{k}={v}" for k, v in attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.tokens.append(("/", tag))

    def handle_data(self, data: str) -> None:
        if self.tokens and self.tokens[-1][0] == "text":
            self.tokens[-1] = ("text", self.tokens[-1][1] + data)
        else:
            self.tokens.append(("text", data))


def _canonical(markup: str) -> tuple[tuple[str, ...], ...]:
    parser = _Canonical()
    parser.feed(markup)
    parser.close()
    return tuple(parser.tokens)


def _figure(uri: str, svg: str) -> str:
    """A figure as what it draws: an SVG image's document or an inline SVG as tokens, another image its URI."""
    if uri.startswith(_SVG_URI):
        svg = base64.b64decode(uri.removeprefix(_SVG_URI)).decode("utf-8")
    return str(_canonical(svg)) if svg else uri


def _text(markup: str) -> str:
    """The visible text, a figure's drawn labels left out (an image's are not text, an inline SVG's are)."""
    body = re.sub(r"(?is)<(script|style|svg)\b.*?</\1\s*>", " ", markup)
    text = html.unescape(re.sub(r"(?s)<[^>]*>", " ", body)).replace("¶", " ")
    return " ".join(text.split())


@dataclass(frozen=True)
class PageContent:
    """The page's headings (level, text), banners (tone, text), tables (their tags, attributes and text, however
    serialized), figures (an image's data: URI; an SVG figure's document, inline or an image's) and visible text."""

    headings: list[tuple[int, str]]
    banners: list[tuple[str, str]]
    tables: list[tuple[tuple[str, ...], ...]]
    figures: list[str]
    text: str


def page_content(page: str) -> PageContent:
    """The content of ``page``'s ``<main>`` (the whole page when it has none)."""
    found = _MAIN.search(page)
    main = found.group(1) if found else page
    headings = [(int(level), _text(inner)) for level, inner in _HEADING.findall(main)]
    banners = [(tone, html.unescape(text)) for tone, text in _BANNER.findall(main)]
    return PageContent(
        headings,
        banners,
        [_canonical(t) for t in _TABLE.findall(main)],
        [_figure(uri, svg) for uri, svg in _FIGURE.findall(main)],
        _text(main),
    )
