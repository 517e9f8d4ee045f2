"""How the server's connections are run and logged: the timeouts every way of serving gets
(`handler_args`), and an access log that never writes the token a page address may carry."""

from __future__ import annotations

import logging
import re
from typing import Any

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web_request import BaseRequest
from aiohttp.web_response import StreamResponse

# A connection with no request (or only part of one) in flight closes after this. aiohttp
# (3.10+) starts the keep-alive clock when a connection opens, so it also bounds half-open
# connections and headers sent a byte at a time.
IDLE_TIMEOUT_S = 15.0
# After a refusal with an unread body (413, 408), aiohttp reads and discards the rest so the
# client sees the answer; a short bound, so a dribbling client is not kept for 10 s more.
LINGER_S = 2.0
_TOKEN_IN_URL = re.compile(r"([?&](?:token|code)=)[^&\s\"]*", re.IGNORECASE)


def redact(text: str) -> str:
    """`?token=s3cret` → `?token=[redacted]` (and `?code=`) anywhere in a URL or a log line."""
    return _TOKEN_IN_URL.sub(r"\1[redacted]", text)


class RedactingAccessLogger(AbstractAccessLogger):
    """aiohttp's access log line, without the token a page address may carry."""

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        remote = request.remote or "-"
        line = f"{request.method} {redact(request.path_qs)} HTTP/{request.version.major}."
        line += f"{request.version.minor}"
        self.logger.info(
            '%s "%s" %d %s %.3fs',
            remote,
            line,
            response.status,
            response.body_length,
            time,
        )

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)


def handler_args() -> dict[str, Any]:
    """Connection settings for `web.Application(handler_args=...)`; they win over whatever
    the runner (`run_app`, a test's `AppRunner`) passes, so every way of serving gets them."""
    return {
        "access_log_class": RedactingAccessLogger,
        "keepalive_timeout": IDLE_TIMEOUT_S,
        "lingering_time": LINGER_S,
    }
