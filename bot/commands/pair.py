"""`python -m bot pair`: a pairing code and its QR code in the terminal, for a machine with no
screen of its own.

Codes live in the running server's memory, so this asks the server on this machine for one,
the way Annie's own page does: over loopback (which the server treats as its owner), with the
server token when one is set. It tries the scheme the settings say (`server.lan` serves
HTTPS) and then the other; HTTPS is checked against Annie's own authority. `--url` names
the server when it listens elsewhere.
"""

from __future__ import annotations

import argparse
import ssl
import sys
from typing import Any

HELP = "print a one-time pairing code and its QR code for a new phone or laptop"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", help="the running server's address (default: this machine, server.port)"
    )
    parser.add_argument("--no-qr", action="store_true", help="print the code and address only")


def _tls(settings: Any) -> ssl.SSLContext:
    from bot.server.tls import CA_CERT, tls_dir

    context = ssl.create_default_context()
    authority = tls_dir(settings) / CA_CERT
    if authority.exists():
        context.load_verify_locations(cafile=str(authority))
    return context


def run(args: argparse.Namespace) -> int:
    import httpx

    from bot.server.guard import TOKEN_HEADER
    from bot.server.pairing import qr_text
    from config import load_settings

    settings = load_settings()
    port = settings.server.port
    schemes = ["https", "http"] if settings.server.lan else ["http", "https"]
    urls = [args.url.rstrip("/")] if args.url else [f"{s}://127.0.0.1:{port}" for s in schemes]
    headers = {TOKEN_HEADER: settings.server.token} if settings.server.token else {}
    errors: list[str] = []
    for base in urls:
        try:
            with httpx.Client(verify=_tls(settings), timeout=10.0) as http:
                response = http.post(f"{base}/api/pairing-code", headers=headers)
        except httpx.HTTPError as exc:
            errors.append(f"{base}: {exc or type(exc).__name__}")
            continue
        try:
            data = response.json()
        except ValueError:
            data = {}
        if response.status_code != 200 or not isinstance(data, dict) or "code" not in data:
            # Not necessarily the last word: an HTTPS server answers plain HTTP with a 400.
            why = data.get("reason") if isinstance(data, dict) else None
            errors.append(f"{base} refused: {why or f'HTTP {response.status_code}'}")
            continue
        if not args.no_qr:
            print(qr_text(data["url"]))
        print(f"Pairing code: {data['code']}  (one use; expires at {data['expires_at']})")
        print(f"On the phone or laptop, open {data['url']}")
        print("(or scan the QR code above) and type the code with a name for the device.")
        return 0
    refused = any(" refused: " in e for e in errors)
    print(
        (
            "error: Annie's server gave no pairing code:"
            if refused
            else "error: cannot reach Annie's server on this machine; start it first "
            "(./start.sh, or ./start.sh --lan for phones), or pass --url."
        )
        + "\n  "
        + "\n  ".join(errors),
        file=sys.stderr,
    )
    return 1
