"""Generated HTTP against the real server: every route, and pairing with its devices table.

Surface "http" writes requests by hand over a bare socket (what urllib and aiohttp refuse to
send: any method, any request target, lying or junk Content-Length, headers no client would
write, bodies of the wrong shape, binary, up to the body cap and past it) to one
`python -m bot serve` (`testkit.fuzz.Served`). Each answer must be a well-formed HTTP response
under 500 whose 4xx from the application is JSON with a reason, or the connection closed
where a cap says it may be (a body past `server.max_body_bytes`, a client that hung up), and
it must come within the body timeout and linger the guard documents (`bot.server.guard`,
`bot.server.access_log`). Surface "pairing" sends pairing attempts (right, wrong and junk
codes; device names of every kind), code requests, device lists and revocations with and
without the token or a device's cookie, and checks after each that no wrong code paired a
device, a right code with a free name did, and the devices table is still consistent.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from testkit.fuzz import TOKEN, Served, SurfaceReport, fixed_cases, generate, shown

# The guard's timeouts: a body must arrive within BODY_TIMEOUT_S (then 408), and the unread
# rest of a refused one is read for at most LINGER_S. An answer later than both is a failure.
BODY_TIMEOUT_S = 5.0
LINGER_S = 2.0
DEADLINE_S = BODY_TIMEOUT_S + LINGER_S + 3.0
BODY_CAP = 65536  # server.max_body_bytes's default
# Every this many cases one holds its connection open with a body shorter than its
# Content-Length, and must get its 408 within the deadline (each costs the full 5 s).
HOLD_EVERY = 500

ROUTES = [
    "/",
    "/healthz",
    "/api/offer",
    "/api/knowledge",
    "/pair",
    "/api/pairing",
    "/api/pair",
    "/api/pairing-code",
    "/api/devices",
    "/api/devices/revoke",
    "/trust",
    "/annie-ca.crt",
    "/static/app.js",
    "/static/pair.js",
    "/static/style.css",
    "/static/manifest.webmanifest",
    "/static/icons/",
]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT"]


# --- one request on a bare socket ---------------------------------------------------------


@dataclass
class Answer:
    status: int  # 0: the connection closed (or the deadline passed) with no answer
    headers: dict[str, str]  # lower-case names
    body: bytes
    seconds: float
    timed_out: bool = False
    error: str = ""

    def reason(self) -> str:
        """The JSON reason of a refusal ("" when the body is not one)."""
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            data = json.loads(self.body)
            if isinstance(data, dict) and isinstance(data.get("reason"), str):
                return data["reason"]
        return ""

    def json(self) -> Any:
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            return json.loads(self.body)
        return None

    def short(self) -> str:
        head = f"HTTP {self.status} {self.body[:120]!r} after {self.seconds:.2f}s"
        return head + (f" ({self.error})" if self.error else "")


def exchange(port: int, raw: bytes, *, hang_up: bool = False, head_only: bool = False) -> Answer:
    """Send `raw` on a fresh connection and read the first final answer (1xx skipped) until
    its Content-Length is in or the server closes; `hang_up` closes our side after sending."""
    t0 = time.monotonic()
    error = ""
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
    try:
        try:
            sock.sendall(raw)
        except OSError as exc:  # the server refused and closed before the body was all sent
            error = f"send: {exc.strerror or exc}"
        if hang_up:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
        data = b""
        while True:
            answer = _parse(data, head_only)
            if answer is not None:
                status, headers, body = answer
                return Answer(status, headers, body, time.monotonic() - t0, error=error)
            left = DEADLINE_S - (time.monotonic() - t0)
            if left <= 0:
                return Answer(0, {}, data, time.monotonic() - t0, True, error or "deadline")
            sock.settimeout(left)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                return Answer(0, {}, data, time.monotonic() - t0, True, error or "deadline")
            except OSError as exc:
                error = error or f"recv: {exc.strerror or exc}"
                chunk = b""
            if not chunk:
                parsed = _parse(data, head_only, closed=True)
                status, headers, body = parsed or (0, {}, data)
                return Answer(status, headers, body, time.monotonic() - t0, error=error)
            data += chunk
    finally:
        sock.close()


def _parse(
    data: bytes, head_only: bool, closed: bool = False
) -> tuple[int, dict[str, str], bytes] | None:
    """The first final response in `data` once it is complete (None: read on)."""
    while True:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            return None
        head, rest = data[:end], data[end + 4 :]
        lines = head.decode("latin-1").split("\r\n")
        match = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
        if match is None:
            return (0, {}, data) if closed else None
        status = int(match.group(1))
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if 100 <= status < 200:
            data = rest
            continue
        if head_only or status in (204, 304):
            return status, headers, b""
        length = headers.get("content-length", "")
        if length.isdigit():
            if len(rest) >= int(length):
                return status, headers, rest[: int(length)]
            return (status, headers, rest) if closed else None
        return (status, headers, rest) if closed else None


# --- surface "http" -----------------------------------------------------------------------


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=40),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
        ),
        max_leaves=12,
    )


def _deep(depth: int, opener: str) -> bytes:
    return (opener * depth).encode()


def _bodies() -> st.SearchStrategy[bytes]:
    shaped = st.one_of(
        st.fixed_dictionaries(
            {"type": _json_values(), "sdp": _json_values()},
            optional={"resume": _json_values()},
        ),
        st.fixed_dictionaries(
            {"type": st.just("offer"), "sdp": st.text(max_size=200).map(lambda s: "v=0\r\n" + s)},
            optional={"resume": _json_values()},
        ),
        st.fixed_dictionaries({"code": _json_values(), "name": _json_values()}),
        st.fixed_dictionaries({"device": _json_values()}),
    )
    return st.one_of(
        st.just(b""),
        _json_values().map(lambda v: json.dumps(v).encode()),
        shaped.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=300),
        st.text(max_size=300).map(lambda s: s.encode("utf-8", "surrogatepass")),
        st.tuples(
            st.sampled_from([10, 999, 1000, 5000, 20_000, 60_000]),
            st.sampled_from(["[", '{"a":', '{"sdp":']),
        ).map(lambda t: _deep(*t)),
    )


def _targets() -> st.SearchStrategy[str]:
    safe = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
    return st.one_of(
        st.sampled_from(ROUTES),
        st.tuples(
            st.sampled_from(ROUTES),
            st.sampled_from(["?token={token}", "?token=wrong", "?code=123456", "?a=%ff%00", "?"]),
        ).map("".join),
        st.sampled_from(
            [
                "/static/../../etc/passwd",
                "/static/%2e%2e/%2e%2e/config/settings.py",
                "/static/..%2f..%2fconfig%2fdefault.toml",
                "/../../../../etc/passwd",
                "//etc/passwd",
                "/static//etc/passwd",
                "/static/..\\..\\config\\settings.py",
                "/api/offer/../healthz",
                "*",
                "http://evil.example/healthz",
                "/%00",
                "/static/%00.js",
            ]
        ),
        st.binary(min_size=1, max_size=40).map(lambda b: "/" + "".join(f"%{x:02x}" for x in b)),
        st.text(safe, min_size=1, max_size=60).map(lambda s: "/" + s),
        st.text(max_size=30).map(lambda s: "/" + s),  # spaces, controls, non-ASCII: bad lines
        st.tuples(st.sampled_from(["/", "/api/", "/static/"]), st.integers(1000, 20_000)).map(
            lambda t: t[0] + "a" * t[1]
        ),
    )


def _headers() -> st.SearchStrategy[list[list[str]]]:
    host = st.sampled_from(
        [
            "127.0.0.1:{port}",
            "127.0.0.1:{port}",
            "localhost:{port}",
            "[::1]:{port}",
            "evil.example",
            "127.0.0.1",
            "127.0.0.1:1",
            "",
            "[::1",
            "127.0.0.1:{port}:1",
            "127.0.0.1:99999999999999999999",
        ]
    )
    name_chars = st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=":")
    optional = st.lists(
        st.one_of(
            st.tuples(
                st.just("Origin"),
                st.sampled_from(
                    ["http://127.0.0.1:{port}", "null", "http://evil.example", "https://x", "%"]
                ),
            ),
            st.tuples(
                st.just("Sec-Fetch-Site"),
                st.sampled_from(["same-origin", "cross-site", "same-site", "none", "??"]),
            ),
            st.tuples(st.just("Sec-Fetch-Mode"), st.sampled_from(["navigate", "cors", "no-cors"])),
            st.tuples(
                st.just("X-Annie-Token"), st.sampled_from(["{token}", "wrong", "", "{token}x"])
            ),
            st.tuples(st.just("Authorization"), st.sampled_from(["Bearer {token}", "Basic Og=="])),
            st.tuples(
                st.just("Cookie"), st.sampled_from(["annie_device=junk", "annie_device=", "a=b; c"])
            ),
            st.tuples(
                st.just("Content-Type"),
                st.sampled_from(
                    [
                        "application/json",
                        "application/json",
                        "application/json; charset=latin-1",
                        "text/plain",
                        "multipart/form-data; boundary=x",
                        "application/x-www-form-urlencoded",
                        "junk",
                    ]
                ),
            ),
            st.tuples(
                st.sampled_from(["X-Forwarded-For", "Forwarded", "X-Real-IP"]),
                st.just("10.0.0.9"),
            ),
            st.tuples(st.just("Expect"), st.sampled_from(["100-continue", "nonsense"])),
            st.tuples(
                st.just("Connection"), st.sampled_from(["keep-alive", "upgrade", "close, x"])
            ),
            st.tuples(st.just("Upgrade"), st.sampled_from(["websocket", "h2c"])),
            st.tuples(st.text(name_chars, min_size=1, max_size=20), st.text(max_size=60)),
            st.tuples(st.just("X-Long"), st.integers(100, 20_000).map(lambda n: "v" * n)),
        ).map(list),
        max_size=6,
    )
    return st.tuples(host, optional, st.booleans()).map(
        lambda t: ([["Host", t[0]]] if t[2] or t[0] else []) + t[1]
    )


@st.composite
def http_cases(draw: st.DrawFn) -> dict[str, Any]:
    """One request: method, target, headers, body (or a huge one's size and fill), and how
    its Content-Length is told."""
    method = draw(
        st.one_of(
            st.sampled_from(METHODS),
            st.text(st.characters(min_codepoint=0x41, max_codepoint=0x5A), min_size=1, max_size=12),
            st.text(max_size=8),
        )
    )
    huge = draw(
        st.one_of(
            st.none(),
            st.tuples(
                st.one_of(
                    st.just(BODY_CAP),
                    st.integers(BODY_CAP - 64, BODY_CAP + 64),
                    st.integers(0, 300_000),
                ),
                st.sampled_from(["a", "[", '{"type": "offer", "sdp": "v=0', "\x00\xff"]),
            ),
        )
    )
    return {
        "method": method,
        "target": draw(_targets()),
        "headers": draw(_headers()),
        "body": draw(_bodies()) if huge is None else b"",
        "huge": list(huge) if huge is not None else None,
        "length": draw(st.sampled_from(["honest", "honest", "honest", "absent", "more", "less"])),
        "extra": draw(st.integers(1, 100_000)),
        "junk_length": draw(
            st.one_of(st.none(), st.sampled_from(["-1", "abc", "1,1", " 5", "9" * 30, "0x10"]))
        ),
        "chunked": draw(st.booleans()) and not draw(st.booleans()),
        "hang_up": draw(st.booleans()) and draw(st.booleans()),
        "hold": False,
    }


def body_of(case: dict[str, Any]) -> bytes:
    huge = case.get("huge")
    if huge:
        size, fill = int(huge[0]), str(huge[1]).encode("latin-1")
        return (fill * (size // len(fill) + 1))[:size]
    return bytes(case.get("body") or b"")


def raw_request(case: dict[str, Any], port: int) -> bytes:
    """The request's bytes, with `{port}` and `{token}` filled in (kept cases stay valid)."""

    def fill(text: str) -> str:
        return text.replace("{port}", str(port)).replace("{token}", TOKEN)

    body = body_of(case)
    lines = [f"{case['method']} {fill(case['target'])} HTTP/1.1"]
    lines += [f"{name}: {fill(value)}" for name, value in case["headers"]]
    if case.get("junk_length") is not None:
        lines.append(f"Content-Length: {case['junk_length']}")
    elif case.get("chunked"):
        lines.append("Transfer-Encoding: chunked")
        body = b"".join(
            b"%x\r\n%s\r\n" % (len(body[i : i + 4096]), body[i : i + 4096])
            for i in range(0, len(body), 4096)
        )
        body += b"0\r\n\r\n"
    elif case["length"] == "honest" and (body or case["method"] == "POST"):
        lines.append(f"Content-Length: {len(body)}")
    elif case["length"] == "more":
        lines.append(f"Content-Length: {len(body) + int(case['extra'])}")
    elif case["length"] == "less":
        lines.append(f"Content-Length: {max(0, len(body) - int(case['extra']))}")
    head = "\r\n".join([*lines, "", ""]).encode("utf-8", "surrogatepass")
    return head + body


def route_of(case: dict[str, Any]) -> str:
    """Where a failure is, for its kind: the known route and the method, or "other"."""
    path = str(case["target"]).split("?", 1)[0]
    route = path if path in ROUTES else ("/static/*" if path.startswith("/static/") else "other")
    method = case["method"] if case["method"] in METHODS else "other method"
    return f"{method} {route}"


def judge(case: dict[str, Any], answer: Answer) -> list[str]:
    """What is wrong with this answer to this request (nothing: [])."""
    problems: list[str] = []
    size = len(body_of(case))
    claimed = size + int(case["extra"]) if case["length"] == "more" else size
    # Where the server may close without an answer: the client hung up, or sent more than the
    # cap (the refusal may be lost in the reset), or left a body unfinished.
    may_close = (
        bool(case.get("hang_up"))
        or max(size, claimed) > BODY_CAP
        or (case["length"] == "more" and not case.get("hold"))
    )
    if answer.timed_out:
        problems.append(f"no answer and not closed within {DEADLINE_S:g} s")
    elif answer.status == 0:
        if not may_close:
            problems.append("closed without an answer")
    elif answer.status >= 500:
        documented = answer.status == 503 and answer.reason()
        if not documented:
            problems.append(f"HTTP {answer.status}")
    app = "content-security-policy" in answer.headers
    if answer.status and not app and answer.status != 400:
        problems.append(f"HTTP {answer.status} without the guard's headers")
    # aiohttp answers an Expect header other than 100-continue with a text 417 before any
    # middleware runs (for unknown paths too), so the guard cannot make that one JSON.
    expect_refused = answer.status == 417 and answer.body.startswith(b"Unknown Expect")
    if (
        app
        and 400 <= answer.status < 500
        and case["method"] != "HEAD"
        and not answer.reason()
        and not expect_refused
    ):
        problems.append(f"HTTP {answer.status} without a JSON reason")
    if b"Traceback" in answer.body:
        problems.append("a traceback in the answer")
    if case.get("hold") and answer.status and answer.status not in range(400, 500):
        problems.append(f"an unfinished body answered HTTP {answer.status}, not a refusal")
    return problems


def http_surface(cases: int, seed: int, home: Path) -> SurfaceReport:
    report = SurfaceReport()
    with Served(home, report) as served:
        count = 0

        def check(case: dict[str, Any]) -> None:
            nonlocal count
            count += 1
            report.cases += 1
            if count % HOLD_EVERY == 0:
                case = {**case, "length": "more", "hold": True, "hang_up": False}
                case["junk_length"] = None
                case["chunked"] = False
            raw = raw_request(case, served.port)
            try:
                answer = exchange(
                    served.port,
                    raw,
                    hang_up=bool(case.get("hang_up")),
                    head_only=case["method"] == "HEAD",
                )
            except OSError as exc:
                report.fail(f"could not connect ({route_of(case)})", f"{exc}: {shown(case)}")
                served.after(route_of(case), shown(case))
                return
            for problem in judge(case, answer):
                report.fail(f"{problem} on {route_of(case)}", f"{shown(case)} -> {answer.short()}")
            served.after(route_of(case), shown(case))

        for case in fixed_cases("http"):
            check(case)
        generate(http_cases(), cases, seed, check)
    return report


# --- surface "pairing" ----------------------------------------------------------------------

ANCHOR = "fuzz anchor"
PAIR_ROUTES = {
    "pair": ("POST", "/api/pair"),
    "status": ("GET", "/api/pairing"),
    "code": ("POST", "/api/pairing-code"),
    "devices": ("GET", "/api/devices"),
    "revoke": ("POST", "/api/devices/revoke"),
    "page": ("GET", "/pair"),
}
# Codes last 300 s; the harness asks for a new one well before.
REISSUE_S = 200.0


@st.composite
def pairing_cases(draw: st.DrawFn) -> dict[str, Any]:
    name_chars = st.characters(codec="utf-8", exclude_categories=["Cs"])
    names = st.one_of(
        st.text(st.sampled_from("abcdefghij KLMNOP0123'-"), min_size=1, max_size=40),
        st.sampled_from([ANCHOR, ANCHOR.upper(), f"  {ANCHOR}  ", "Kitchen phone", "x" * 41]),
        st.text(name_chars, max_size=50),
        st.text(max_size=10).map(lambda s: s + "\n\t\x00"),
        _json_values(),
    )
    codes = st.one_of(
        st.sampled_from(["{live}", "{live}", " {live} ", "{live}\n", "{wrong}", "{wrong}"]),
        st.text(st.sampled_from("0123456789"), min_size=0, max_size=8),
        st.text(max_size=8),
        st.sampled_from(["١٢٣٤٥٦", "12345６", "000000", "999999", "-12345"]),
        _json_values(),
    )
    devices = st.one_of(
        names, st.integers(0, 30).map(lambda n: f"dev-{n}"), st.just("dev-" + "9" * 30)
    )
    route = draw(
        st.sampled_from(["pair", "pair", "pair", "status", "code", "devices", "revoke", "page"])
    )
    body: dict[str, Any] = {}
    if route == "pair":
        body = {"code": draw(codes), "name": draw(names)}
    elif route == "revoke":
        body = {"device": draw(devices)}
    body.update(draw(st.dictionaries(st.text(max_size=8), _json_values(), max_size=2)))
    return {
        "route": route,
        "body": body,
        "drop": draw(st.lists(st.sampled_from(["code", "name", "device"]), max_size=2)),
        "raw": draw(st.one_of(st.none(), st.none(), st.none(), _bodies())),
        "auth": draw(
            st.sampled_from(
                [
                    "none",
                    "token",
                    "token",
                    "query-token",
                    "wrong-token",
                    "anchor-cookie",
                    "paired-cookie",
                    "junk-cookie",
                ]
            )
        ),
        "content_type": draw(
            st.sampled_from(
                [
                    "application/json",
                    "application/json",
                    "application/json; charset=utf-8",
                    "text/plain",
                    None,
                ]
            )
        ),
        "origin": draw(st.sampled_from([None, None, "self", "http://evil.example", "null"])),
        "site": draw(st.sampled_from([None, None, "same-origin", "cross-site", "none"])),
        "forwarded": draw(st.booleans()) and draw(st.booleans()),
    }


@dataclass
class DeviceState:
    n: int
    name: str
    token_hash: str
    created_at: str
    revoked_at: str | None


def read_devices(db: Path) -> dict[int, DeviceState]:
    """The devices table, read-only, from outside the server."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10.0)
    try:
        rows = conn.execute(
            "SELECT n, name, token_hash, created_at, revoked_at FROM devices"
        ).fetchall()
    finally:
        conn.close()
    return {int(r[0]): DeviceState(*r) for r in rows}


def ascii_lower(text: str) -> str:
    """What SQLite's NOCASE compares: only A-Z fold (an active name is unique so)."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class Pairing:
    """The harness around one server: the live code, the cookies it was given, the table as
    last read, and the checks after each case."""

    def __init__(self, served: Served, report: SurfaceReport) -> None:
        self.served = served
        self.report = report
        self.code = ""
        self.issued = 0.0
        self.cookies: dict[str, str] = {}  # "anchor" and "paired": the latest of each
        self.revoked: set[int] = set()
        self.table: dict[int, DeviceState] = {}

    @property
    def port(self) -> int:
        return self.served.port

    def send(
        self, method: str, path: str, body: bytes | None, headers: list[tuple[str, str]]
    ) -> Answer:
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers]
        data = body or b""
        if body is not None:
            lines.append(f"Content-Length: {len(data)}")
        raw = "\r\n".join([*lines, "", ""]).encode("utf-8", "surrogatepass") + data
        return exchange(self.port, raw)

    def owner_json(self, path: str, body: Any | None = None) -> Answer:
        headers = [("X-Annie-Token", TOKEN)]
        if body is None:
            return self.send("POST", path, b"", headers)
        headers.append(("Content-Type", "application/json"))
        return self.send("POST", path, json.dumps(body).encode(), headers)

    def issue(self) -> None:
        answer = self.owner_json("/api/pairing-code")
        data = answer.json()
        if answer.status != 200 or not isinstance(data, dict) or "code" not in data:
            raise RuntimeError(f"the owner could not get a pairing code: {answer.short()}")
        self.code, self.issued = str(data["code"]), time.monotonic()

    def ensure_code(self) -> None:
        if not self.code or time.monotonic() - self.issued > REISSUE_S:
            self.issue()

    def start(self) -> None:
        self.issue()
        answer = self.pair_as(ANCHOR)
        if answer.status not in (200, 409):  # 409: paired before the server was restarted
            raise RuntimeError(f"the anchor device did not pair: {answer.short()}")
        self.table = read_devices(self.served.server.db_path)

    def pair_as(self, name: str) -> Answer:
        body = json.dumps({"code": self.code, "name": name}).encode()
        answer = self.send("POST", "/api/pair", body, [("Content-Type", "application/json")])
        self._took(answer, "anchor" if name == ANCHOR else "paired")
        return answer

    def _took(self, answer: Answer, which: str) -> None:
        if answer.status == 200:
            self.code = ""  # consumed
            match = re.search(r"annie_device=([^;]+)", answer.headers.get("set-cookie", ""))
            if match:
                self.cookies[which] = match.group(1)

    def wrong(self) -> str:
        return f"{(int(self.code) + 1) % 10**6:06d}" if self.code else "000000"

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{live}", self.code).replace("{wrong}", self.wrong())
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value

    def request(self, case: dict[str, Any]) -> tuple[list[tuple[str, str]], bytes | None, Any]:
        """The headers, body bytes and (when JSON) body object this case sends."""
        headers: list[tuple[str, str]] = []
        auth = case["auth"]
        if auth == "token":
            headers.append(("X-Annie-Token", TOKEN))
        elif auth == "wrong-token":
            headers.append(("X-Annie-Token", TOKEN + "x"))
        elif auth.endswith("-cookie"):
            which = auth.removesuffix("-cookie")
            headers.append(("Cookie", f"annie_device={self.cookies.get(which, 'junk')}"))
        if case["content_type"]:
            headers.append(("Content-Type", case["content_type"]))
        if case["origin"]:
            origin = f"http://127.0.0.1:{self.port}" if case["origin"] == "self" else case["origin"]
            headers.append(("Origin", origin))
        if case["site"]:
            headers.append(("Sec-Fetch-Site", case["site"]))
        if case["forwarded"]:
            headers.append(("X-Forwarded-For", "10.0.0.9"))
        method, _ = PAIR_ROUTES[case["route"]]
        if case["raw"] is not None:
            return headers, case["raw"], None
        if method == "GET":
            return headers, None, None
        obj = {k: v for k, v in self.fill(case["body"]).items() if k not in case["drop"]}
        return headers, json.dumps(obj).encode(), obj

    def expect_pair(self, case: dict[str, Any], obj: Any) -> bool | None:
        """True: this attempt must pair a device; False: it must not; None: not a pairing."""
        if case["route"] != "pair":
            return None
        code = obj.get("code") if isinstance(obj, dict) else None
        if not (self.code and isinstance(code, str) and code.strip() == self.code):
            return False
        guard_ok = case["origin"] in (None, "self") and case["site"] != "cross-site"
        json_ok = str(case["content_type"] or "").startswith("application/json")
        name = obj.get("name")
        if not (guard_ok and json_ok and isinstance(name, str)):
            return False
        from memory.devices import clean_name

        try:
            cleaned = ascii_lower(clean_name(name))
        except ValueError:
            return False
        return not any(
            d.revoked_at is None and ascii_lower(d.name) == cleaned for d in self.table.values()
        )

    def check(self, case: dict[str, Any]) -> None:
        self.report.cases += 1
        self.ensure_code()
        method, path = PAIR_ROUTES[case["route"]]
        if case["auth"] == "query-token":
            path += f"?token={TOKEN}"
        headers, body, obj = self.request(case)
        expected = self.expect_pair(case, obj)
        before = self.table
        answer = self.send(method, path, body, headers)
        where = f"{method} {PAIR_ROUTES[case['route']][1]}"
        example = f"{shown(case)} -> {answer.short()}"
        for problem in judge(
            {"method": method, "target": path, "length": "honest", "extra": 0, "body": body},
            answer,
        ):
            self.report.fail(f"{problem} on {where}", example)
        if case["route"] == "pair":
            self._took(answer, "paired")
        if case["route"] == "code" and answer.status == 200:
            data = answer.json()
            if isinstance(data, dict) and isinstance(data.get("code"), str):
                self.code, self.issued = data["code"], time.monotonic()
        after = read_devices(self.served.server.db_path)
        added = sorted(set(after) - set(before))
        if expected is False and (answer.status == 200 or added):
            self.report.fail(f"a device paired without the right code ({where})", example)
        if expected is True and (answer.status != 200 or len(added) != 1):
            self.report.fail(f"the right code and a free name did not pair ({where})", example)
        if case["route"] != "pair" and added:
            self.report.fail(f"a device was added by {where}", example)
        self._consistent(before, after, case, answer, example, where)
        self.table = after
        if answer.status == 429:
            self.report.fail(f"pairing locked ({where})", example)
            self._restart()
        elif "wrong pairing code" in answer.reason():
            # Reset the wrong-try count (a right code resets it; the anchor's name is taken,
            # so nothing is paired and the code stays live) so pairing never locks mid-run.
            reset = self.pair_as(ANCHOR)
            if reset.status not in (200, 409):
                self.report.fail("the right code was refused after a wrong one", reset.short())
            self.table = read_devices(self.served.server.db_path)
        if not self.served.after(where, example):
            self.code, self.cookies = "", {}

    def _consistent(
        self,
        before: dict[int, DeviceState],
        after: dict[int, DeviceState],
        case: dict[str, Any],
        answer: Answer,
        example: str,
        where: str,
    ) -> None:
        from memory.devices import clean_name

        problems: list[str] = []
        if set(before) - set(after):
            problems.append("a device row disappeared")
        active = [ascii_lower(d.name) for d in after.values() if d.revoked_at is None]
        if len(active) != len(set(active)):
            problems.append("two active devices share a name")
        hashes = [d.token_hash for d in after.values()]
        if len(hashes) != len(set(hashes)) or not all(
            re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes
        ):
            problems.append("device token hashes are not distinct SHA-256s")
        for d in after.values():
            try:
                ok = clean_name(d.name) == d.name
            except ValueError:
                ok = False
            if not ok:
                problems.append("a stored device name is not a clean one")
            if d.n in self.revoked and d.revoked_at is None:
                problems.append("a revoked device became active again")
        newly = [
            n for n, d in after.items() if d.revoked_at and n in before and not before[n].revoked_at
        ]
        if len(newly) > 1 or (newly and case["route"] != "revoke"):
            problems.append(f"{len(newly)} devices revoked by one {where}")
        if newly and answer.status != 200:
            problems.append(f"a device was revoked by a refused {where}")
        self.revoked |= {n for n, d in after.items() if d.revoked_at}
        for problem in dict.fromkeys(problems):
            self.report.fail(f"devices table: {problem}", example)
        if case["route"] == "devices" and answer.status == 200:
            data = answer.json()
            listed = data.get("devices") if isinstance(data, dict) else None
            ids = sorted(f"dev-{n}" for n in after)
            if not isinstance(listed, list) or sorted(str(d.get("id")) for d in listed) != ids:
                self.report.fail("GET /api/devices does not list the table", example)

    def _restart(self) -> None:
        self.served.server.stop(timeout=30)
        self.served.server.start()
        self.code, self.cookies = "", {}
        self.start()


def pairing_surface(cases: int, seed: int, home: Path) -> SurfaceReport:
    report = SurfaceReport()
    with Served(home, report) as served:
        harness = Pairing(served, report)
        harness.start()
        for case in fixed_cases("pairing"):
            harness.check(case)
        generate(pairing_cases(), cases, seed, harness.check)
    return report


SURFACES = {"http": http_surface, "pairing": pairing_surface}
