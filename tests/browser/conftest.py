"""Fixtures and helpers for the real-browser tests (docs/browser-contract.md).

Each test gets its own `appshell` process (the built binary, port 0, in-memory store) and its own
headless Chromium profile, so sessions, cookies and the login rate limit never leak between tests.
The binary comes from `APPSHELL_BINARY` (`make browser-test` sets it), else `.build/debug/appshell`.

Two modes rerun tests through another topology: `BROWSER_SCALEOUT=1` (two instances on Redis
behind nginx, see `ScaleOutServer`) the tests marked `scaled_out`, and `BROWSER_HTTPS=1` (each
server serves HTTPS only, on the name appshell.test, with a certificate of a CA made for the run
that Chromium trusts through its NSS database, see `BrowserTLS`) those marked `over_https`.
"""

from __future__ import annotations

import glob
import http.client
import http.cookiejar
import json
import os
import queue
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from axe_core_python.base import AXE_SCRIPT
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO_ROOT / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

#: The URL path of each screen (docs/browser-contract.md, "URLs"); the splash renders at any URL.
SCREEN_PATHS = {"login": "/login", "main": "/main", "list": "/main/list", "second": "/main/second"}

#: The demo user shipped in config.json.
USERNAME = "demo"
PASSWORD = "appshell"

#: Generous timeouts for a busy 2-core machine (CI may run at a load average of 10-20); they are
#: upper bounds only: waits return as soon as their condition holds, so passing runs never wait
#: for them, and a condition that never holds still fails the test.
WAIT_SECONDS = 60
START_SECONDS = 60
STOP_SECONDS = 30


# --- HTTPS on a name other than localhost (BROWSER_HTTPS=1) -----------------------------------

#: Whether each test's server serves HTTPS on `TLS_HOST` (`make browser-test`'s second run).
HTTPS = os.environ.get("BROWSER_HTTPS") == "1"
#: The name the browser and the test clients use for the server under `BROWSER_HTTPS`: not
#: localhost, so the page is a secure context only because its certificate is trusted. `.test` is
#: reserved (RFC 2606): it never resolves; Chromium maps it with a host-resolver rule, the test
#: clients with `MappedHTTPSConnection` below.
TLS_HOST = "appshell.test"
#: Where `TLS_HOST` is reached.
TLS_ADDRESS = "127.0.0.1"

_CA_EXTENSIONS = """\
[req]
distinguished_name = subject
prompt = no
[subject]
CN = AppShell browser test CA
[ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:{host}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


class BrowserTLS:
    """For `BROWSER_HTTPS=1`: made once per run in a folder of its own (removed at the end).

    - `ca`: a CA certificate (P-256, 2 days) made by Debian's openssl; its key signs one server
      certificate for `DNS:appshell.test` and is then deleted;
    - `certificate`: the server's chain, its certificate then the CA's; `key`: its key;
    - `home`: the HOME of every Chromium (and chromedriver): Chromium on Linux takes the
      certificates it trusts beyond its root store from the NSS database `$HOME/.pki/nssdb`, and
      this one (made by certutil, libnss3-tools) holds the CA as trusted for TLS servers ("C,,").
      No flag tells Chromium to skip or relax certificate checks.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ca = folder / "ca.pem"
        self.certificate = folder / "server-chain.pem"
        self.key = folder / "server.key"
        self.home = folder / "home"
        config = folder / "openssl.cnf"
        config.write_text(_CA_EXTENSIONS.format(host=TLS_HOST), encoding="utf-8")
        ca_key, request, leaf = folder / "ca.key", folder / "server.csr", folder / "server.pem"
        curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        self._run("openssl", "req", "-x509", *curve, "-days", "2", "-config", config, "-extensions", "ca",
                  "-keyout", ca_key, "-out", self.ca)
        self._run("openssl", "req", "-new", *curve, "-subj", f"/CN={TLS_HOST}", "-keyout", self.key, "-out", request)
        serial = "0x" + os.urandom(16).hex()
        self._run("openssl", "x509", "-req", "-in", request, "-CA", self.ca, "-CAkey", ca_key, "-set_serial", serial,
                  "-days", "2", "-extfile", config, "-extensions", "server", "-out", leaf)
        self.certificate.write_text(leaf.read_text() + self.ca.read_text())
        for made in (ca_key, request, leaf, config):
            made.unlink()
        nssdb = self.home / ".pki" / "nssdb"
        nssdb.mkdir(parents=True)
        self._run("certutil", "-N", "-d", f"sql:{nssdb}", "--empty-password")
        self._run("certutil", "-A", "-d", f"sql:{nssdb}", "-t", "C,,", "-n", "appshell-test-ca", "-i", self.ca)

    @staticmethod
    def _run(*command) -> None:
        done = subprocess.run([str(part) for part in command], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, command))} failed ({done.returncode}): {done.stderr}")

    def server_environment(self) -> dict[str, str]:
        """What makes an appshell serve HTTPS with this chain and answer for `TLS_HOST`."""
        return {
            "APPSHELL_TLS_CERTIFICATE_PATH": str(self.certificate),
            "APPSHELL_TLS_KEY_PATH": str(self.key),
            "APPSHELL_ALLOWED_HOSTS": TLS_HOST,
        }

    def ssl_context(self) -> ssl.SSLContext:
        """Verifies the server's certificate and its name against this run's CA alone."""
        return ssl.create_default_context(cafile=str(self.ca))


