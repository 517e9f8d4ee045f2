"""Annie's certificates on real files: made once and reused, renewed near expiry or when the
machine's addresses change, private keys 0600 from creation, the server certificate verified
by Python's own ssl module against the authority (and the authority unable to vouch for a
name beyond the home network), and a certificate of the user's own used instead."""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import re
import socket
import ssl
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from bot.server import certs, tls
from bot.server.guard import check_bind
from config import ConfigError, Settings, load_settings


@pytest.fixture
def settings(annie_home: Path) -> Settings:
    return load_settings()


def lan_address() -> str:
    """The address the server would bind (the same function `serve --lan` uses)."""
    found = tls.lan_addresses()
    assert found, "this machine has no non-loopback IPv4 address to test with"
    return found[0]


def handshake(ca: Path, cert: Path, key: Path, name: str) -> None:
    """A TLS handshake in memory: Python's ssl client trusting only `ca`, checking `name`
    (a host name or an IP address), against a server with `cert` and `key`."""
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(ca))
    client_ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    client = client_ctx.wrap_bio(c_in, c_out, server_hostname=name)
    server = server_ctx.wrap_bio(s_in, s_out, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):
        for side, obj in (("client", client), ("server", server)):
            if done[side]:
                continue
            try:
                obj.do_handshake()
                done[side] = True
            except ssl.SSLWantReadError:
                pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if all(done.values()):
            return
    raise AssertionError("the handshake did not finish")


