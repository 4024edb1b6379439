"""The installable web app shell (issue 18): the manifest, the service worker's cache, offline,
notifications through the service worker, and the first paint of a repeat visit.

Service workers need a secure context: http://127.0.0.1 is one; under BROWSER_HTTPS=1 the suite runs
on https://appshell.test, which is one only because Chromium trusts the run's CA (conftest.py,
`BrowserTLS`). The DevTools protocol (through
Selenium's `execute_cdp_cmd`) reports installability, emulates the network going off (the worker
answers pages through navigation preload, which the emulation reaches), and grants permissions.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import time
import urllib.parse

import pytest
from conftest import (
    REPO_ROOT,
    App,
    AppShellServer,
    axe_violations,
    format_violations,
    start_chromium,
    urlopen,
    wait_until,
)
from test_app import REMINDER_SECONDS, assert_no_console_errors, assert_not_reloaded, log_in, mark_page

#: A service worker needs a secure context: every test here runs again over HTTPS.
pytestmark = pytest.mark.over_https

#: The pages of a session: none of them may ever be in the Cache Storage.
PAGE_PATHS = {"/", "/login", "/main", "/main/list", "/main/second"}
#: Where the worker's script sits and the names of its caches.
WORKER_PATH = "/sw.js"
CACHE_PREFIX = "appshell-shell-"


# --- helpers ---------------------------------------------------------------------------------


def wait_for_worker(app: App) -> None:
    """Waits until a service worker is active for the page and controls it."""
    app.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.ready.then(() => done(true), () => done(false));"
    )
    app.wait(
        lambda d: d.execute_script("return navigator.serviceWorker.controller !== null"),
        "the service worker does not control the page",
    )


def cache_contents(app: App) -> dict[str, list[str]]:
    """Every cache of the Cache Storage and the URLs it holds (as the page sees them)."""
    result = app.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "(async () => {"
        "  const contents = {};"
        "  for (const name of await caches.keys()) {"
        "    const cache = await caches.open(name);"
        "    contents[name] = (await cache.keys()).map((request) => request.url);"
        "  }"
        "  return contents;"
        "})().then(done, (error) => done({error: String(error)}));"
    )
    assert "error" not in result, result
    return result


def shell_files(server: AppShellServer) -> list[str]:
    """The URLs the served worker precaches (its `SHELL_FILES` line)."""
    with urlopen(server.url(WORKER_PATH)) as answer:
        script = answer.read().decode()
    match = re.search(r"^const SHELL_FILES = (\[.*\]);$", script, re.MULTILINE)
    assert match, f"no SHELL_FILES in {WORKER_PATH}"
    return json.loads(match.group(1))


def set_offline(app: App, offline: bool) -> None:
    """Turns the tab's network off or on (DevTools network emulation)."""
    app.driver.execute_cdp_cmd("Network.enable", {})
    app.driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )


def evaluate_in_worker(app: App, expression: str) -> None:
    """Runs `expression` in the service worker's global scope (the DevTools protocol, through a
    session attached to the worker's target; the answer is not read)."""
    targets = app.driver.execute_cdp_cmd("Target.getTargets", {})["targetInfos"]
    worker = next(t for t in targets if t["type"] == "service_worker" and t["url"].startswith(app.server.base_url))
    session = app.driver.execute_cdp_cmd("Target.attachToTarget", {"targetId": worker["targetId"], "flatten": False})
    message = {"id": 1, "method": "Runtime.evaluate", "params": {"expression": expression}}
    app.driver.execute_cdp_cmd(
        "Target.sendMessageToTarget", {"sessionId": session["sessionId"], "message": json.dumps(message)}
    )