#: Made in `pytest_configure` under `BROWSER_HTTPS=1`, else None.
TLS: BrowserTLS | None = None


class MappedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to `TLS_HOST` made at `TLS_ADDRESS` (what Chromium's host-resolver
    rule does for the browser); the name sent (SNI) and checked against the certificate is still
    the URL's."""

    def __init__(self, *args, context: ssl.SSLContext, **kwargs) -> None:
        super().__init__(*args, context=context, **kwargs)
        self.tls_context = context

    def connect(self) -> None:
        address = TLS_ADDRESS if self.host == TLS_HOST else self.host
        connection = socket.create_connection((address, self.port), self.timeout, self.source_address)
        try:
            self.sock = self.tls_context.wrap_socket(connection, server_hostname=self.host)
        except BaseException:
            connection.close()
            raise


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__(context=context)
        self.tls_context = context

    def https_open(self, request):
        return self.do_open(MappedHTTPSConnection, request, context=self.tls_context)


def url_opener(*handlers: urllib.request.BaseHandler) -> urllib.request.OpenerDirector:
    """urllib's opener with `handlers`: how every test speaks to a server without the browser.
    Under `BROWSER_HTTPS` its https:// requests trust only the run's CA and reach `TLS_HOST` at
    `TLS_ADDRESS`."""
    if TLS is not None:
        handlers = (*handlers, _HTTPSHandler(TLS.ssl_context()))
    return urllib.request.build_opener(*handlers)


def urlopen(url: str | urllib.request.Request, timeout: float = WAIT_SECONDS):
    """`urllib.request.urlopen` through `url_opener`."""
    return url_opener().open(url, timeout=timeout)


# --- the server ------------------------------------------------------------------------------


