"""Annie's own HTTPS: a small certificate authority kept in `$ANNIE_HOME/tls/`, the server
certificate it signs for this machine's names and addresses, or a pair of the user's own.

A browser lends a page its microphone only in a secure context, so a phone on the home
network needs HTTPS, and HTTPS needs a certificate the phone trusts. Annie makes an authority
once (ten years), which the person trusts once per device, and signs with it a server
certificate for localhost, the loopback addresses, the machine's host name and `NAME.local`,
every non-loopback IPv4 address of its interfaces and `server.allowed_hosts`. That certificate
lasts about a year and is made again on a start when fewer than `RENEW_BEFORE` remain or when
the names and addresses it must cover have changed (a new address from the router). The
authority carries name constraints: it can vouch only for local names and private addresses,
so a stolen authority key cannot impersonate anyone's bank to a phone that trusts it.

Private keys are written by the owner for the owner (mode 0600, set when the file is created).
`server.tls_cert` and `server.tls_key` replace all of this with the user's own files. The
X.509 itself (the authority, its name constraints, signing, the files' format) is
`bot.server.certs`; this module decides what to cover, where it is kept and when it is renewed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import logging
import re
import socket
import ssl
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature

from bot.server.certs import (
    Identity,
    IPAddress,
    covered,
    fingerprint,
    issue_server,
    load,
    make_authority,
    now_utc,
    permits,
    save,
)
from config import ConfigError, Settings

log = logging.getLogger(__name__)

RENEW_BEFORE = dt.timedelta(days=30)
CA_CERT, CA_KEY, SERVER_CERT, SERVER_KEY = "ca.crt", "ca.key", "server.crt", "server.key"

_DNS_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
_SIOCGIFADDR = 0x8915  # Linux: the IPv4 address of one interface


# --- what this machine is called on the network ------------------------------------------


def lan_addresses() -> list[str]:
    """Every non-loopback, non-link-local IPv4 address of this machine's interfaces."""
    found: list[str] = []
    for text in _interface_addresses() or _resolver_addresses():
        ip = ipaddress.ip_address(text)
        usable = not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)
        if ip.version == 4 and usable and text not in found:
            found.append(text)
    return found


def _interface_addresses() -> list[str]:
    """Linux: ask the kernel for each interface's address (no subprocess, no extra package)."""
    try:
        import fcntl
    except ImportError:  # not a Unix
        return []
    if not hasattr(socket, "if_nameindex"):
        return []
    out: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)
            except OSError:  # down, or no IPv4 address
                continue
            out.append(socket.inet_ntoa(answer[20:24]))
    return out


def _resolver_addresses() -> list[str]:
    """Elsewhere: what the host name resolves to, and the address a route out would use."""
    out: list[str] = []
    with contextlib.suppress(OSError):
        out += socket.gethostbyname_ex(socket.gethostname())[2]
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.255.255.255", 9))  # UDP: chooses a route, sends nothing
        out.append(str(s.getsockname()[0]))
    return out


def machine_names() -> list[str]:
    """The host name and its mDNS spelling (`NAME.local`), lowercase, valid DNS names only."""
    host = socket.gethostname().lower().rstrip(".")
    names = [host, host.split(".", 1)[0] + ".local"]
    return [n for i, n in enumerate(names) if _DNS_NAME.match(n) and n not in names[:i]]


def identity(settings: Settings, addresses: list[str] | None = None) -> Identity:
    """What this server answers to: loopback, the machine's names, its LAN addresses (or
    `addresses`), and `server.allowed_hosts` (ports dropped)."""
    names = {"localhost", *machine_names()}
    ips: set[IPAddress] = {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}
    for text in lan_addresses() if addresses is None else addresses:
        ips.add(ipaddress.ip_address(text))
    for entry in settings.server.allowed_hosts:
        name = _host_of(entry)
        try:
            ips.add(ipaddress.ip_address(name))
        except ValueError:
            if _DNS_NAME.match(name):
                names.add(name)
    return Identity(tuple(sorted(names)), tuple(sorted(str(ip) for ip in ips)))


def _host_of(entry: str) -> str:
    """`name:port`, `[v6]:port` or a bare name → the name, lowercase."""
    entry = entry.strip().lower()
    if entry.startswith("["):
        return entry[1 : entry.find("]")] if "]" in entry else entry
    return entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry


# --- the files, kept and renewed ------------------------------------------------------------


def tls_dir(settings: Settings) -> Path:
    return settings.home_path / "tls"


def _fresh(cert: x509.Certificate, now: dt.datetime) -> bool:
    return cert.not_valid_after_utc - now >= RENEW_BEFORE


