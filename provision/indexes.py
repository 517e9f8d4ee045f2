"""What a package index publishes: one project page read, and the CUDA variants worth asking.

A project page lists files: PEP 503 HTML (PyTorch's index, llama-cpp-python's GitHub Pages
index, whose links point at GitHub release assets) or PEP 691 JSON where the index speaks it
(PyPI), which also gives each file's size. Reading one tells a page that is not there (HTTP 404:
the index publishes no such variant) from an index that cannot be reached, so the planner can say
which it was. A file's size comes from the page, else from a HEAD request, else stays unknown.
The candidate CUDA variants for a driver are derived from its CUDA version and the card, and
each is then asked for; the index, not a list, decides what exists.
"""

from __future__ import annotations

import html.parser
import io
import json
import re
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, text/html;q=0.5"
# CUDA 13 builds no code for cards older than Turing (compute capability 7.5).
CUDA13_MIN_CAPABILITY = (7, 5)


@dataclass(frozen=True)
class Listed:
    """One file a project page lists: its name, where to fetch it, and its size if stated."""

    name: str
    url: str
    size: int | None = None


class Index(Protocol):
    """How the planner reads indexes (`HttpIndex` here; tests read copied pages)."""

    def listing(self, url: str) -> list[Listed] | None: ...

    def size(self, url: str) -> int | None: ...

    def requires(self, url: str) -> list[str] | None: ...


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            self.hrefs.append(href)


def parse_page(page: str, base: str, content_type: str = "text/html") -> list[Listed]:
    """The files a project page lists, with absolute URLs (fragments such as #sha256 cut)."""
    if content_type.startswith(JSON_TYPE) or page.lstrip().startswith("{"):
        data = json.loads(page)
        return [
            Listed(f["filename"], urllib.parse.urljoin(base, f["url"]), f.get("size"))
            for f in data.get("files", [])
            if not f.get("yanked")
        ]
    parser = _Links()
    parser.feed(page)
    out = []
    for href in parser.hrefs:
        url = urllib.parse.urljoin(base, href.split("#")[0])
        name = urllib.parse.unquote(url.rstrip("/").rsplit("/", 1)[-1])
        out.append(Listed(name, url))
    return out


def _open(request: urllib.request.Request, timeout: float) -> Any:
    return urllib.request.urlopen(request, timeout=timeout)


class HttpIndex:
    """Indexes read over HTTP(S), each request within `timeout` seconds."""

    def __init__(self, timeout: float, opener: Callable[..., Any] = _open) -> None:
        self.timeout = timeout
        self._open = opener

    def listing(self, url: str) -> list[Listed] | None:
        """The page's files; [] when the page does not exist (404); None when unreachable."""
        request = urllib.request.Request(url, headers={"Accept": ACCEPT})
        try:
            with self._open(request, self.timeout) as resp:
                kind = resp.headers.get("Content-Type", "text/html")
                page = resp.read(8_000_000).decode("utf-8", "replace")
                return parse_page(page, resp.geturl(), kind)
        except urllib.error.HTTPError as exc:
            return [] if exc.code in (403, 404, 410) else None
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def size(self, url: str) -> int | None:
        """Content-Length of `url` by a HEAD request (redirects followed), or None."""
        request = urllib.request.Request(url, method="HEAD")
        try:
            with self._open(request, self.timeout) as resp:
                length = resp.headers.get("Content-Length")
                return int(length) if length and length.isdigit() else None
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def requires(self, url: str) -> list[str] | None:
        """The Requires-Dist lines of a small wheel (a meta package's, a few kB), or None."""
        try:
            with self._open(urllib.request.Request(url), self.timeout) as resp:
                data = resp.read(1_000_000)
        except (urllib.error.URLError, OSError, ValueError):
            return None
        return wheel_requires(data)


def wheel_requires(data: bytes) -> list[str] | None:
    """The Requires-Dist lines of the wheel in `data`, or None if it is not a readable wheel."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
            text = zf.read(meta).decode("utf-8", "replace")
    except (zipfile.BadZipFile, StopIteration, KeyError):
        return None
    return [
        ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Requires-Dist:")
    ]


class Offline:
    """An index reader for a machine that reaches nothing."""

    def listing(self, url: str) -> list[Listed] | None:
        return None

    def size(self, url: str) -> int | None:
        return None

    def requires(self, url: str) -> list[str] | None:
        return None


def size_text(n: int | None) -> str:
    """A download size for the plan: 1.23 GB, 364 MB, 2 kB (decimal units, as pip shows)."""
    if n is None:
        return "size unknown"
    if n == 0:
        return "no download"
    for unit, scale in (("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}" if unit == "GB" else f"{n / scale:.0f} {unit}"
    return f"{max(1, round(n / 1e3))} kB"


_VARIANT = re.compile(r"cu(\d+)$")


def variant_cuda(variant: str) -> tuple[int, int]:
    """cu124 -> (12, 4), cu130 -> (13, 0)."""
    digits = _VARIANT.match(variant)
    if digits is None:
        raise ValueError(f"not a CUDA variant: {variant!r} (expected cu121, cu130 ...)")
    text = digits.group(1)
    return int(text[:-1]), int(text[-1])


def cuda_variants(
    driver: tuple[int, int],
    capability: tuple[int, int] | None,
    override: list[str],
    oldest_major: int = 12,
) -> list[tuple[str, str]]:
    """The CUDA variants to ask an index for, best first, each with why it would run.

    Newest first among those the driver supports (a driver runs builds of its own CUDA version
    and older ones, a CUDA 13 driver CUDA 12 builds too); only then newer minors of the driver's
    major version, which run by CUDA's minor-version compatibility. CUDA 13 builds are left out
    for cards below compute capability 7.5. `override` (the config's list) restricts the
    candidates to those it names.
    """
    major, minor = driver
    supported: list[tuple[str, str]] = []
    newer: list[tuple[str, str]] = []
    for m in range(major, oldest_major - 1, -1):
        if m >= 13 and capability is not None and capability < CUDA13_MIN_CAPABILITY:
            continue
        top = minor if m == major else 9
        supported += [(f"cu{m}{k}", "supported by the driver") for k in range(top, -1, -1)]
        if m == major:
            why = "newer than the driver: runs by CUDA's minor-version compatibility"
            newer = [(f"cu{m}{k}", why) for k in range(minor + 1, 10)]
    order = supported + newer
    if override:
        wanted = {v.strip().lower() for v in override}
        order = [(v, why) for v, why in order if v in wanted]
    return order
