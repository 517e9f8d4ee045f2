"""Download one large file so that a person can live with it.

The disk is checked before the first byte arrives; the bytes go to `<file>.part`, so Ctrl-C
or a dropped connection loses nothing: the next try asks for the rest with an HTTP Range
request (and starts over, saying so, when the server ignores it). A progress bar shows size
and speed, one line says how long the rest will take at the measured speed, and the sha256 is
checked before the file takes its final name: from the caller (config) or, for a file in a
Hugging Face repository, the hub's LFS oid in the `X-Linked-Etag` header. When no hash is known
it says so. A file that fails the check is deleted, never kept as the model. What the person
sees (the bar, the estimate, sizes and times) is `models.download_progress`.

Standard library only; `python -m models.download URL DEST` runs it by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import re
import shutil
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from models.download_progress import Progress, human_size, human_time

CHUNK = 1 << 20
USER_AGENT = "annie-downloader/1"
# Statuses worth another try; anything else (404, 401, ...) will not change by waiting.
RETRY_STATUS = {408, 429, 500, 502, 503, 504}
_SHA256 = re.compile(r"[0-9a-f]{64}")


class DownloadError(RuntimeError):
    """A download that cannot go on, with what happened and what to do."""


@dataclass(frozen=True)
class Remote:
    """What the server says about a file before it is fetched."""

    url: str
    size: int | None
    sha256: str | None


def hub_url(base: str, repo: str, filename: str, revision: str = "main") -> str:
    """The download URL of a file in a Hugging Face model repository."""
    return f"{base.rstrip('/')}/{repo}/resolve/{revision}/{urllib.parse.quote(filename)}"


def free_bytes(folder: Path) -> int:
    """Free bytes on the disk that holds `folder` (or its nearest existing parent)."""
    probe_at = folder
    while not probe_at.exists() and probe_at != probe_at.parent:
        probe_at = probe_at.parent
    return shutil.disk_usage(probe_at).free


def margin_for(need: int) -> int:
    # Room left over for everything else on the disk: 1%, at least 64 MiB.
    return max(64 * 1024**2, need // 100)


def check_disk(folder: Path, need: int) -> None:
    """Raise DownloadError unless `folder`'s disk has `need` bytes free plus a margin."""
    want = need + margin_for(need)
    free = free_bytes(folder)
    if free < want:
        raise DownloadError(
            f"not enough disk space in {folder}: the download needs {human_size(want)} "
            f"({human_size(need)} plus a {human_size(want - need)} margin) and "
            f"{human_size(free)} is free there. Free some space, or set ANNIE_HOME to a disk "
            "with room"
        )


def _etag_sha256(value: str | None) -> str | None:
    if not value:
        return None
    tag = value.removeprefix("W/").strip('"').lower()
    return tag if _SHA256.fullmatch(tag) else None  # a git blob's sha1 is no sha256


