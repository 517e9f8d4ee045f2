"""Web tools: web_search over a SearxNG-compatible JSON endpoint, and fetch_webpage.

fetch_webpage only follows http(s) URLs whose host resolves to public addresses (loopback,
private, link-local and other reserved ranges are refused unless tools.fetch_allow_private),
and connects to the very address it checked (`bot.tools.pinned_http`), so a name that
resolves differently a moment later changes nothing. Every redirect hop is resolved and
checked anew, proxy settings in the environment are ignored, reading stops at
tools.fetch_max_bytes, and the result is readable text (scripts, styles and markup removed)
capped at tools.fetch_max_chars.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

import httpx
from pydantic import BaseModel, ConfigDict, Field

from bot.tools.base import Tool, ToolContext, ToolOutput
from bot.tools.pinned_http import (
    Connector,
    FetchRefused,
    PinnedTransport,
    Resolver,
    checked_addresses,
    direct_connector,
    system_resolver,
)
from context.conversation import neutralize

GROUP = "web"
MAX_REDIRECTS = 5
NOT_CONFIGURED = "web search is not configured"
HEADERS = {"User-Agent": "Annie/0.1"}

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


def _form(url: str) -> httpx.URL:
    """`url` parsed as httpx will send it, if it is an http(s) URL with a host."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        # httpx refuses some spellings itself (0177.0.0.1: "Invalid IPv4 address").
        raise FetchRefused(f"the URL cannot be read: {exc}") from exc
    if parsed.scheme not in ("http", "https"):
        raise FetchRefused(
            f"only http and https URLs can be fetched, not {parsed.scheme or 'no scheme'!r}"
        )
    if not parsed.host:
        raise FetchRefused("the URL has no host")
    return parsed


async def check_url(url: str, allow_private: bool, resolver: Resolver = system_resolver) -> str:
    """The URL if fetch_webpage may open it; raises FetchRefused saying why not. The fetch
    itself checks again, at the connection (`PinnedTransport`): this answer is advisory."""
    parsed = _form(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    await checked_addresses(parsed.raw_host.decode("ascii"), port, allow_private, resolver)
    return url


class Fetcher:
    """fetch_webpage's handler. Where names resolve and how connections open are
    parameters, so tests can play a rebinding DNS server and public servers locally."""

    def __init__(
        self, resolver: Resolver = system_resolver, connector: Connector = direct_connector
    ) -> None:
        self.resolver = resolver
        self.connector = connector

    async def __call__(self, args: FetchWebpageArgs, ctx: ToolContext) -> ToolOutput:
        cfg = ctx.settings.tools
        url = args.url.strip()
        transport = PinnedTransport(
            allow_private=cfg.fetch_allow_private,
            resolver=self.resolver,
            connector=self.connector,
        )
        # Nothing from the environment shapes the request: a proxy would resolve the name
        # itself, so the check would be about an address nothing connects to. (A client
        # with its own transport mounts no environment proxies; trust_env=False keeps it so.)
        client = httpx.AsyncClient(
            transport=transport,
            timeout=cfg.fetch_timeout_s,
            follow_redirects=False,
            trust_env=False,
        )
        try:
            async with client:
                for _ in range(MAX_REDIRECTS + 1):
                    _form(url)
                    # Every hop is a new request, so the transport resolves and checks it anew.
                    async with client.stream("GET", url, headers=HEADERS) as resp:
                        if resp.is_redirect and "location" in resp.headers:
                            url = urljoin(url, resp.headers["location"])
                            continue
                        page = await _read(resp, cfg.fetch_max_bytes)
                    break
                else:
                    return ToolOutput(
                        f"error: more than {MAX_REDIRECTS} redirects from {args.url}", ok=False
                    )
        except FetchRefused as exc:
            return ToolOutput(f"error: refused to fetch {url}: {exc}", ok=False)
        except httpx.HTTPError as exc:
            return ToolOutput(
                f"error: could not fetch {url}: {type(exc).__name__}: {exc}", ok=False
            )
        return _page_output(url, page, cfg.fetch_max_chars)


@dataclass
class _Page:
    status: int
    ctype: str
    encoding: str
    body: bytes
    truncated: bool


async def _read(resp: httpx.Response, max_bytes: int) -> _Page:
    """The response's first `max_bytes` bytes; the rest is never read."""
    body = bytearray()
    truncated = False
    async for chunk in resp.aiter_bytes():
        body += chunk
        if len(body) >= max_bytes:
            del body[max_bytes:]
            truncated = True
            break
    ctype = resp.headers.get("content-type", "").lower()
    return _Page(resp.status_code, ctype, resp.encoding or "utf-8", bytes(body), truncated)


def _page_output(url: str, page: _Page, max_chars: int) -> ToolOutput:
    if page.status >= 400:
        return ToolOutput(f"error: {url} answered HTTP {page.status}", ok=False)
    ctype = page.ctype
    if ctype and not any(t in ctype for t in ("text/", "json", "xml")):
        return ToolOutput(f"error: {url} is not a text page ({ctype})", ok=False)
    raw = page.body.decode(page.encoding, errors="replace")
    title, text = (
        readable_text(raw)
        if ("html" in ctype or "<html" in raw[:2000].lower())
        else ("", raw.strip())
    )
    # A page is outside text on every path it takes (a tool result, the answer to an
    # approved fetch, the page, speech): control-token spellings never leave here live.
    title, text = neutralize(title), neutralize(text)
    cut = len(text) > max_chars
    text = text[:max_chars]
    note = " (cut to the first part)" if cut or page.truncated else ""
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
    return ToolOutput(neutralize("\n".join(lines)), data={"results": results[: args.limit]})


def web_tools(fetcher: Fetcher | None = None) -> list[Tool]:
    """The web group; `fetcher` replaces fetch_webpage's resolver and connections (tests)."""
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
            fetcher or Fetcher(),
            GROUP,
        ),
    ]