class AppShellServer:
    """The real `appshell` binary on a free port, started and stopped by the `server` fixture.

    Another app on the framework (`NotesServer`) is started the same way: its `arguments`, from
    its folder (`cwd`, where its `Public/` is), with its own `app_environment`."""

    #: The app's own `APPSHELL_*` variables: the demo's splash takes 1 s.
    app_environment = {"APPSHELL_SPLASH_DELAY_MILLISECONDS": "1000"}

    def __init__(
        self,
        binary: Path,
        extra_env: dict[str, str] | None = None,
        output: list[str] | None = None,
        arguments: tuple[str, ...] = (),
        cwd: Path = REPO_ROOT,
    ) -> None:
        # An app refuses unknown APPSHELL_* variables (APPSHELL_BINARY among them): pass only ours.
        env = {name: value for name, value in os.environ.items() if not name.startswith("APPSHELL_")}
        env.update(
            {
                "APPSHELL_PORT": "0",
                "APPSHELL_STORE": "memory",
                "APPSHELL_ACCESS_LOG": "false",
                "APPSHELL_SHUTDOWN_TIMEOUT_SECONDS": "2",
                **self.app_environment,
            }
        )
        if TLS is not None:
            env.update(TLS.server_environment())
        env.update(extra_env or {})
        self.process = subprocess.Popen(
            [str(binary), *arguments],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # Its lines (an instance of a scale-out topology shares one list with the other).
        self.output: list[str] = output if output is not None else []
        lines: queue.Queue[str | None] = queue.Queue()
        self._drains = [
            threading.Thread(target=self._drain, args=(self.process.stdout, lines), daemon=True),
            threading.Thread(target=self._drain, args=(self.process.stderr, None), daemon=True),
        ]
        for thread in self._drains:
            thread.start()
        # The server's own events come before `listening` (the demo's `passwordChecks`): read up to it.
        deadline = time.monotonic() + START_SECONDS
        event: dict = {}
        while event.get("event") != "listening":
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.stop()
                raise RuntimeError(f"{binary.name} did not start: {self.log()}")
            event = json.loads(line)
            if "event" not in event:
                self.stop()
                raise RuntimeError(f"{binary.name} answered a request before saying 'listening': {line}")
        self.port = int(event["port"])
        self.base_url = f"https://{TLS_HOST}:{self.port}" if TLS is not None else f"http://127.0.0.1:{self.port}"

    def _drain(self, stream, lines: queue.Queue | None) -> None:
        """Reads a pipe to its end so the server never blocks on a full pipe; keeps the text."""
        for line in stream:
            self.output.append(line.rstrip("\n"))
            if lines is not None:
                lines.put(line)
        if lines is not None:
            lines.put(None)

    def url(self, path: str = "/") -> str:
        """The absolute URL of `path` on this server."""
        return self.base_url + path

    def log(self) -> str:
        """What the server printed so far (stdout and stderr), for failure messages."""
        return "\n".join(self.output[-40:]) or "(no output)"

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if the process has not exited after `STOP_SECONDS`."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for thread in self._drains:
            thread.join(timeout=2)


#: The example app Notes (Examples/Notes, its own package): its folder, where it runs from (its
#: Public/ is there).
NOTES_ROOT = REPO_ROOT / "Examples" / "Notes"


class NotesServer(AppShellServer):
    """The real `notes` binary (Examples/Notes) on a free port, with `AppShellServer`'s interface,
    started and stopped by the `notes_server` fixture.

    Its SQLite store (and the forms' key file beside it) and its configuration are in a folder of
    its own, removed by `stop`. The configuration's one user is `USERNAME` with a password made
    for this server (`password`), whose hash comes from the binary's `hash-password` command; the
    splash shows for `SPLASH_MILLISECONDS`.
    """

    SPLASH_MILLISECONDS = 500
    app_environment = {"APPSHELL_STORE": "sqlite"}

    def __init__(self, binary: Path) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="appshell-browser-notes-"))
        try:
            self.password = "browser-" + os.urandom(8).hex()
            made = subprocess.run(
                [str(binary), "hash-password"], input=self.password + "\n", capture_output=True, text=True,
                timeout=START_SECONDS)
            if made.returncode != 0 or not made.stdout.startswith("$argon2id$"):
                raise RuntimeError(f"notes hash-password failed ({made.returncode}): {made.stdout}{made.stderr}")
            configuration = {
                "storePath": str(self.folder / "notes.sqlite"),
                "splashMilliseconds": self.SPLASH_MILLISECONDS,
                "users": [{"username": USERNAME, "passwordHash": made.stdout.strip()}],
            }
            config = self.folder / "config.json"
            config.write_text(json.dumps(configuration), encoding="utf-8")
            super().__init__(binary, arguments=("--config", str(config)), cwd=NOTES_ROOT)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def stop(self) -> None:
        """The server stopped (`AppShellServer.stop`), then its folder removed."""
        super().stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class ScaleOutServer:
    """For `BROWSER_SCALEOUT=1` (`make test-scaleout`): two `appshell` instances on one Redis
    (Debian's redis-server, no persistence) behind nginx round-robin, all on free loopback ports,
    with `AppShellServer`'s interface — its URL is nginx's, its output both instances' lines."""

    def __init__(self, binary: Path, extra_env: dict[str, str] | None = None) -> None:
        sys.path.insert(0, str(REPO_ROOT / "tests" / "scaleout"))
        from topology import free_port, start_nginx, wait_for_port

        self.folder = tempfile.mkdtemp(prefix="appshell-browser-scaleout-")
        self.output: list[str] = []
        self.instances: list[AppShellServer] = []
        self.nginx = None
        redis_port = free_port()
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.folder, "--logfile", os.path.join(self.folder, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(redis_port, self.redis)
            environment = {
                **(extra_env or {}),
                "APPSHELL_STORE": "redis",
                "APPSHELL_STORE_URL": f"redis://127.0.0.1:{redis_port}/0",
            }
            for _ in range(2):
                self.instances.append(AppShellServer(binary, environment, output=self.output))
            self.nginx, self.port = start_nginx(self.folder, [instance.port for instance in self.instances])
        except BaseException:
            self.stop()
            raise
        self.base_url = f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        """The absolute URL of `path` through nginx."""
        return self.base_url + path

    def log(self) -> str:
        """What the instances printed so far, for failure messages."""
        return "\n".join(self.output[-40:]) or "(no output)"

    def stop(self) -> None:
        """nginx, the instances (SIGTERM), then Redis; the folder removed."""
        if self.nginx and self.nginx.poll() is None:
            self.nginx.kill()
            self.nginx.wait()
        for instance in self.instances:
            instance.stop()
        if self.redis.poll() is None:
            self.redis.kill()
            self.redis.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


#: Whether the browser tests run through nginx in front of two instances on Redis.
SCALEOUT = os.environ.get("BROWSER_SCALEOUT") == "1"


@pytest.fixture(scope="session")
def appshell_binary() -> Path:
    """The built `appshell` binary: `$APPSHELL_BINARY`, else `.build/debug/appshell`."""
    binary = Path(os.environ.get("APPSHELL_BINARY", REPO_ROOT / ".build/debug/appshell"))
    if not binary.is_file():
        pytest.exit(f"no appshell binary at {binary}: run `make browser-test` (it builds first)", 2)
    return binary


def pytest_configure(config) -> None:
    global TLS
    if HTTPS:
        if SCALEOUT:
            pytest.exit("BROWSER_HTTPS=1 and BROWSER_SCALEOUT=1 together are not supported (nginx speaks plain HTTP)", 2)
        TLS = BrowserTLS(Path(tempfile.mkdtemp(prefix="appshell-browser-tls-")))
    config.addinivalue_line("markers", "server_env(**variables): APPSHELL_* variables of the test's server")
    config.addinivalue_line(
        "markers", "single_instance: restarts its one server itself (not run through the scale-out topology)")
    config.addinivalue_line(
        "markers",
        "over_https: depends on the transport (TLS, the __Host- cookie, an https origin, the secure context):"
        " run again over HTTPS (BROWSER_HTTPS=1)")
    config.addinivalue_line(
        "markers",
        "scaled_out: depends on the server's state across requests (sessions, actions, live events):"
        " run again through two instances on Redis behind nginx (BROWSER_SCALEOUT=1)")


def pytest_collection_modifyitems(config, items) -> None:
    """The second passes run only the tests whose behaviour depends on what they change: under
    `BROWSER_HTTPS` those marked `over_https`, under `BROWSER_SCALEOUT` those marked `scaled_out`
    (never a `single_instance` one). The others behave the same in every topology: the first pass
    (plain HTTP, one instance) has run them."""
    if HTTPS:
        marker = "over_https"
    elif SCALEOUT:
        marker = "scaled_out"
    else:
        return
    kept = [
        item
        for item in items
        if item.get_closest_marker(marker) and not (SCALEOUT and item.get_closest_marker("single_instance"))
    ]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept


@pytest.fixture(scope="session")
def notes_binary() -> Path:
    """The built `notes` binary (Examples/Notes): `$NOTES_BINARY`, else
    `Examples/Notes/.build/debug/notes`; the test fails when it is not there."""
    binary = Path(os.environ.get("NOTES_BINARY", NOTES_ROOT / ".build/debug/notes"))
    if not binary.is_file():
        pytest.fail(f"no notes binary at {binary}: run `make browser-test` (it builds Examples/Notes first)")
    return binary


@pytest.fixture
def notes_server(notes_binary: Path):
    """A fresh `notes` (SQLite in a folder of its own) for one test, always stopped afterwards."""
    running = NotesServer(notes_binary)
    yield running
    running.stop()


@pytest.fixture
def server(appshell_binary: Path, request):
    """A fresh `appshell` for one test, always stopped afterwards; a `server_env` mark sets
    APPSHELL_* variables of its own."""
    marker = request.node.get_closest_marker("server_env")
    kind = ScaleOutServer if SCALEOUT else AppShellServer
    running = kind(appshell_binary, dict(marker.kwargs) if marker else None)
    yield running
    running.stop()


# --- the browsers ----------------------------------------------------------------------------


def chromium_options(javascript: bool) -> webdriver.ChromeOptions:
    """Headless Chromium, 1280x900, console logs kept; JavaScript off through the managed setting;
    under `BROWSER_HTTPS` `TLS_HOST` resolves to `TLS_ADDRESS`."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    if HTTPS:
        options.add_argument(f"--host-resolver-rules=MAP {TLS_HOST} {TLS_ADDRESS}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    return options


#: Chromium's TMPDIR: each Chromium makes a folder there for its singleton socket
#: (org.chromium.Chromium.*) and leaves it when chromedriver ends it, one per browser started;
#: this folder is removed when the session ends (`pytest_unconfigure`).
CHROMIUM_TMP = Path(tempfile.mkdtemp(prefix="appshell-chromium-"))


def pytest_unconfigure(config) -> None:
    shutil.rmtree(CHROMIUM_TMP, ignore_errors=True)
    if TLS is not None:
        shutil.rmtree(TLS.folder, ignore_errors=True)


def start_chromium(javascript: bool, home: Path | None = None) -> WebDriver:
    """A new Chromium with its own profile (so its own cookies), driven by Debian's chromedriver;
    its HOME is `home` if given, else under `BROWSER_HTTPS` the one whose NSS database trusts the
    run's CA."""
    environment = {**os.environ, "TMPDIR": str(CHROMIUM_TMP)}
    if home is not None or TLS is not None:
        environment["HOME"] = str(home if home is not None else TLS.home)
    service = Service(CHROMEDRIVER, env=environment)
    driver = webdriver.Chrome(options=chromium_options(javascript), service=service)
    driver.set_script_timeout(60)
    driver.set_page_load_timeout(30)
    return driver


@pytest.fixture
def driver(server):
    """Headless Chromium with JavaScript (quit before the server stops)."""
    chromium = start_chromium(javascript=True)
    yield chromium
    chromium.quit()


@pytest.fixture
def nojs_driver(server):
    """Headless Chromium with JavaScript disabled (quit before the server stops)."""
    chromium = start_chromium(javascript=False)
    yield chromium
    chromium.quit()


# --- one browser on one server ---------------------------------------------------------------


@dataclass
class Response:
    """An HTTP answer read without following redirects."""

    status: int
    headers: dict[str, str]
    body: str

    def json(self):
        """The body parsed as JSON."""
        return json.loads(self.body)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class App:
    """A browser tab on a running appshell: navigation, waits, actions, API calls, screenshots.

    Every screen reached through `wait_screen` is saved as
    `screenshots/{test}-{step:02}-{screen}.png`.
    """

    def __init__(self, driver: WebDriver, server: AppShellServer, test_name: str) -> None:
        self.driver = driver
        self.server = server
        self.test_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)
        self.step = 0
        for stale in SCREENSHOTS.glob(f"{glob.escape(self.test_name)}-[0-9][0-9]-*.png"):
            stale.unlink()

    # navigation and waits

    def open(self, path: str = "/") -> None:
        """Loads `path` of the server in the tab."""
        self.driver.get(self.server.url(path))

    def path(self) -> str:
        """The tab's current URL path (without query)."""
        return urllib.parse.urlsplit(self.driver.current_url).path

    def screen(self) -> str | None:
        """The `data-screen` of `#screen`, or None when there is none."""
        return self.driver.execute_script("return document.getElementById('screen')?.dataset.screen ?? null")

    def describe(self) -> str:
        """Where the tab is, for failure messages."""
        try:
            state = self.state()
            summary = {key: state.get(key) for key in ("screen", "stack", "presented", "version", "view")}
        except Exception as error:  # the description must never hide the real failure
            summary = f"(no state: {error})"
        return f"url={self.driver.current_url} data-screen={self.screen()!r} api={summary}"

    def wait(self, condition, message: str, timeout: float = WAIT_SECONDS):
        """Waits for `condition(driver)` to be truthy; fails with `message` and where the tab is."""
        try:
            return WebDriverWait(
                self.driver, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)
            ).until(condition)
        except TimeoutException:
            raise AssertionError(f"{message} (after {timeout} s): {self.describe()}") from None

    def wait_visible(self, selector: str, message: str, timeout: float = WAIT_SECONDS) -> WebElement:
        """Waits for a displayed element matching the CSS `selector` and returns it."""

        def visible(driver: WebDriver) -> WebElement | None:
            return next((e for e in driver.find_elements(By.CSS_SELECTOR, selector) if e.is_displayed()), None)

        return self.wait(visible, message, timeout)

    def wait_screen(self, name: str, timeout: float = WAIT_SECONDS) -> WebElement:
        """Waits for `#screen[data-screen=name]` and (but for the splash) the screen's URL path;
        then for animations to end; saves a screenshot; returns `#screen`."""
        selector = f"#screen[data-screen='{name}']"
        element = self.wait(
            lambda d: (found := d.find_elements(By.CSS_SELECTOR, selector)) and found[0],
            f"the {name} screen did not show",
            timeout,
        )
        if name in SCREEN_PATHS:
            self.wait(lambda d: self.path() == SCREEN_PATHS[name], f"the URL did not become {SCREEN_PATHS[name]}")
        self.wait_animations()
        self.screenshot(name)
        return element

    def wait_animations(self) -> None:
        """Waits (at most `WAIT_SECONDS`) until the page runs no CSS animation or transition."""
        script = "return !document.getAnimations || document.getAnimations().length === 0"
        self.wait(lambda d: d.execute_script(script), "animations did not finish")

    def wait_heading_focused(self, name: str) -> None:
        """Waits until `document.activeElement` is the screen's `h1#{name}-title`."""
        script = "const e = document.activeElement; return e ? [e.tagName, e.id] : null"
        self.wait(
            lambda d: d.execute_script(script) == ["H1", f"{name}-title"],
            f"focus did not move to h1#{name}-title",
        )

    def screenshot(self, label: str) -> None:
        """Saves the viewport as `screenshots/{test}-{step}-{label}.png`."""
        SCREENSHOTS.mkdir(exist_ok=True)
        self.step += 1
        self.driver.save_screenshot(str(SCREENSHOTS / f"{self.test_name}-{self.step:02}-{label}.png"))

    # actions through the page

    def form(self, action: str) -> WebElement:
        """The page's `form[data-action=action]` (fails when the screen does not offer it)."""
        forms = self.driver.find_elements(By.CSS_SELECTOR, f"form[data-action='{action}']")
        assert forms, f"no form[data-action={action}] on the page: {self.describe()}"
        return forms[0]

    def submit(self, action: str, **fields: str) -> None:
        """Fills the named fields of `form[data-action=action]` and clicks its submit button."""
        form = self.form(action)
        for name, value in fields.items():
            field = form.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        form.find_element(By.CSS_SELECTOR, "button[type='submit'], button:not([type])").click()

    def login(self, password: str = PASSWORD) -> None:
        """Submits the login form as the demo user."""
        self.submit("login", username=USERNAME, password=password)

    def history_length(self) -> int:
        """`history.length` of the tab."""
        return self.driver.execute_script("return history.length")

    def console_errors(self) -> list[dict]:
        """The browser console's SEVERE entries since the last call."""
        return [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]

    # HTTP with the browser's cookies

    def cookie_header(self) -> str:
        """The tab's cookies for the server (HttpOnly ones included) as a Cookie header."""
        return "; ".join(f"{c['name']}={c['value']}" for c in self.driver.get_cookies())

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> Response:
        """Sends one request with the browser's session cookie; redirects are not followed."""
        request = urllib.request.Request(self.server.url(path), data=body, method=method)
        request.add_header("Cookie", self.cookie_header())
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        opener = url_opener(_NoRedirect)
        try:
            with opener.open(request, timeout=WAIT_SECONDS) as answer:
                return Response(answer.status, dict(answer.headers.items()), answer.read().decode())
        except urllib.error.HTTPError as error:
            return Response(error.code, dict(error.headers.items()), error.read().decode())

    def state(self) -> dict:
        """`GET /api/state` of the browser's session."""
        answer = self.request("GET", "/api/state", headers={"Accept": "application/json"})
        assert answer.status == 200, f"GET /api/state answered {answer.status}: {answer.body[:300]}"
        return answer.json()


