"""`doctor`'s report of what the server exposes where: for `serve` as configured and for
`serve --lan`, each address and port it would listen on, HTTP or HTTPS, and what protects it
(this machine only, the server token, paired devices); and the HTTPS certificate's owner,
names, addresses and expiry, read from its files without making or changing any.
"""

from __future__ import annotations

from typing import Any

from config import ConfigError, Settings


def exposure(settings: Settings) -> dict[str, Any]:
    """The network entry of the report; never raises. `ok` is False when `serve` (or
    `serve --lan`, where it is on) would refuse to start."""
    from bot.server import tls
    from bot.server.guard import check_bind, is_loopback

    server = settings.server
    token = "the server token" if server.token else ""
    plain: dict[str, Any] = {"scheme": "http", "listen": [f"{server.host}:{server.port}"]}
    if is_loopback(server.host):
        plain["protection"] = "this machine only" + (f", and {token}" if token else "")
    else:
        plain["protection"] = token or "nothing: serve refuses to start without server.token"
    lan_listen = [f"{a}:{server.port}" for a in ["127.0.0.1", *tls.lan_addresses()]]
    lan: dict[str, Any] = {
        "on": server.lan,
        "scheme": "https",
        "listen": lan_listen,
        "protection": "loopback: this machine; network addresses: paired devices"
        + (f" or {token}" if token else "")
        + "; plain HTTP there refused",
        "names": tls.machine_names(),
    }
    out: dict[str, Any] = {"ok": True, "serve": plain, "lan": lan}
    try:
        check_bind(settings)
    except ConfigError as exc:
        out.update(ok=False, error=str(exc))
    cert = tls.describe(settings)
    out["certificate"] = cert
    if server.lan and not cert.get("ok", False):
        out.update(ok=False, error=cert.get("error", "the HTTPS certificate cannot be used"))
    return out


def print_exposure(entry: dict[str, Any]) -> None:
    """The network lines of the text report (the caller printed the heading)."""
    plain, lan, cert = entry["serve"], entry["lan"], entry["certificate"]
    if lan["on"]:
        print(f"  serve:       https:// on {', '.join(lan['listen'])} (server.lan is on)")
        print(f"               protected by: {lan['protection']}")
    else:
        print(f"  serve:       {plain['scheme']}://{', '.join(plain['listen'])}")
        print(f"               protected by: {plain['protection']}")
        print(f"  serve --lan: would serve https:// on {', '.join(lan['listen'])}")
        print(f"               protected by: {lan['protection']}")
    if cert.get("error"):
        print(f"  certificate: {cert['error']}")
    elif cert.get("cert") is None:
        print(f"  certificate: {cert.get('why', 'none')}")
    else:
        whose = "your own (server.tls_cert)" if cert["own"] else "Annie's own authority"
        print(f"  certificate: {cert['cert']}, from {whose}")
        renews = f"; renews {cert['renews']}" if cert.get("renews") else ""
        print(f"               expires {cert['expires']} ({cert['days_left']} days{renews})")
        print(f"               names: {', '.join(cert['names'] + cert['addresses'])}")
        if cert.get("ca_fingerprint"):
            print(f"               authority SHA-256: {cert['ca_fingerprint']}")
    if entry.get("error") and entry["error"] != cert.get("error"):
        print(f"  error:       {entry['error']}")