def files(settings: Settings) -> dict[str, bytes]:
    folder = tls.tls_dir(settings)
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_made_once_reused_and_the_keys_are_the_owners_alone(settings: Settings) -> None:
    made = tls.ensure(settings)
    first = files(settings)
    assert sorted(first) == ["ca.crt", "ca.key", "server.crt", "server.key"]
    folder = tls.tls_dir(settings)
    for name in ("ca.key", "server.key"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0
    assert b"PRIVATE KEY" not in first["ca.crt"] + first["server.crt"]
    # The server presents its authority after its own certificate.
    assert first["server.crt"].count(b"BEGIN CERTIFICATE") == 2
    assert first["server.crt"].endswith(first["ca.crt"])

    again = tls.ensure(settings)  # the next start
    assert again == made and files(settings) == first

    ca = x509.load_pem_x509_certificate(first["ca.crt"])
    basic = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert basic.critical and basic.value.ca and basic.value.path_length == 0
    usage = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and not usage.digital_signature
    life = ca.not_valid_after_utc - ca.not_valid_before_utc
    assert dt.timedelta(days=3640) < life < dt.timedelta(days=3660)
    server = x509.load_pem_x509_certificate(first["server.crt"])
    life = server.not_valid_after_utc - server.not_valid_before_utc
    assert dt.timedelta(days=360) < life < dt.timedelta(days=370)
    covered = certs.covered(server)
    host = socket.gethostname().lower()
    assert {"localhost", host, host.split(".")[0] + ".local"} <= set(covered.names)
    assert {"127.0.0.1", "::1", lan_address()} <= set(covered.addresses)


def test_the_server_certificate_verifies_for_loopback_and_the_lan_address(
    settings: Settings,
) -> None:
    made = tls.ensure(settings)
    assert made.ca is not None
    for name in ("127.0.0.1", lan_address(), "localhost", "::1"):
        handshake(made.ca, made.cert, made.key, name)
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        handshake(made.ca, made.cert, made.key, "annie.example.com")
    # Another machine's authority is not this one.
    other = certs.make_authority(tls.identity(settings))
    other_ca = tls.tls_dir(settings) / "other.crt"
    other_ca.write_bytes(other.cert.public_bytes(serialization.Encoding.PEM))
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
        handshake(other_ca, made.cert, made.key, "127.0.0.1")


def test_the_authority_cannot_vouch_for_a_name_beyond_the_home_network(
    settings: Settings, tmp_path: Path
) -> None:
    made = tls.ensure(settings)
    assert made.ca is not None
    authority = certs.load(made.ca, tls.tls_dir(settings) / tls.CA_KEY)
    assert authority is not None
    # Even with the authority's key, a certificate for a bank or a public address fails.
    for ident, name in (
        (certs.Identity(("bank.example.com",), ()), "bank.example.com"),
        (certs.Identity((), ("8.8.8.8",)), "8.8.8.8"),
    ):
        forged = certs.issue_server(authority, ident)
        certs.save(forged, tmp_path / "forged.crt", tmp_path / "forged.key")
        with pytest.raises(ssl.SSLCertVerificationError, match="permitted subtree violation"):
            handshake(made.ca, tmp_path / "forged.crt", tmp_path / "forged.key", name)
    # A private address the machine does not have yet (a new lease) is within its reach.
    fine = certs.issue_server(authority, certs.Identity(("vm.local",), ("192.168.77.5",)))
    certs.save(fine, tmp_path / "fine.crt", tmp_path / "fine.key")
    handshake(made.ca, tmp_path / "fine.crt", tmp_path / "fine.key", "192.168.77.5")


def test_renewed_when_close_to_expiry_and_the_authority_is_kept(settings: Settings) -> None:
    made = tls.ensure(settings)
    authority = certs.load(tls.tls_dir(settings) / tls.CA_CERT, tls.tls_dir(settings) / tls.CA_KEY)
    assert authority is not None
    ident = tls.identity(settings)
    short = certs.issue_server(authority, ident, days=10)
    certs.save(short, made.cert, made.key)
    before = files(settings)

    tls.ensure(settings)
    after = files(settings)
    assert after["ca.crt"] == before["ca.crt"] and after["ca.key"] == before["ca.key"]
    assert after["server.crt"] != before["server.crt"]
    assert after["server.key"] != before["server.key"]  # a fresh key with the new certificate
    renewed = x509.load_pem_x509_certificate(after["server.crt"])
    left = renewed.not_valid_after_utc - dt.datetime.now(dt.UTC)
    assert left > dt.timedelta(days=360)
    assert stat.S_IMODE(made.key.stat().st_mode) == 0o600
    assert made.ca is not None
    handshake(made.ca, made.cert, made.key, lan_address())

    # 40 days left is still good: kept as it is.
    certs.save(certs.issue_server(authority, ident, days=40), made.cert, made.key)
    kept = files(settings)
    tls.ensure(settings)
    assert files(settings) == kept


def test_renewed_when_the_names_it_must_cover_change(settings: Settings) -> None:
    tls.ensure(settings)
    first = files(settings)
    new_lease = [lan_address(), "10.20.30.40"]
    tls.ensure(settings, tls.identity(settings, new_lease))
    second = files(settings)
    assert second["ca.crt"] == first["ca.crt"]  # a private address: the same authority
    assert second["server.crt"] != first["server.crt"]
    cert = x509.load_pem_x509_certificate(second["server.crt"])
    assert "10.20.30.40" in certs.covered(cert).addresses


def test_a_name_beyond_the_authority_makes_a_new_one_and_says_so(
    annie_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tls.ensure(load_settings())
    first = files(load_settings())
    wider = load_settings(server={"allowed_hosts": ["annie.example.com:443"]})
    with caplog.at_level(logging.WARNING, logger="bot.server.tls"):
        made = tls.ensure(wider)
    assert "new certificate authority" in caplog.text and "trust this one" in caplog.text
    assert files(wider)["ca.crt"] != first["ca.crt"]
    assert made.ca is not None
    handshake(made.ca, made.cert, made.key, "annie.example.com")


def test_broken_or_mismatched_files_are_made_again(settings: Settings) -> None:
    made = tls.ensure(settings)
    made.cert.write_text("not a certificate")
    tls.ensure(settings)
    assert made.ca is not None
    handshake(made.ca, made.cert, made.key, "127.0.0.1")
    # A key that is not the certificate's (a half-finished write) is not used either.
    other = certs.issue_server(certs.make_authority(tls.identity(settings)), tls.identity(settings))
    key_pem = other.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    made.key.write_bytes(key_pem)
    tls.ensure(settings)
    handshake(made.ca, made.cert, made.key, "127.0.0.1")


def test_the_users_own_certificate_replaces_annies(annie_home: Path, tmp_path: Path) -> None:
    theirs = certs.make_authority(certs.Identity(("annie.home.arpa",), ()))
    pair = certs.issue_server(theirs, certs.Identity(("annie.home.arpa",), ("127.0.0.1",)))
    cert, key = tmp_path / "mine.crt", tmp_path / "mine.key"
    certs.save(pair, cert, key)
    ca = tmp_path / "mine-ca.crt"
    ca.write_bytes(theirs.cert.public_bytes(serialization.Encoding.PEM))

    settings = load_settings(server={"tls_cert": str(cert), "tls_key": str(key)})
    used = tls.ensure(settings)
    assert (used.cert, used.key, used.ca) == (cert, key, None)
    assert not tls.tls_dir(settings).exists()  # Annie made nothing of her own
    assert tls.authority_pem(settings) is None
    context = tls.server_context(settings)
    assert isinstance(context, ssl.SSLContext)
    handshake(ca, cert, key, "annie.home.arpa")
    described = tls.describe(settings)
    assert described["own"] and described["names"] == ["annie.home.arpa"]


def test_a_missing_or_unreadable_certificate_of_ones_own_is_an_error_naming_it(
    annie_home: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere.crt"
    key = tmp_path / "k.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    with pytest.raises(ConfigError, match=re.escape(f"server.tls_cert: cannot read {missing}")):
        tls.server_context(load_settings(server={"tls_cert": str(missing), "tls_key": str(key)}))
    with pytest.raises(ConfigError, match=re.escape(f"server.tls_key: cannot read {tmp_path}")):
        tls.ensure(load_settings(server={"tls_cert": str(key), "tls_key": str(tmp_path)}))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ConfigError, match="is not a PEM file"):
        tls.ensure(load_settings(server={"tls_cert": str(text), "tls_key": str(key)}))
    with pytest.raises(ConfigError, match=r"server\.tls_key is not set"):
        tls.ensure(load_settings(server={"tls_cert": str(key)}))
    # PEM on the outside, nonsense inside: the context says which files it could not use.
    with pytest.raises(ConfigError, match="cannot serve HTTPS with"):
        tls.server_context(load_settings(server={"tls_cert": str(key), "tls_key": str(key)}))


def test_lan_addresses_are_this_machines_and_the_bind_rule_with_lan(annie_home: Path) -> None:
    for text in tls.lan_addresses():
        ip = ipaddress.ip_address(text)
        assert ip.version == 4 and not ip.is_loopback and not ip.is_link_local
        with socket.socket() as s:  # an address of this machine: it can be bound
            s.bind((text, 0))
    check_bind(load_settings(server={"lan": True}))  # no token: pairing guards the network
    with pytest.raises(ConfigError, match="--lan"):
        check_bind(load_settings(server={"lan": True, "host": "0.0.0.0", "token": "t"}))
