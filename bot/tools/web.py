"""Web tools: web_search and fetch_webpage, the two ways Annie reads the web.

web_search asks a search backend (`SearchBackend`): by default ddgs, a metasearch library
that needs no key and no server of one's own; or a SearxNG instance's JSON API when
tools.web_search_url names one (tools.search_backend chooses explicitly).

fetch_webpage only follows http(s) URLs whose host resolves to public addresses (loopback,
private, link-local and other reserved ranges are refused unless tools.fetch_allow_private),
and connects to the very address it checked (`bot.tools.pinned_http`), so a name that
resolves differently a moment later changes nothing. Every redirect hop is resolved and
checked anew, proxy settings in the environment are ignored, and reading stops at
tools.fetch_max_bytes. An HTML page becomes its main text (trafilatura: the article, not
the menus, sidebars and footers around it), capped at tools.fetch_max_chars.

Both results are outside text: control-token spellings in them are neutralized here.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urljoin

import httpx
from pydantic import BaseModel, ConfigDict, Field

from bot.tools.base import Tool, ToolEnv, ToolOutput
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
from context.egress import egress_for, refused
from context.wording import quoted

if TYPE_CHECKING:
    from config.settings import ToolSettings

GROUP = "web"
MAX_REDIRECTS = 5
SNIPPET_CHARS = 400
NOT_CONFIGURED = (
    'web search is not configured: tools.search_backend is "searxng" '
    "and tools.web_search_url is empty"
)
HEADERS = {"User-Agent": "Annie/0.1"}
# What ddgs raises when every engine answered and none had a result (not a failure).
_DDGS_NOTHING = "No results found."


class WebSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=400, description="What to search for.")
    limit: int = Field(5, ge=1, le=10, description="How many results.")

    def approval_target(self, store: object) -> str:
        """What the user is asked to approve: the query, as it would be sent."""
        return f"search the web for {quoted(self.query)}"


class FetchWebpageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=2000, description="An http(s) URL.")

    def approval_target(self, store: object) -> str:
        """What the user is asked to approve: the site, by name (a whole URL is no sentence
        to hear; the page shows it in full). ValueError for a URL with no site in it."""
        try:
            host = httpx.URL(self.url.strip()).host
        except httpx.InvalidURL as exc:
            raise ValueError(f"the URL cannot be read: {exc}") from exc
        if not host:
            raise ValueError("the URL has no site in it")
        return f"open a page on {host.removeprefix('www.')}"


# --- search -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchFailed(RuntimeError):
    """The backend could not answer; the message says why."""


class SearchBackend(Protocol):
    name: str

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        """At most `limit` results, best first; raises SearchFailed."""
        ...


class DdgsBackend:
    """ddgs's text search over the engines named in `engines` (ddgs's names, comma
    separated, or "auto"). `proxy` and `verify` go to ddgs as they are: a proxy URL, and
    True, False or a CA bundle's path."""

    name = "ddgs"

    def __init__(
        self,
        engines: str = "auto",
        timeout_s: float = 10.0,
        *,
        proxy: str | None = None,
        verify: bool | str = True,
    ) -> None:
        self.engines = engines
        self.timeout_s = timeout_s
        self.proxy = proxy
        self.verify = verify

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        # ddgs is synchronous (a thread pool over blocking HTTP): keep it off the loop.
        return await asyncio.to_thread(self._search, query, limit)

    def _search(self, query: str, limit: int) -> list[SearchHit]:
        # Imported here: ddgs loads every engine module on import, which only a search needs.
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException

        timeout = max(1, math.ceil(self.timeout_s))  # ddgs takes whole seconds
        client = DDGS(proxy=self.proxy, timeout=timeout, verify=self.verify)
        try:
            found = client.text(query, max_results=limit, backend=self.engines)
        except DDGSException as exc:
            if str(exc) == _DDGS_NOTHING:
                return []
            raise SearchFailed(f"{type(exc).__name__}: {exc}") from exc
        return [
            SearchHit(str(r.get("title", "")), str(r.get("href", "")), str(r.get("body", "")))
            for r in found[:limit]
        ]


class SearxngBackend:
    """A SearxNG instance's JSON API (`format=json` must be enabled in its settings)."""

    name = "searxng"

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self.url = url
        self.timeout_s = timeout_s

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        params = {"q": query, "format": "json"}
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                resp = await client.get(self.url, params=params)
                resp.raise_for_status()
                data = resp.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise SearchFailed(f"{type(exc).__name__}: {exc}") from exc
        results = data.get("results", []) if isinstance(data, dict) else []
        hits = [
            SearchHit(str(r.get("title", "")), str(r.get("url", "")), str(r.get("content", "")))
            for r in results
            if isinstance(r, dict)
        ]
        return hits[:limit]


