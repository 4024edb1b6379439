"""The installable web app over HTTPS on a name other than localhost (issue 32, point 3): run with
BROWSER_HTTPS=1 (make browser-test's second run), where every test's server serves HTTPS only with
a certificate of a CA made for the run, at https://appshell.test (see conftest.py, `BrowserTLS`).

A service worker needs a secure context, and https://appshell.test is one only if Chromium trusts
the certificate: these tests check that it does, through the CA in its NSS database and nothing
else, and that the rest of the suite (which runs in this mode too) is not talking to localhost.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import urllib.parse

import pytest
from conftest import HTTPS, TLS_ADDRESS, TLS_HOST, App, start_chromium
from test_app import SPLASH_SECONDS, assert_no_console_errors, log_in
from test_webapp import WORKER_PATH, wait_for_worker

pytestmark = [
    pytest.mark.skipif(not HTTPS, reason="HTTPS on appshell.test: run with BROWSER_HTTPS=1"),
    pytest.mark.over_https,
]


def test_the_installable_app_works_over_https_on_a_name_other_than_localhost(app: App):
    """The page is at https://appshell.test:<port>, a secure context; the service worker registers
    and controls it; Chromium reports no installability error; the session cookie has the
    `__Host-` prefix and is Secure; the server sends HSTS."""
    log_in(app)
    location = app.driver.execute_script("return [location.protocol, location.hostname, location.port]")
    assert location == ["https:", TLS_HOST, str(app.server.port)], location
    assert app.driver.execute_script("return window.isSecureContext") is True

    wait_for_worker(app)
    worker = app.driver.execute_script("return navigator.serviceWorker.controller.scriptURL")
    assert urllib.parse.urlsplit(worker)[:2] == ("https", f"{TLS_HOST}:{app.server.port}"), worker
    assert urllib.parse.urlsplit(worker).path == WORKER_PATH, worker
    manifest = app.driver.execute_cdp_cmd("Page.getAppManifest", {})
    assert manifest.get("errors") == [] and manifest["url"].startswith(f"https://{TLS_HOST}:"), manifest
    errors = app.driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"]
    assert errors == [], f"installability errors: {errors}"

    cookies = app.driver.get_cookies()
    assert "__Host-appshell_session" in [cookie["name"] for cookie in cookies], cookies
    for cookie in cookies:
        # __Host-: Secure, Path=/, no Domain (a host-only cookie: its domain is the host itself).
        assert cookie["name"].startswith("__Host-"), cookie
        assert cookie["secure"] is True and cookie["path"] == "/" and cookie["domain"] == TLS_HOST, cookie
    assert app.state()["screen"] == "main", "the page's session is not the cookie's"

    answer = app.request("GET", "/main")
    assert answer.status == 200 and answer.headers.get("Strict-Transport-Security", "").startswith("max-age="), (
        answer.status,
        answer.headers,
    )
    assert_no_console_errors(app)


def test_the_certificate_is_trusted_only_through_the_test_ca(server, tmp_path):
    """The server presents its certificate and the CA's (a chain, not a self-signed leaf), valid
    for appshell.test and no other name; a Chromium with a HOME whose NSS database lacks the CA (and
    otherwise the same flags) gets a certificate error, so the suite's trust comes from that
    database, not from a relaxed check."""
    from conftest import TLS

    shown = subprocess.run(
        ["openssl", "s_client", "-connect", f"{TLS_ADDRESS}:{server.port}", "-servername", TLS_HOST,
         "-CAfile", str(TLS.ca), "-verify_hostname", TLS_HOST, "-verify_return_error", "-showcerts"],
        input="", capture_output=True, text=True, timeout=SPLASH_SECONDS,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("-----BEGIN CERTIFICATE-----") == 2, "the server did not send its chain"
    assert "Verify return code: 0 (ok)" in shown.stdout, shown.stdout[-500:]

    def handshake(context: ssl.SSLContext, name: str) -> None:
        with socket.create_connection((TLS_ADDRESS, server.port), timeout=SPLASH_SECONDS) as connection:
            with context.wrap_socket(connection, server_hostname=name):
                pass

    handshake(TLS.ssl_context(), TLS_HOST)
    with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
        handshake(TLS.ssl_context(), "other.test")
    # The system's roots do not know the CA (the chain's last certificate, self-signed).
    with pytest.raises(ssl.SSLCertVerificationError, match="self-signed certificate in certificate chain"):
        handshake(ssl.create_default_context(), TLS_HOST)

    untrusting = tmp_path / "home"
    untrusting.mkdir()
    driver = start_chromium(javascript=True, home=untrusting)
    try:
        app = App(driver, server, "untrusted-ca")
        app.open("/")
        app.wait(
            lambda d: "ERR_CERT_AUTHORITY_INVALID" in d.execute_script("return document.body?.innerText ?? ''"),
            "Chromium without the CA did not refuse the certificate",
        )
        assert driver.execute_script("return document.getElementById('screen')") is None
    finally:
        driver.quit()