@pytest.fixture
def app(driver, server, request) -> App:
    """The JavaScript-enabled tab on this test's server."""
    return App(driver, server, request.node.name)


@pytest.fixture
def nojs_app(nojs_driver, server, request) -> App:
    """The JavaScript-disabled tab on this test's server."""
    return App(nojs_driver, server, request.node.name + "-nojs")


# --- axe-core --------------------------------------------------------------------------------


def axe_violations(driver: WebDriver, impacts: tuple[str, ...] = ("serious", "critical")) -> list[dict]:
    """Runs the bundled axe-core on the page; returns its violations with one of `impacts`."""
    driver.execute_script(AXE_SCRIPT)
    results = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(done, error => done({error: String(error)}));"
    )
    assert "error" not in results, f"axe-core failed: {results['error']}"
    return [violation for violation in results["violations"] if violation["impact"] in impacts]


def format_violations(violations: list[dict]) -> str:
    """axe violations as readable lines: rule, impact, help, and the offending nodes."""
    lines = []
    for violation in violations:
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} {violation['helpUrl']}")
        for node in violation["nodes"]:
            lines.append(f"    {node['target']}: {node.get('failureSummary', '').strip()}")
    return "\n".join(lines)


def new_cookie_session() -> urllib.request.OpenerDirector:
    """A plain HTTP client with its own cookie jar (a session without a browser)."""
    return url_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def wait_until(predicate, message: str, timeout: float = WAIT_SECONDS, interval: float = 0.1):
    """Polls `predicate()` until it is truthy and returns its value; fails with `message`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{message} (after {timeout} s)")
        time.sleep(interval)
