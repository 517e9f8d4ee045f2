"""The local wheel index the plan tests point the planner at."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.provision.fake_machine import TAG


class _Index(http.server.BaseHTTPRequestHandler):
    """A PEP 503 page listing one CUDA wheel of llama-cpp-python, for any path."""

    def do_GET(self) -> None:
        wheel = f"llama_cpp_python-0.3.36-{TAG}-{TAG}-linux_x86_64.whl"
        old = f"llama_cpp_python-0.3.4-{TAG}-{TAG}-linux_x86_64.whl"
        body = f'<html><body><a href="{old}">{old}</a><a href="{wheel}#sha256=0">{wheel}</a>'
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def index_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/whl"
    server.shutdown()
    server.server_close()
