"""A local HTTP server that serves the copied indexes as the real hosts would, and stand-in wheels.

Paths mirror the real ones under one host: `/llama-cpp-python/whl/<variant>/llama-cpp-python/`
(abetlen.github.io, its links to GitHub release assets rewritten to `/assets/<tag>/<file>`),
`/whl/<variant>/torch/` and `/whl/<variant>/<file>` (download.pytorch.org, whose links are
root-relative already), and `/pypi/simple/<name>/` (PyPI's JSON pages, links to
files.pythonhosted.org rewritten to `/files/...`). A page the copy lacks answers 404, as a
variant the index does not publish does. `/no-0.3.36/...` serves the llama-cpp-python pages
without their (inferred) v0.3.36 sections. Every request is logged, so a test can say which
wheel pip fetched.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import urllib.parse
from pathlib import Path
from typing import Any

from tests.provision.standins import INDEXES, contents, wheel

GITHUB = "https://github.com/abetlen/llama-cpp-python/releases/download/"
FILES = "https://files.pythonhosted.org/"


class IndexServer:
    """The server and what it was asked for; `url` is its base, e.g. http://127.0.0.1:PORT."""

    def __init__(self, libs: dict[str, bytes]) -> None:
        self.libs = libs
        self.requests: list[tuple[str, str]] = []
        self._cache: dict[str, bytes] = {}
        handler = _handler(self)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> IndexServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fetched(self) -> list[str]:
        """The wheel files fetched with GET, by file name, in order."""
        return [Path(p).name for m, p in self.requests if m == "GET" and p.endswith(".whl")]

    def respond(self, path: str) -> tuple[int, str, bytes]:
        path = urllib.parse.unquote(path.split("?")[0])
        if path.endswith(".whl"):
            name = Path(path).name
            if path not in self._cache:
                self._cache[path] = wheel(name, contents(name, path, self.libs))
            return 200, "application/octet-stream", self._cache[path]
        drop = path.startswith("/no-0.3.36/")
        page = INDEXES / path.removeprefix("/no-0.3.36").strip("/")
        if path.startswith("/pypi/simple/"):
            data = _pypi(page.parent / f"{page.name}.json", self.url)
            kind = "application/vnd.pypi.simple.v1+json"
            return (200, kind, data) if data else (404, "text/plain", b"")
        html = page / "index.html"
        if not html.is_file():
            return 404, "text/html", b"<html><body>404</body></html>"
        text = html.read_text().replace(GITHUB, f"{self.url}/assets/")
        if drop:
            text = re.sub(r"    <h2>v0\.3\.36</h2>\n(    <a .*\n    <br>\n)*", "", text)
        return 200, "text/html", text.encode()


def _pypi(path: Path, base: str) -> bytes | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    for f in data["files"]:
        f["url"] = f["url"].replace(FILES, f"{base}/files/")
    return json.dumps(data).encode()


def _handler(server: IndexServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, body: bool) -> None:
            server.requests.append((self.command, self.path))
            code, kind, data = server.respond(self.path)
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer(True)

        def do_HEAD(self) -> None:
            self._answer(False)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