def path_and_query(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# --- installable -----------------------------------------------------------------------------


def test_the_app_is_installable(app: App):
    """Chromium finds the manifest (name, icons at 192 and 512 px with a maskable one, standalone,
    the splash's colours) and reports no installability error."""
    app.open("/")
    app.wait_screen("login")
    wait_for_worker(app)

    manifest = app.driver.execute_cdp_cmd("Page.getAppManifest", {})
    assert manifest.get("errors") == [], manifest.get("errors")
    assert urllib.parse.urlsplit(manifest["url"]).path == "/manifest.webmanifest"
    data = json.loads(manifest["data"])
    assert data["display"] == "standalone" and data["start_url"] == "/"
    assert data["name"] and data["short_name"]
    assert data["background_color"] == "#f2f2f7" and data["theme_color"]
    sizes = {(icon["sizes"], icon.get("purpose", "any")) for icon in data["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes, sizes

    errors = app.driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"]
    assert errors == [], f"installability errors: {errors}"
    assert_no_console_errors(app)


# --- the shell cached, nothing private -------------------------------------------------------


def test_the_cache_storage_holds_only_the_shell_after_a_logged_in_visit(app: App):
    """After logging in and moving through every screen (pages, actions, the event stream), the
    Cache Storage holds one cache, of this version, with exactly the shell's files: no page, no
    /api answer, nothing fetched with the session's cookie."""
    log_in(app)
    wait_for_worker(app)
    app.submit("showList")
    app.wait_screen("list")
    app.open("/main/second")
    app.wait_screen("second")
    app.open("/main")
    app.wait_screen("main")
    app.request("GET", "/api/state", headers={"Accept": "application/json"})
    app.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/api/state', {credentials: 'same-origin'}).then(() => done(true), () => done(false));"
    )

    contents = cache_contents(app)
    expected = shell_files(app.server)
    assert len(contents) == 1, f"caches: {list(contents)}"
    [(name, urls)] = contents.items()
    assert name.startswith(CACHE_PREFIX), name
    cached = sorted(path_and_query(url) for url in urls)
    assert cached == sorted(expected), f"cached {cached}, the shell is {expected}"
    for path in cached:
        plain = urllib.parse.urlsplit(path).path
        assert plain not in PAGE_PATHS and not plain.startswith("/api/"), f"{path} is private"
    # The shell is what the page links: its stylesheet and script are among them.
    for selector, attribute in (("link[rel=stylesheet]", "href"), ("script[src]", "src")):
        linked = app.driver.execute_script(f"return document.querySelector('{selector}').getAttribute('{attribute}')")
        assert linked in cached, f"{linked} is not cached"


@pytest.mark.single_instance
def test_a_new_version_replaces_the_cache_and_deletes_the_old(appshell_binary, tmp_path, request):
    """A change of a shell file (a deploy) is a new worker: it fills a new cache with the new
    version's files and deletes the old cache."""
    public = tmp_path / "Public"
    shutil.copytree(REPO_ROOT / "Public", public)
    environment = {"APPSHELL_PUBLIC_DIRECTORY": str(public)}
    server = AppShellServer(appshell_binary, environment)
    driver = start_chromium(javascript=True)
    try:
        app = App(driver, server, request.node.name)
        app.open("/")
        app.wait_screen("login")
        wait_for_worker(app)
        [old] = cache_contents(app).keys()
        old_files = set(shell_files(server))

        port = server.port
        server.stop()
        with open(public / "app.css", "a", encoding="utf-8") as stylesheet:
            stylesheet.write("\n/* a new version */\n")
        server = wait_until(
            lambda: _start(appshell_binary, {**environment, "APPSHELL_PORT": str(port)}),
            f"appshell did not start again on port {port}",
        )
        app.server = server
        new_files = set(shell_files(server))
        changed = new_files - old_files
        assert len(changed) == 1 and changed.pop().startswith("/app.css?v="), new_files ^ old_files

        app.open("/")
        app.wait_screen("login")

        def replaced():
            driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "navigator.serviceWorker.getRegistration('/').then((r) => r?.update()).then(done, done);"
            )
            contents = cache_contents(app)
            return contents if len(contents) == 1 and old not in contents else None

        contents = wait_until(replaced, "the new version's cache did not replace the old one", interval=0.5)
        [(name, urls)] = contents.items()
        assert name.startswith(CACHE_PREFIX) and name != old
        assert sorted(path_and_query(url) for url in urls) == sorted(new_files)
    finally:
        driver.quit()
        server.stop()


def _start(binary, environment: dict[str, str]):
    try:
        return AppShellServer(binary, environment)
    except RuntimeError:
        return None


# --- offline ---------------------------------------------------------------------------------


def test_offline_reload_shows_the_offline_page_which_returns_to_the_screen(app: App):
    """With the network off, reloading /main/list shows the offline page (the splash saying "You
    are offline", styled by the cached shell) at that URL; when the network is back it reloads by
    itself onto the list."""
    log_in(app)
    wait_for_worker(app)
    app.submit("showList")
    app.wait_screen("list")

    set_offline(app, True)
    app.driver.refresh()
    heading = app.wait_visible("#offline h1", "the offline page did not show")
    assert heading.text.strip() == "You are offline"
    assert app.path() == "/main/list", "the offline page is not at the page's URL"
    assert app.driver.execute_script(
        "const img = document.querySelector('#offline img'); return img.complete && img.naturalWidth > 0"
    ), "the splash image did not load from the cache"
    background = app.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    assert background in ("rgb(242, 242, 247)", "rgb(0, 0, 0)"), f"the stylesheet did not load: {background}"
    app.screenshot("offline")
    violations = axe_violations(app.driver)
    assert not violations, "axe-core on the offline page:\n" + format_violations(violations)

    set_offline(app, False)
    app.wait_screen("list")
    assert app.state()["stack"] == ["main", "list"]


def test_try_again_while_still_offline_keeps_the_offline_page(app: App):
    """The offline page's "Try again" while the network is still off leaves the offline page as it
    is (no reload onto the browser's error page); once the network is back it returns to main."""
    log_in(app)
    wait_for_worker(app)
    set_offline(app, True)
    app.driver.refresh()
    app.wait_visible("#offline h1", "the offline page did not show")
    mark_page(app)
    app.driver.find_element("css selector", "#offline [data-retry]").click()
    time.sleep(0.5)
    assert_not_reloaded(app)
    assert app.driver.find_element("css selector", "#offline h1").text.strip() == "You are offline"
    set_offline(app, False)
    app.wait_screen("main")


def test_an_action_attempted_offline_says_so(app: App):
    """An action sent while offline is not lost silently: the banner says the app is offline and
    nothing was sent; back online, the same action works."""
    log_in(app)
    wait_for_worker(app)
    mark_page(app)

    set_offline(app, True)
    app.submit("showList")
    banner = app.wait_visible("#banner:not([hidden])", "no message for an action attempted offline")
    assert "offline" in banner.text.lower(), banner.text
    assert app.screen() == "main"
    app.screenshot("offline-action")

    set_offline(app, False)
    app.submit("showList")
    app.wait_screen("list")
    assert_not_reloaded(app)


# --- notifications through the service worker ------------------------------------------------


@pytest.mark.scaled_out
def test_a_reminder_is_shown_by_the_service_worker_when_permission_is_granted(app: App):
    """With notifications granted, the reminder is a notification of the worker's registration
    (no banner), carrying the launch; its click event in the worker brings the launch to the open
    window, which shows the list in place. (With no window open the worker opens its launch's
    URL, /?launch=notification, which test_notification_launch_link_opens_the_list covers;
    Chromium lets a worker open a window only for a real click.)"""
    app.driver.execute_cdp_cmd(
        "Browser.grantPermissions", {"permissions": ["notifications"], "origin": app.server.base_url}
    )
    log_in(app)
    wait_for_worker(app)
    assert app.driver.execute_script("return Notification.permission") == "granted"
    mark_page(app)

    app.submit("remind")
    script = (
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.ready"
        ".then((registration) => registration.getNotifications())"
        ".then((shown) => done(shown.map((n) => ({title: n.title, body: n.body, tag: n.tag, data: n.data}))),"
        "      (error) => done([{error: String(error)}]));"
    )
    shown = wait_until(
        lambda: app.driver.execute_async_script(script), "no notification of the worker", REMINDER_SECONDS
    )
    assert len(shown) == 1, shown
    assert shown[0]["title"] and shown[0]["tag"] == "appshell-reminder", shown
    assert shown[0]["data"] == {"launch": {"source": "notification"}}, shown
    assert app.driver.execute_script("return document.getElementById('banner').hidden"), "the banner showed too"
    assert app.screen() == "main"

    # A click on it: headless Chromium shows no notification to click, so the worker is made to
    # dispatch the click event a click would (a NotificationEvent for the shown notification) and
    # its handler runs as it would: it focuses this window and posts it the launch (seed 002).
    evaluate_in_worker(
        app,
        "self.registration.getNotifications().then((shown) =>"
        " self.dispatchEvent(new NotificationEvent('notificationclick', {notification: shown[0]})))",
    )
    app.wait_screen("list")
    assert_not_reloaded(app)
    assert app.state()["stack"] == ["main", "list"]


@pytest.mark.scaled_out
def test_logout_takes_the_workers_reminder_away(app: App):
    """A reminder shown by the worker belongs to the session state that asked for it: logging out
    closes it."""
    app.driver.execute_cdp_cmd(
        "Browser.grantPermissions", {"permissions": ["notifications"], "origin": app.server.base_url}
    )
    log_in(app)
    wait_for_worker(app)
    app.submit("remind")
    count = (
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((n) => done(n.length), () => done(-1));"
    )
    wait_until(lambda: app.driver.execute_async_script(count) == 1, "no notification of the worker", REMINDER_SECONDS)
    app.submit("logout")
    app.wait_screen("login")
    wait_until(lambda: app.driver.execute_async_script(count) == 0, "the notification stayed after logout")


# --- repeat visits ---------------------------------------------------------------------------

#: Visits of each kind measured (each round: a new browser profile, a first visit, a repeat one).
ROUNDS = 5

FIRST_PAINT = (
    "const done = arguments[arguments.length - 1];"
    "const find = () => performance.getEntriesByName('first-contentful-paint')[0];"
    "const wait = (tries) => { const entry = find();"
    "  if (entry || tries === 0) done(entry ? entry.startTime : null);"
    "  else setTimeout(() => wait(tries - 1), 50); };"
    "wait(100);"
)


@pytest.mark.single_instance
def test_first_paint_of_a_repeat_visit_against_a_first_visit(appshell_binary, request, capsys):
    """Measures (prints, never asserts) the first contentful paint of a first visit (empty
    profile, everything from the network) and of a repeat visit with the shell cached, and checks
    that the repeat visit fetched none of the shell from the server (the HTTP cache is disabled:
    only the worker's cache can have answered)."""
    firsts, repeats = [], []
    for round_number in range(ROUNDS):
        server = AppShellServer(appshell_binary, {"APPSHELL_ACCESS_LOG": "true"})
        driver = start_chromium(javascript=True)
        try:
            app = App(driver, server, f"{request.node.name}-{round_number}")
            app.open("/login")
            firsts.append(driver.execute_async_script(FIRST_PAINT))
            app.wait_screen("login")
            wait_for_worker(app)
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
            before = len(server.output)
            app.open("/login")
            repeats.append(driver.execute_async_script(FIRST_PAINT))
            app.wait_screen("login")
            fetched = [
                json.loads(line)["path"]
                for line in server.output[before:]
                if line.startswith("{") and '"path"' in line
            ]
            shell = {urllib.parse.urlsplit(url).path for url in shell_files(server)}
            from_network = [path for path in fetched if path in shell and path != "/offline"]
            assert "/login" in fetched, f"the page itself did not come from the server: {fetched}"
            assert not from_network, f"the repeat visit fetched shell files from the server: {from_network}"
        finally:
            driver.quit()
            server.stop()
    assert all(value is not None for value in firsts + repeats), (firsts, repeats)
    with capsys.disabled():
        print(
            f"\nfirst contentful paint: first visit median {statistics.median(firsts):.0f} ms "
            f"({', '.join(f'{v:.0f}' for v in firsts)}), repeat visit with the shell cached median "
            f"{statistics.median(repeats):.0f} ms ({', '.join(f'{v:.0f}' for v in repeats)})"
        )