class _Stay(urllib.request.HTTPRedirectHandler):
    """Do not follow redirects: the hub's headers are on the redirect, not on the CDN."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def probe(url: str, timeout: float = 30.0) -> Remote:
    """Size and LFS sha256 from a HEAD request; hops at most five redirects by hand."""
    opener = urllib.request.build_opener(_Stay)
    here = url
    for _ in range(6):
        request = urllib.request.Request(here, method="HEAD", headers=_headers())
        try:
            with opener.open(request, timeout=timeout) as resp:
                headers = resp.headers
                status = resp.status
        except urllib.error.HTTPError as exc:
            headers, status = exc.headers, exc.code
        except (OSError, http.client.HTTPException) as exc:
            raise DownloadError(f"cannot reach {_host(url)} ({exc}); check the network") from exc
        size = headers.get("X-Linked-Size") or (
            headers.get("Content-Length") if status < 300 else None
        )
        sha = _etag_sha256(headers.get("X-Linked-Etag"))
        location = headers.get("Location")
        if 300 <= status < 400 and location and not (size or sha):
            here = urllib.parse.urljoin(here, location)
            continue
        if status >= 400 and status not in (405, 501):  # 405/501: no HEAD; GET will tell
            raise DownloadError(f"{url} answered HTTP {status}; check the repository and file")
        return Remote(url, int(size) if size and size.isdigit() else None, sha)
    raise DownloadError(f"{url} redirects too many times")


def _headers(start: int = 0) -> dict[str, str]:
    # identity: a compressed body would make the sizes and ranges meaningless.
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if start:
        headers["Range"] = f"bytes={start}-"
    return headers


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url


class _Dropped(Exception):
    """The body ended before the length the server announced."""


@dataclass
class _State:
    """What `<file>.part` holds: its length, the hash of those bytes, the expected total."""

    have: int
    total: int | None
    hasher: hashlib._Hash


def fetch(
    url: str,
    dest: Path,
    *,
    sha256: str | None = None,
    size: int | None = None,
    out: TextIO | None = None,
    retries: int = 5,
    backoff_s: float = 1.0,
    timeout: float = 60.0,
    chunk: int = CHUNK,
) -> Path:
    """Download `url` to `dest` (resuming `dest.part`), verified; return `dest`."""
    out = out if out is not None else sys.stderr
    remote = probe(url, timeout=timeout)
    total = size if size is not None else remote.size
    expected = sha256.lower() if sha256 else remote.sha256
    progress = Progress(out, total, 0)
    if sha256 and remote.sha256 and sha256.lower() != remote.sha256:
        progress.say(
            f"the configured sha256 differs from the server's ({remote.sha256}); "
            "checking against the configured one"
        )
    if expected is None:
        progress.say(
            f"no sha256 is known for {dest.name}, so only its size can be checked "
            "(set the expected hash in config to check it)"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    have = _size(part)
    if total is not None and have > total:
        part.unlink()
        have = 0
    if total is not None:
        check_disk(dest.parent, total - have)  # before a single byte is fetched
    shown = human_size(total) if total is not None else "size unknown"
    resuming = f", resuming at {human_size(have)}" if have else ""
    progress.say(f"downloading {dest.name} ({shown}) from {_host(url)}{resuming}")
    state = _State(have, total, _hash_file(part) if have else hashlib.sha256())
    progress.restart(have)
    t0 = time.monotonic()
    try:
        _until_complete(url, part, state, progress, retries, backoff_s, timeout, chunk)
    except KeyboardInterrupt:
        progress.end()
        progress.say(
            f"interrupted: {human_size(_size(part))} kept in {part}; "
            "run the same command again to resume"
        )
        raise
    progress.end()
    digest = state.hasher.hexdigest()
    if expected is not None and digest != expected:
        part.unlink()
        raise DownloadError(
            f"checksum mismatch for {dest.name}: expected sha256 {expected}, got {digest}. "
            "The download was deleted; run again to fetch it afresh (if it fails again, the "
            "file on the server or the expected hash in config is wrong)"
        )
    part.replace(dest)
    took = time.monotonic() - t0
    check = "sha256 verified" if expected else "no sha256 to check"
    progress.say(f"downloaded {dest.name}: {human_size(state.have)} in {human_time(took)}; {check}")
    return dest


def _until_complete(
    url: str,
    part: Path,
    state: _State,
    progress: Progress,
    retries: int,
    backoff_s: float,
    timeout: float,
    chunk: int,
) -> None:
    """GET the rest until the file is whole; a connection lost with progress made is no
    failure, `retries` losses in a row without progress are."""
    failures = 0
    while True:
        before = state.have
        try:
            _transfer(url, part, state, progress, timeout, chunk)
            return
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and state.total is not None and state.have == state.total:
                return  # everything was already there
            if exc.code not in RETRY_STATUS:
                raise DownloadError(f"{url} answered HTTP {exc.code} {exc.reason}") from exc
            problem = f"HTTP {exc.code}"
        except (OSError, http.client.HTTPException, _Dropped) as exc:
            problem = str(exc) or type(exc).__name__
        failures = 0 if state.have > before else failures + 1
        if failures > retries:
            raise DownloadError(
                f"the download of {part.name.removesuffix('.part')} keeps failing ({problem}); "
                f"{human_size(state.have)} are kept in {part}: run again to resume"
            )
        progress.say(f"connection lost at {human_size(state.have)} ({problem}); resuming")
        time.sleep(min(backoff_s * 2 ** max(0, failures - 1), 30.0))


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _hash_file(path: Path) -> hashlib._Hash:
    hasher = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            hasher.update(block)
    return hasher


def _transfer(
    url: str, part: Path, state: _State, progress: Progress, timeout: float, chunk: int
) -> None:
    """One GET from what `part` holds to the end of the file, appending to `part`."""
    request = urllib.request.Request(url, headers=_headers(state.have))
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        if state.have and resp.status != 206:
            progress.say(
                "the server does not resume downloads (it ignored the Range request); starting over"
            )
            state.have, state.hasher = 0, hashlib.sha256()
            progress.restart(0)
        elif state.have and not resp.headers.get("Content-Range", "").startswith(
            f"bytes {state.have}-"
        ):
            raise DownloadError(
                f"{url} answered a resume with the wrong range "
                f"({resp.headers.get('Content-Range')}); delete {part} and retry"
            )
        length = resp.headers.get("Content-Length")
        if state.total is None and length and length.isdigit():
            state.total = progress.total = state.have + int(length)
            check_disk(part.parent, state.total - state.have)
        with part.open("ab" if state.have else "wb") as fh:
            while block := resp.read(chunk):
                try:
                    fh.write(block)
                except OSError as exc:  # the disk, not the network: retrying will not help
                    raise DownloadError(f"cannot write {part}: {exc}") from exc
                # Flushed before counting, so what `have` says is what a resume finds on disk.
                fh.flush()
                state.hasher.update(block)
                state.have += len(block)
                progress.update(state.have)
    if state.total is not None and state.have < state.total:
        raise _Dropped(f"the server sent {human_size(state.have)} of {human_size(state.total)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="download", description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("dest", type=Path)
    parser.add_argument("--sha256", default=None, help="expected sha256 (hex)")
    args = parser.parse_args(argv)
    try:
        fetch(args.url, args.dest, sha256=args.sha256)
    except DownloadError as exc:
        print(f"download failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