def configured_backend(
    cfg: ToolSettings, *, proxy: str | None = None, verify: bool | str = True
) -> SearchBackend | None:
    """The backend the settings choose, None when they choose SearxNG without a URL.
    "auto" is SearxNG when tools.web_search_url is set, else ddgs. `proxy` and `verify`
    reach ddgs only."""
    url = cfg.web_search_url.strip()
    kind = cfg.search_backend
    if kind == "auto":
        kind = "searxng" if url else "ddgs"
    if kind == "searxng":
        return SearxngBackend(url, cfg.fetch_timeout_s) if url else None
    return DdgsBackend(cfg.search_engines, cfg.fetch_timeout_s, proxy=proxy, verify=verify)


class Searcher:
    """web_search's handler. Which backend answers is a parameter (settings -> backend),
    so tests can hand ddgs a proxy that plays a search engine locally."""

    def __init__(
        self, backend: Callable[[ToolSettings], SearchBackend | None] = configured_backend
    ) -> None:
        self.backend = backend

    async def __call__(self, args: WebSearchArgs, ctx: ToolEnv) -> ToolOutput:
        backend = self.backend(ctx.settings.tools)
        if backend is None:
            return ToolOutput(NOT_CONFIGURED, ok=False)
        held = held_back(args.query, "search the web for that", ctx)
        if held is not None:
            return held
        try:
            hits = await backend.search(args.query, args.limit)
        except SearchFailed as exc:
            return ToolOutput(f"error: web search failed: {exc}", ok=False)
        if not hits:
            return ToolOutput(f"No web results for {args.query!r}.", data={"results": []})
        hits = [
            SearchHit(
                neutralize(" ".join(h.title.split())),
                neutralize(h.url.strip()),
                neutralize(" ".join(h.snippet.split())[:SNIPPET_CHARS]),
            )
            for h in hits[: args.limit]
        ]
        lines = [f"{n}. {h.title}\n   {h.url}\n   {h.snippet}" for n, h in enumerate(hits, 1)]
        return ToolOutput(
            "\n".join(lines),
            data={"results": [asdict(h) for h in hits], "backend": backend.name},
        )


# The user asking for the web in so many words: the web group is loaded before the model's
# first call, so the search is one call, not a load_tool_group round first.
_ASKS_FOR_THE_WEB = re.compile(
    r"^(?:(?:ok(?:ay)?|so|hey|please|annie)[,\s]+)*(?:(?:can|could|would) you\s+)?(?:please\s+)?"
    r"(?:(?:search|look|check)\b.*\b(?:the web|the internet|online)\b"
    r"|(?:google|web search|search the web|search online|look (?:it )?up online)\b)",
    re.IGNORECASE,
)


def asks_for_the_web(text: str) -> bool:
    """Whether the user asks in so many words for a web search ("search the web for …",
    "look up … online", "google …")."""
    return _ASKS_FOR_THE_WEB.search(" ".join(text.split())) is not None


def held_back(request: str, what: str, ctx: ToolEnv) -> ToolOutput | None:
    """The egress check's refusal of `request` as the tool's output, or None to send it."""
    leak = egress_for(ctx.store).check(request, session_id=ctx.session_id, turn_id=ctx.turn_id)
    if leak is None:
        return None
    said = refused(what)
    return ToolOutput(
        f"error: not sent: {leak.reason}. Nothing left this machine; do not try again with "
        "other words.",
        ok=False,
        data={"refused": said},
    )


# --- fetch --------------------------------------------------------------------------------


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


class TooManyRedirects(RuntimeError):
    """More than MAX_REDIRECTS hops."""


async def fetch_pinned(
    url: str,
    *,
    allow_private: bool,
    timeout_s: float,
    max_bytes: int,
    resolver: Resolver = system_resolver,
    connector: Connector = direct_connector,
    hops: list[str] | None = None,
) -> tuple[str, _Page]:
    """GET `url` through the pinned transport, following up to MAX_REDIRECTS redirects (each
    hop resolved and checked anew), reading at most `max_bytes`: the URL it ended at and the
    page. Raises FetchRefused, TooManyRedirects or httpx.HTTPError; `hops` gets each URL as it
    is requested, so an error can name the one that failed."""
    transport = PinnedTransport(allow_private=allow_private, resolver=resolver, connector=connector)
    # Nothing from the environment shapes the request: a proxy would resolve the name itself,
    # so the check would be about an address nothing connects to. (A client with its own
    # transport mounts no environment proxies; trust_env=False keeps it so.)
    client = httpx.AsyncClient(
        transport=transport, timeout=timeout_s, follow_redirects=False, trust_env=False
    )
    async with client:
        for _ in range(MAX_REDIRECTS + 1):
            if hops is not None:
                hops.append(url)
            _form(url)
            async with client.stream("GET", url, headers=HEADERS) as resp:
                if resp.is_redirect and "location" in resp.headers:
                    url = urljoin(url, resp.headers["location"])
                    continue
                return url, await _read(resp, max_bytes)
    raise TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")


