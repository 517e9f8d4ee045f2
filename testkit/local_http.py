"""A fixed page served on this machine from a thread, recording each request's path.

For tests of tools that leave the machine (fetch, search): the page is real HTTP on
127.0.0.1, and it is answered from its own thread, since an approved action runs while the
session's event loop waits for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serve_page(path: str, body: bytes, content_type: str) -> Iterator[tuple[str, list[str]]]:
    """Yields (the page's URL, the paths requested so far)."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass  # the test reads `hits`, not stderr

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}", hits
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
