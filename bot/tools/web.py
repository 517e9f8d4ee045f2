"""Web tools: web_search over a SearxNG-compatible JSON endpoint, and fetch_webpage.

fetch_webpage only follows http(s) URLs whose host resolves to public addresses (loopback,
private, link-local and other reserved ranges are refused unless tools.fetch_allow_private),
checks every redirect hop the same way, stops reading at tools.fetch_max_bytes, and returns
readable text (scripts, styles and markup removed) capped at tools.fetch_max_chars.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field

from bot.tools.base import Tool, ToolContext, ToolOutput

GROUP = "web"
MAX_REDIRECTS = 5
NOT_CONFIGURED = "web search is not configured"

_SKIP = {"script", "style", "noscript", "svg", "template", "iframe", "head"}
_BLOCK = {
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header",
    "footer", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "main", "nav",
}  # fmt: skip


class WebSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=400, description="What to search for.")
    limit: int = Field(5, ge=1, le=10, description="How many results.")


class FetchWebpageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=2000, description="An http(s) URL.")


class FetchRefused(ValueError):
    """The URL is not one fetch_webpage may open; the message says why."""


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP:
            self._skip += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def readable_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page: visible text only, whitespace tidied."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r" *\n[ \n]*", "\n", text)
    return " ".join(parser.title.split()), text.strip()


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


async def check_url(url: str, allow_private: bool) -> str:
    """The URL if fetch_webpage may open it; raises FetchRefused saying why not."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchRefused(
            f"only http and https URLs can be fetched, not {parts.scheme or 'no scheme'!r}"
        )
    host = parts.hostname
    if not host:
        raise FetchRefused("the URL has no host")
    if allow_private:
        return url
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, parts.port or 80, type=socket.SOCK_STREAM
        )
    except socket.gaierror as exc:
        raise FetchRefused(f"the host {host!r} does not resolve ({exc.strerror})") from exc
    addresses = {str(info[4][0]) for info in infos}
    blocked = sorted(a for a in addresses if not _public(a))
    if blocked:
        raise FetchRefused(
            f"{host} resolves to a local or private address ({', '.join(blocked)}); "
            "fetching those is off (tools.fetch_allow_private)"
        )
    return url


async def fetch_webpage(args: FetchWebpageArgs, ctx: ToolContext) -> ToolOutput:
    cfg = ctx.settings.tools
    url = args.url.strip()
    try:
        async with httpx.AsyncClient(timeout=cfg.fetch_timeout_s, follow_redirects=False) as client:
            for _ in range(MAX_REDIRECTS + 1):
                await check_url(url, cfg.fetch_allow_private)
                async with client.stream("GET", url, headers={"User-Agent": "Annie/0.1"}) as resp:
                    if resp.is_redirect and "location" in resp.headers:
                        url = urljoin(url, resp.headers["location"])
                        continue
                    body = bytearray()
                    truncated = False
                    async for chunk in resp.aiter_bytes():
                        body += chunk
                        if len(body) >= cfg.fetch_max_bytes:
                            del body[cfg.fetch_max_bytes :]
                            truncated = True
                            break
                    status = resp.status_code
                    ctype = resp.headers.get("content-type", "").lower()
                    encoding = resp.encoding or "utf-8"
                break
            else:
                return ToolOutput(
                    f"error: more than {MAX_REDIRECTS} redirects from {args.url}", ok=False
                )
    except FetchRefused as exc:
        return ToolOutput(f"error: refused to fetch {url}: {exc}", ok=False)
    except httpx.HTTPError as exc:
        return ToolOutput(f"error: could not fetch {url}: {type(exc).__name__}: {exc}", ok=False)
    if status >= 400:
        return ToolOutput(f"error: {url} answered HTTP {status}", ok=False)
    if ctype and not any(t in ctype for t in ("text/", "json", "xml")):
        return ToolOutput(f"error: {url} is not a text page ({ctype})", ok=False)
    raw = bytes(body).decode(encoding, errors="replace")
    title, text = (
        readable_text(raw)
        if ("html" in ctype or "<html" in raw[:2000].lower())
        else ("", raw.strip())
    )
    cut = len(text) > cfg.fetch_max_chars
    text = text[: cfg.fetch_max_chars]
    note = " (cut to the first part)" if cut or truncated else ""
    head = f"{title}\n{url}{note}\n\n" if title else f"{url}{note}\n\n"
    return ToolOutput(head + text, data={"url": url, "title": title, "chars": len(text)})


async def web_search(args: WebSearchArgs, ctx: ToolContext) -> ToolOutput:
    endpoint = ctx.settings.tools.web_search_url.strip()
    if not endpoint:
        return ToolOutput(NOT_CONFIGURED, ok=False)
    params = {"q": args.query, "format": "json"}
    try:
        async with httpx.AsyncClient(timeout=ctx.settings.tools.fetch_timeout_s) as client:
            resp = await client.get(endpoint, params=params)
            resp.raise_for_status()
            data = resp.json()
    except (httpx.HTTPError, ValueError) as exc:
        return ToolOutput(f"error: web search failed: {type(exc).__name__}: {exc}", ok=False)
    results = data.get("results", []) if isinstance(data, dict) else []
    lines = []
    for n, r in enumerate(results[: args.limit], start=1):
        if not isinstance(r, dict):
            continue
        snippet = " ".join(str(r.get("content", "")).split())[:400]
        lines.append(f"{n}. {r.get('title', '').strip()}\n   {r.get('url', '')}\n   {snippet}")
    if not lines:
        return ToolOutput(f"No web results for {args.query!r}.", data={"results": []})
    return ToolOutput("\n".join(lines), data={"results": results[: args.limit]})


def web_tools() -> list[Tool]:
    return [
        Tool(
            "web_search",
            "Search the web; returns titles, URLs and snippets.",
            WebSearchArgs,
            web_search,
            GROUP,
        ),
        Tool(
            "fetch_webpage",
            "Read the text of a public web page (http or https).",
            FetchWebpageArgs,
            fetch_webpage,
            GROUP,
        ),
    ]
