"""X.509 for Annie's HTTPS, with `cryptography`: a certificate authority limited by name
constraints to the home network, the server certificates it signs, and the files they live in.

`make_authority` makes a CA (CA:true, path length 0, certificate signing only) that may vouch
only for local names (`localhost`, `.local`, the names it was made for) and private address
ranges, plus the addresses it was made for; so a phone that trusts it trusts it for nothing on
the internet, even if its key were stolen. `issue_server` signs a server certificate for an
`Identity`. `save` writes a key with mode 0600 from the moment the file exists, whole or not at
all. Where the files are kept and when they are renewed is `bot.server.tls`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
SERVER_DAYS = 365

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# What the authority may vouch for besides the names it was made for: the address ranges a
# home network uses (private, carrier-grade NAT as on Tailscale, link-local, loopback).
PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "127.0.0.0/8",
        "::1/128",
        "fc00::/7",
        "fe80::/10",
    )
)


@dataclass(frozen=True)
class Identity:
    """The names and addresses a server certificate must cover, sorted."""

    names: tuple[str, ...]
    addresses: tuple[str, ...]


@dataclass
class Signed:
    """A private key and its certificate."""

    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def make_authority(ident: Identity, now: dt.datetime | None = None) -> Signed:
    """A new authority: CA:true with path length 0, certificate signing only, limited by name
    constraints to local names, private ranges and `ident`'s own addresses."""
    now = now or now_utc()
    key = ec.generate_private_key(ec.SECP256R1())
    host = socket.gethostname()
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, f"Annie local authority on {host}"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, f"Annie ({now:%Y-%m-%d})"),
        ]
    )
    networks = list(PRIVATE_NETWORKS)
    for text in ident.addresses:
        ip = ipaddress.ip_address(text)
        if not any(ip in net for net in networks if net.version == ip.version):
            networks.append(ipaddress.ip_network(f"{ip}/{ip.max_prefixlen}"))
    permitted: list[x509.GeneralName] = [
        x509.DNSName(n) for n in sorted({"localhost", "local", *ident.names})
    ]
    permitted += [x509.IPAddress(net) for net in networks]
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .add_extension(x509.NameConstraints(permitted, None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Signed(key, cert)


def issue_server(
    authority: Signed, ident: Identity, now: dt.datetime | None = None, days: int = SERVER_DAYS
) -> Signed:
    """A server certificate for `ident`'s names and addresses, signed by `authority`, valid
    for `days` from `now`."""
    now = now or now_utc()
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = [x509.DNSName(n) for n in ident.names]
    alt += [x509.IPAddress(ipaddress.ip_address(a)) for a in ident.addresses]
    subject = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"Annie on {socket.gethostname()}")]
    )
    ca_key = authority.cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(authority.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_key), critical=False
        )
        .sign(authority.key, hashes.SHA256())
    )
    return Signed(key, cert)


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def covered(cert: x509.Certificate) -> Identity:
    """The names and addresses a server certificate covers (its subject alternative names)."""
    try:
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return Identity((), ())
    ips = sorted(str(ip) for ip in alt.get_values_for_type(x509.IPAddress))
    return Identity(tuple(sorted(alt.get_values_for_type(x509.DNSName))), tuple(ips))


def permits(authority: x509.Certificate, ident: Identity) -> bool:
    """The authority's name constraints allow every name and address of `ident`."""
    try:
        nc = authority.extensions.get_extension_for_class(x509.NameConstraints).value
    except x509.ExtensionNotFound:
        return True
    allowed = nc.permitted_subtrees or []
    dns = [g.value for g in allowed if isinstance(g, x509.DNSName)]
    nets = [
        g.value
        for g in allowed
        if isinstance(g, x509.IPAddress)
        and isinstance(g.value, ipaddress.IPv4Network | ipaddress.IPv6Network)
    ]
    names_ok = all(any(n == d or n.endswith("." + d) for d in dns) for n in ident.names)
    ips = [ipaddress.ip_address(a) for a in ident.addresses]
    return names_ok and all(
        any(ip in net for net in nets if net.version == ip.version) for ip in ips
    )


def _write(path: Path, data: bytes, mode: int) -> None:
    """Written whole or not at all; the mode is the new file's from its creation, so a key is
    never readable by others, not even for an instant."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save(
    signed: Signed, cert_path: Path, key_path: Path, chain: x509.Certificate | None = None
) -> None:
    """The key (0600) and the certificate, with `chain` (its authority) after it: a client
    that trusts the authority then finds it in what the server presents."""
    key = signed.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    _write(key_path, key, 0o600)
    pem = signed.cert.public_bytes(serialization.Encoding.PEM)
    if chain is not None:
        pem += chain.public_bytes(serialization.Encoding.PEM)
    _write(cert_path, pem, 0o644)


def load(cert_path: Path, key_path: Path) -> Signed | None:
    """A saved pair, or None when either file is missing, unreadable or does not match."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or _spki(key.public_key()) != _spki(
        cert.public_key()
    ):
        return None
    return Signed(key, cert)


def _spki(public: Any) -> bytes:
    return bytes(
        public.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def fingerprint(pem: bytes) -> str:
    """SHA-256 of the certificate, as browsers and phones show it (AB:CD:...)."""
    digest = (
        hashlib.sha256(x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER))
        .hexdigest()
        .upper()
    )
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))
