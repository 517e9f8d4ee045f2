"""`doctor`'s network entry: where `serve` and `serve --lan` listen, HTTP or HTTPS, what
protects each, and the certificate's names and expiry, read from real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands.doctor_network import exposure, print_exposure
from bot.server import tls
from config import load_settings


def test_plain_serve_is_this_machine_only_and_lan_is_described(
    annie_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = exposure(load_settings())
    assert entry["ok"] is True
    assert entry["serve"] == {
        "scheme": "http",
        "listen": ["127.0.0.1:8765"],
        "protection": "this machine only",
    }
    assert entry["lan"]["on"] is False and entry["lan"]["scheme"] == "https"
    assert entry["lan"]["listen"] == [f"{a}:8765" for a in ["127.0.0.1", *tls.lan_addresses()]]
    assert "paired devices" in entry["lan"]["protection"]
    assert entry["certificate"]["cert"] is None  # nothing made by looking
    assert not tls.tls_dir(load_settings()).exists()
    print_exposure(entry)
    out = capsys.readouterr().out
    assert "http://127.0.0.1:8765" in out and "serve --lan: would serve https://" in out
    assert "none yet" in out


def test_lan_reports_the_certificate_and_a_bad_one_of_ones_own_fails(
    annie_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings(server={"lan": True, "token": "t"})
    tls.ensure(settings)
    entry = exposure(settings)
    cert = entry["certificate"]
    assert entry["ok"] is True and entry["lan"]["on"] is True
    assert "or the server token" in entry["lan"]["protection"]
    assert cert["own"] is False and 360 <= cert["days_left"] <= 366
    assert "localhost" in cert["names"] and "127.0.0.1" in cert["addresses"]
    assert cert["ca_fingerprint"].count(":") == 31
    print_exposure(entry)
    out = capsys.readouterr().out
    assert "https:// on 127.0.0.1:8765" in out and "Annie's own authority" in out
    assert cert["ca_fingerprint"] in out and "expires" in out

    missing = tmp_path / "gone.crt"
    bad = exposure(load_settings(server={"lan": True, "tls_cert": str(missing), "tls_key": "k"}))
    assert bad["ok"] is False and str(missing) in bad["error"]
    # A network address without --lan and without a token: serve would refuse.
    open_bind = exposure(load_settings(server={"host": "0.0.0.0"}))
    assert open_bind["ok"] is False and "server.token" in open_bind["error"]
