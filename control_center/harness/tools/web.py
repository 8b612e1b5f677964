"""`fetch_url`: research over HTTP(S), with a size cap and HTML turned into readable text."""

from __future__ import annotations

import re
import types
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput

TIMEOUT_S = 20.0
SIZE_CAP_BYTES = 1_000_000
_USER_AGENT = "ControlCenter-fetch_url/1"
_TEXTUAL = ("text/", "application/json", "application/xml", "application/xhtml", "+json", "+xml")

_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object"})
_BLOCK_TAGS = frozenset(
    {
        "p", "div", "br", "hr", "li", "ul", "ol", "tr", "table", "section", "article", "header",
        "footer", "nav", "main", "aside", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote",
        "dd", "dt", "dl", "form", "figure", "figcaption", "title",
    }
)  # fmt: skip


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip_depth = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP_TAGS:
            self._skip_depth += 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP_TAGS and self._skip_depth:
            self._skip_depth -= 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip_depth:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Readable text of an HTML page: scripts, styles and tags gone, whitespace tidied."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in "".join(parser.parts).split("\n")]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join(parser.title.split())
    return f"# {title}\n\n{body}" if title else body


def _check_url(url: Any) -> str:
    if not isinstance(url, str) or not url.strip():
        raise ToolError("missing required argument 'url' (a string)")
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise ToolError(f"only http and https URLs can be fetched, not {parts.scheme or 'no scheme'!r}")
    if not parts.netloc:
        raise ToolError(f"URL {url!r} has no host")
    return url.strip()


def fetch_url(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    url = _check_url(args.get("url"))
    body = bytearray()
    truncated = False
    headers = {"User-Agent": _USER_AGENT}
    try:
        with (
            _httpx().Client(timeout=TIMEOUT_S, follow_redirects=True, headers=headers) as client,
            client.stream("GET", url) as resp,
        ):
            for chunk in resp.iter_bytes():
                room = SIZE_CAP_BYTES - len(body)
                if len(chunk) > room:
                    body += chunk[:room]
                    truncated = True
                    break  # stop reading: the rest is never downloaded
                body += chunk
            status, final_url = resp.status_code, str(resp.url)
            content_type = resp.headers.get("content-type", "")
            charset = resp.charset_encoding or "utf-8"
    except _httpx().TimeoutException as exc:
        raise ToolError(f"fetching {url} timed out after {TIMEOUT_S:g} s") from exc
    except _httpx().HTTPError as exc:
        raise ToolError(f"fetching {url} failed: {exc}") from exc

    mime = content_type.split(";")[0].strip().lower()
    if mime and not any(mark in mime for mark in _TEXTUAL):
        text = f"[{mime} content, {len(body)} bytes; not text, not shown]"
    else:
        try:
            decoded = bytes(body).decode(charset, errors="replace")
        except LookupError:  # an unknown charset name in the header
            decoded = bytes(body).decode("utf-8", errors="replace")
        looks_html = mime in ("text/html", "application/xhtml+xml") or (
            not mime and decoded.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
        )
        text = html_to_text(decoded) if looks_html else decoded
    header = f"URL: {final_url}\nStatus: {status}\nContent-Type: {content_type or 'unknown'}\n\n"
    note = f"\n\n[truncated: stopped reading after {SIZE_CAP_BYTES} bytes]" if truncated else ""
    return ToolOutput(
        header + text + note,
        is_error=status >= 400,
        data={"status": status, "url": final_url, "truncated": truncated},
    )


def _httpx() -> types.ModuleType:
    """httpx loads on the first fetch, not when the harness starts (it is slow to import)."""
    import httpx

    return httpx