@dataclass(frozen=True)
class Certificates:
    """The files a server uses; `ca` is None for the user's own pair."""

    cert: Path
    key: Path
    ca: Path | None


def ensure(
    settings: Settings, ident: Identity | None = None, now: dt.datetime | None = None
) -> Certificates:
    """The certificate and key to serve: the user's own, else Annie's, made or renewed as
    needed (see the module docstring) and otherwise reused as they are."""
    own = user_pair(settings)
    if own is not None:
        return own
    ident = ident or identity(settings)
    now = now or now_utc()
    folder = tls_dir(settings)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    ca_cert, ca_key = folder / CA_CERT, folder / CA_KEY
    authority = load(ca_cert, ca_key)
    if authority is None or not _fresh(authority.cert, now) or not permits(authority.cert, ident):
        if authority is not None:
            log.warning(
                "made a new certificate authority in %s: devices that trusted the old one must "
                "trust this one (its certificate is at /annie-ca.crt)",
                folder,
            )
        authority = make_authority(ident, now)
        save(authority, ca_cert, ca_key)
    cert_path, key_path = folder / SERVER_CERT, folder / SERVER_KEY
    server = load(cert_path, key_path)
    if server is None or not _current(server.cert, authority.cert, ident, now):
        save(issue_server(authority, ident, now), cert_path, key_path, chain=authority.cert)
    return Certificates(cert_path, key_path, ca_cert)


def _current(
    cert: x509.Certificate, authority: x509.Certificate, ident: Identity, now: dt.datetime
) -> bool:
    try:
        cert.verify_directly_issued_by(authority)
    except (ValueError, TypeError, InvalidSignature):  # signed by another authority
        return False
    return _fresh(cert, now) and covered(cert) == ident


def user_pair(settings: Settings) -> Certificates | None:
    """`server.tls_cert` and `server.tls_key`, checked; None when neither is set."""
    cert_text, key_text = settings.server.tls_cert, settings.server.tls_key
    if not cert_text and not key_text:
        return None
    if not cert_text or not key_text:
        missing = "server.tls_cert" if not cert_text else "server.tls_key"
        raise ConfigError(f"{missing} is not set; a certificate of your own needs both files")
    paths = Path(cert_text).expanduser(), Path(key_text).expanduser()
    for setting, path in zip(("server.tls_cert", "server.tls_key"), paths, strict=True):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{setting}: cannot read {path}: {exc.strerror or exc}") from exc
        if b"-----BEGIN" not in data:
            raise ConfigError(f"{setting}: {path} is not a PEM file")
    return Certificates(paths[0], paths[1], None)


def server_context(settings: Settings, ident: Identity | None = None) -> ssl.SSLContext:
    """The `ssl.SSLContext` every HTTPS listener uses (TLS 1.2 and newer), its certificate
    covering `ident` (default: `identity(settings)`)."""
    files = ensure(settings, ident)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(files.cert, files.key)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"cannot serve HTTPS with {files.cert} and {files.key}: {exc}") from exc
    return context


# --- what the trust page, the download and doctor show -------------------------------------


def authority_pem(settings: Settings) -> bytes | None:
    """Annie's authority certificate (PEM; never the key), or None with the user's own pair
    or before the first HTTPS start."""
    if user_pair(settings) is not None:
        return None
    try:
        return (tls_dir(settings) / CA_CERT).read_bytes()
    except OSError:
        return None


def describe(settings: Settings) -> dict[str, Any]:
    """What is served over HTTPS, read from the files without making any: whose certificate,
    its names, addresses and expiry, and the authority's fingerprint."""
    try:
        own = user_pair(settings)
    except ConfigError as exc:
        return {"ok": False, "error": str(exc)}
    files = own or Certificates(
        tls_dir(settings) / SERVER_CERT, tls_dir(settings) / SERVER_KEY, tls_dir(settings) / CA_CERT
    )
    out: dict[str, Any] = {"own": own is not None, "cert": str(files.cert), "ok": True}
    if own is None and not files.cert.exists():
        out.update(cert=None, why="none yet: made on the first HTTPS start (serve --lan)")
        return out
    try:
        cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
    except (OSError, ValueError) as exc:
        out.update(ok=False, error=f"cannot read {files.cert}: {exc}")
        return out
    left = cert.not_valid_after_utc - now_utc()
    names = covered(cert)
    out.update(
        names=list(names.names),
        addresses=list(names.addresses),
        expires=cert.not_valid_after_utc.isoformat(timespec="seconds"),
        days_left=left.days,
    )
    if files.ca is not None:
        ca = authority_pem(settings)
        out["ca_fingerprint"] = fingerprint(ca) if ca else None
        out["renews"] = "on a start with fewer than 30 days left, or new names or addresses"
    return out