class Fetcher:
    """fetch_webpage's handler. Where names resolve and how connections open are
    parameters, so tests can play a rebinding DNS server and public servers locally."""

    def __init__(
        self, resolver: Resolver = system_resolver, connector: Connector = direct_connector
    ) -> None:
        self.resolver = resolver
        self.connector = connector

    async def __call__(self, args: FetchWebpageArgs, ctx: ToolEnv) -> ToolOutput:
        cfg = ctx.settings.tools
        url = args.url.strip()
        held = held_back(url, "open that page", ctx)
        if held is not None:
            return held
        hops = [url]
        try:
            url, page = await fetch_pinned(
                url,
                allow_private=cfg.fetch_allow_private,
                timeout_s=cfg.fetch_timeout_s,
                max_bytes=cfg.fetch_max_bytes,
                resolver=self.resolver,
                connector=self.connector,
                hops=hops,
            )
        except TooManyRedirects:
            return ToolOutput(
                f"error: more than {MAX_REDIRECTS} redirects from {args.url}", ok=False
            )
        except FetchRefused as exc:
            return ToolOutput(f"error: refused to fetch {hops[-1]}: {exc}", ok=False)
        except httpx.HTTPError as exc:
            return ToolOutput(
                f"error: could not fetch {hops[-1]}: {type(exc).__name__}: {exc}", ok=False
            )
        # Extraction parses the whole page (up to fetch_max_bytes): not on the event loop.
        return await asyncio.to_thread(_page_output, url, page, cfg.fetch_max_chars)


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


def readable_text(html: str, url: str | None = None) -> tuple[str, str]:
    """(title, main text) of an HTML page. The text is what trafilatura finds to be the
    page's content; where it finds none (a page of a line or two), all the page's text."""
    # Imported here, like ddgs: only a fetch needs it, and it is slow to import.
    import trafilatura
    from trafilatura.settings import Document

    # trafilatura refuses a page that does not begin like one ("<p>…</p>" alone) as not
    # HTML, by this same test: such a fragment goes in a document of its own.
    if "html" not in html[:50].lower():
        html = f"<html><body>{html}</body></html>"
    tree = trafilatura.load_html(html)
    if tree is None:
        return "", ""
    found = trafilatura.bare_extraction(
        tree, url=url, with_metadata=True, include_comments=False, include_tables=True
    )
    doc = found.as_dict() if isinstance(found, Document) else (found or {})
    title = " ".join(str(doc.get("title") or "").split())
    text = str(doc.get("text") or "")
    if not text.strip():
        text = trafilatura.html2txt(tree)
    return title, text.strip()


def _page_output(url: str, page: _Page, max_chars: int) -> ToolOutput:
    if page.status >= 400:
        return ToolOutput(f"error: {url} answered HTTP {page.status}", ok=False)
    ctype = page.ctype
    if ctype and not any(t in ctype for t in ("text/", "json", "xml")):
        return ToolOutput(f"error: {url} is not a text page ({ctype})", ok=False)
    raw = page.body.decode(page.encoding, errors="replace")
    title, text = (
        readable_text(raw, url)
        if ("html" in ctype or "<html" in raw[:2000].lower())
        else ("", raw.strip())
    )
    # A page is outside text on every path it takes (a tool result, the page, speech):
    # control-token spellings never leave here live.
    title, text = neutralize(title), neutralize(text)
    cut = len(text) > max_chars
    text = text[:max_chars]
    note = " (cut to the first part)" if cut or page.truncated else ""
    head = f"{title}\n{url}{note}\n\n" if title else f"{url}{note}\n\n"
    return ToolOutput(head + text, data={"url": url, "title": title, "chars": len(text)})


def web_tools(fetcher: Fetcher | None = None, searcher: Searcher | None = None) -> list[Tool]:
    """The web group; `fetcher` and `searcher` replace how pages are fetched and which
    search backend answers (tests play the web on this machine through them)."""
    return [
        Tool(
            "web_search",
            "Search the web; returns titles, URLs and snippets.",
            WebSearchArgs,
            searcher or Searcher(),
            GROUP,
            outside=True,
        ),
        Tool(
            "fetch_webpage",
            "Read the text of a public web page (http or https).",
            FetchWebpageArgs,
            fetcher or Fetcher(),
            GROUP,
            outside=True,
        ),
    ]
