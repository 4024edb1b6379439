"""The browser page against docs/browser-contract.md, in a real headless Chromium.

Tests with the `app` fixture run with JavaScript (the page script, Sources/AppShell/Pages/Resources/app.js, swaps screens in place); tests with
`nojs_app` run with JavaScript disabled (plain forms, redirects and the splash's meta refresh).
Each test has its own server and browser profile (see conftest.py).
"""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from html.parser import HTMLParser

import pytest
from conftest import (
    PASSWORD,
    USERNAME,
    WAIT_SECONDS,
    App,
    axe_violations,
    format_violations,
    new_cookie_session,
    wait_until,
)
from selenium.webdriver.common.by import By

#: The splash routes after 1 s (APPSHELL_SPLASH_DELAY_MILLISECONDS); an upper bound generous for
#: a busy machine (the wait ends as soon as the login screen shows).
SPLASH_SECONDS = 60
#: "Remind me in 5 seconds": an upper bound generous for a busy machine.
REMINDER_SECONDS = 60


# --- helpers ---------------------------------------------------------------------------------


def log_in(app: App) -> None:
    """From a new session: the splash, then login, then main as the demo user."""
    app.open("/")
    app.wait_screen("login", timeout=SPLASH_SECONDS)
    app.login()
    app.wait_screen("main")


def mark_page(app: App) -> None:
    """Sets `window.__marker` on the current document; a reload or navigation loses it."""
    app.driver.execute_script("window.__marker = 1")


def assert_not_reloaded(app: App) -> None:
    """The document is still the one `mark_page` marked (the screen was swapped in place)."""
    assert app.driver.execute_script("return window.__marker") == 1, "the page was reloaded"


def assert_no_console_errors(app: App) -> None:
    """No script errors, CSP violations or failed requests were logged in the browser console."""
    errors = app.console_errors()
    assert not errors, "console errors:\n" + "\n".join(entry["message"] for entry in errors)


def alert_message(app: App) -> str:
    """Waits for the login screen's visible `.message[role=alert]` and returns its text."""
    selector = "#screen .message[role='alert']"
    return app.wait_visible(selector, "no visible .message[role=alert] on the login screen").text.strip()


def form_post(app: App, fields: dict[str, str], path: str = "/actions"):
    """POSTs url-encoded `fields` to `path` with the browser's cookie and a same-site Origin."""
    return app.request(
        "POST",
        path,
        urllib.parse.urlencode(fields).encode(),
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": app.server.base_url},
    )


def csp_directives(header: str) -> dict[str, list[str]]:
    """A Content-Security-Policy header as {directive: [sources]}."""
    directives = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


class _InlineCode(HTMLParser):
    """Collects inline scripts, <style> elements and style attributes of an HTML document."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.assets: list[tuple[str, str]] = []
        self._in_inline_script = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "style" in attributes:
            self.found.append(f"style attribute on <{tag}>")
        if any(name.startswith("on") for name in attributes):
            self.found.append(f"event handler attribute on <{tag}>")
        if tag == "style":
            self.found.append("<style> element")
        if tag == "script":
            if attributes.get("src"):
                self.assets.append(("script", attributes["src"]))
            else:
                self._in_inline_script = True
        if tag == "link" and attributes.get("rel") == "stylesheet":
            self.assets.append(("stylesheet", attributes.get("href", "")))

    def handle_data(self, data):
        if self._in_inline_script and data.strip():
            self.found.append(f"inline <script>: {data.strip()[:60]}")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_inline_script = False


# --- with JavaScript -------------------------------------------------------------------------


@pytest.mark.over_https
@pytest.mark.scaled_out
def test_splash_turns_into_login_by_itself(app: App):
    """The splash becomes login through the event stream: no reload, no click, same history entry."""
    app.open("/")
    mark_page(app)
    entries = app.history_length()
    splash_title = app.driver.title
    assert app.screen() == "splash", f"the first page is not the splash: {app.describe()}"
    app.screenshot("splash")
    images = app.driver.find_elements(By.CSS_SELECTOR, "#screen img[src^='/splash.svg']")
    assert images, "the splash has no /splash.svg image"
    assert images[0].get_dom_attribute("alt") is not None, "the splash image has no alt attribute"
    assert app.driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", images[0]), (
        "the splash image did not load"
    )

    app.wait_screen("login", timeout=SPLASH_SECONDS)

    assert_not_reloaded(app)
    assert app.history_length() == entries, "the swap to login added a history entry"
    app.wait_heading_focused("login")
    title = app.driver.title
    assert title.endswith(" — AppShell") and title != splash_title, f"title {title!r} (splash: {splash_title!r})"
    assert app.state()["screen"] == "login"
    assert_no_console_errors(app)


@pytest.mark.over_https
@pytest.mark.scaled_out
def test_wrong_then_right_password(app: App):
    """A wrong password shows an alert on login and changes nothing; the right one shows main."""
    app.open("/")
    app.wait_screen("login", timeout=SPLASH_SECONDS)
    mark_page(app)

    app.login(password="not-the-password")
    message = alert_message(app)
    assert message, "the alert is empty"
    app.screenshot("login-failed")
    state = app.state()
    assert state["screen"] == "login" and state["defaults"].get("isLogin") is not True
    assert app.path() == "/login"

    app.login()
    app.wait_screen("main")

    assert_not_reloaded(app)
    app.wait_heading_focused("main")
    state = app.state()
    assert state["stack"] == ["main"]
    assert state["defaults"].get("isLogin") is True and state["defaults"].get("username") == USERNAME


@pytest.mark.scaled_out
def test_push_list_and_browser_back(app: App):
    """Show the list pushes a history entry (/main/list); the back button pops to main."""
    log_in(app)
    mark_page(app)
    entries = app.history_length()

    app.submit("showList")
    app.wait_screen("list")
    app.wait_heading_focused("list")
    assert app.history_length() == entries + 1, "push did not add a history entry"
    assert app.state()["stack"] == ["main", "list"]

    app.driver.back()
    app.wait_screen("main")
    app.wait_heading_focused("main")
    assert_not_reloaded(app)
    wait_until(lambda: app.state()["stack"] == ["main"], "the server's stack did not pop to [main]")
    assert_no_console_errors(app)


@pytest.mark.scaled_out
def test_back_form_pops_the_list(app: App):
    """The list's Back button (the `pop` form) pops to main in place."""
    log_in(app)
    mark_page(app)
    app.submit("showList")
    app.wait_screen("list")

    app.submit("pop")
    app.wait_screen("main")

    app.wait_heading_focused("main")
    assert_not_reloaded(app)
    assert app.state()["stack"] == ["main"]


@pytest.mark.scaled_out
def test_present_and_close_second(app: App):
    """Present the second screen (a modal dialog at /main/second), then close it back to main."""
    log_in(app)
    mark_page(app)
    entries = app.history_length()

    app.submit("presentSecond")
    app.wait_screen("second")
    app.wait_heading_focused("second")
    dialogs = app.driver.find_elements(By.CSS_SELECTOR, "#screen section[role='dialog'][aria-modal='true']")
    assert dialogs, "the second screen is not a modal dialog section"
    assert app.history_length() == entries + 1, "present did not add a history entry"
    assert app.state()["presented"] == "second"

    app.submit("dismiss")
    app.wait_screen("main")
    app.wait_heading_focused("main")
    assert_not_reloaded(app)
    # Close went back to main's own entry: the next Back leaves main, as after a Back press.
    assert app.driver.execute_script("return history.state?.pushedBy ?? null") is None
    state = app.state()
    assert state["presented"] is None and state["stack"] == ["main"]
    assert_no_console_errors(app)


@pytest.mark.scaled_out
def test_reload_keeps_the_screen(app: App):
    """Reloading on the list shows the list again, rendered by the server."""
    log_in(app)
    app.submit("showList")
    app.wait_screen("list")
    mark_page(app)

    app.driver.refresh()
    app.wait(lambda d: d.execute_script("return window.__marker") is None, "the page did not reload")
    app.wait_screen("list")

    assert app.state()["stack"] == ["main", "list"]


@pytest.mark.scaled_out
def test_notification_launch_link_opens_the_list(app: App):
    """`GET /?launch=notification` on main redirects to /main/list, once."""
    log_in(app)

    app.open("/?launch=notification")
    app.wait_screen("list")

    state = app.state()
    assert state["stack"] == ["main", "list"]
    assert state["defaults"].get("viewType", 0) == 0, "the one-shot viewType was not reset"


@pytest.mark.over_https
@pytest.mark.scaled_out
def test_remind_me_shows_the_banner_and_open_shows_the_list(app: App):
    """With notifications denied, the reminder arrives as the in-page #banner; Open shows the list."""
    app.driver.execute_cdp_cmd(
        "Browser.setPermission",
        {"permission": {"name": "notifications"}, "setting": "denied", "origin": app.server.base_url},
    )
    log_in(app)
    assert app.driver.execute_script("return Notification.permission") == "denied"
    mark_page(app)

    app.submit("remind")
    banner = app.wait_visible("#banner:not([hidden])", "the reminder banner did not appear", REMINDER_SECONDS)
    assert banner.text.strip(), "the banner is empty"
    app.screenshot("banner")
    assert app.screen() == "main", "the reminder changed the screen before Open was clicked"

    buttons = [b for b in banner.find_elements(By.TAG_NAME, "button") if b.text.strip() == "Open"]
    assert buttons, f"no Open button in the banner: {banner.get_attribute('innerHTML')}"
    buttons[0].click()
    app.wait_screen("list")

    assert_not_reloaded(app)
    assert app.state()["stack"] == ["main", "list"]


@pytest.mark.over_https
@pytest.mark.scaled_out
def test_logout(app: App):
    """Log out swaps to login at /login; /main then redirects to /login?next=/main."""
    log_in(app)
    mark_page(app)

    app.submit("logout")
    app.wait_screen("login")

    assert_not_reloaded(app)
    app.wait_heading_focused("login")
    assert app.state()["defaults"].get("isLogin") is False

    app.open("/main")
    app.wait_screen("login")
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(app.driver.current_url).query).get("next") == ["/main"]


def test_accessibility(app: App):
    """axe-core finds nothing serious or critical on login, main, list and second; landmarks exist."""
    problems = {}

    def check(screen: str) -> None:
        assert app.driver.find_elements(By.CSS_SELECTOR, "body > main#screen"), "no main landmark"
        assert app.driver.find_elements(By.CSS_SELECTOR, "body > header"), "no header landmark"
        assert app.driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
        assert app.driver.find_elements(By.CSS_SELECTOR, f"#screen h1#{screen}-title"), f"no h1#{screen}-title"
        violations = axe_violations(app.driver)
        if violations:
            problems[screen] = format_violations(violations)

    app.open("/")
    app.wait_screen("login", timeout=SPLASH_SECONDS)
    check("login")
    app.login()
    app.wait_screen("main")
    app.wait_heading_focused("main")
    check("main")
    app.submit("showList")
    app.wait_screen("list")
    app.wait_heading_focused("list")
    check("list")
    app.submit("pop")
    app.wait_screen("main")
    app.submit("presentSecond")
    app.wait_screen("second")
    app.wait_heading_focused("second")
    check("second")

    report = "\n".join(f"[{screen}]\n{text}" for screen, text in problems.items())
    if report:
        print(report)
    assert not problems, "serious or critical axe-core violations:\n" + report


# --- without JavaScript ----------------------------------------------------------------------


@pytest.mark.over_https
@pytest.mark.scaled_out
def test_flow_without_javascript(nojs_app: App):
    """Splash (meta refresh) → login → wrong then right password → main → list → Back → second →
    Close → logout, all through plain forms and redirects."""
    app = nojs_app
    app.open("/")
    assert app.screen() == "splash", f"the first page is not the splash: {app.describe()}"
    assert app.driver.find_elements(By.CSS_SELECTOR, "meta[http-equiv='refresh']"), "the splash has no meta refresh"
    app.screenshot("splash")

    app.wait_screen("login", timeout=SPLASH_SECONDS)
    app.login(password="not-the-password")
    assert alert_message(app), "the alert is empty"
    app.screenshot("login-failed")
    assert app.path() == "/login"

    app.login()
    app.wait_screen("main")
    app.submit("showList")
    app.wait_screen("list")
    app.submit("pop")
    app.wait_screen("main")
    app.submit("presentSecond")
    app.wait_screen("second")
    app.submit("dismiss")
    app.wait_screen("main")
    app.submit("logout")
    app.wait_screen("login")

    assert app.state()["defaults"].get("isLogin") is False


@pytest.mark.scaled_out
def test_login_next_is_honoured_only_for_same_site_paths(nojs_app: App):
    """/main/list while logged out → /login?next=/main/list → after login /main/list; a
    protocol-relative `next` (//evil.example) lands on /main instead."""
    app = nojs_app
    app.open("/")
    app.wait_screen("login", timeout=SPLASH_SECONDS)

    app.open("/main/list")
    app.wait_screen("login")
    assert app.form("login").find_element(By.NAME, "next").get_attribute("value") == "/main/list"
    app.login()
    app.wait_screen("list")

    app.submit("pop")
    app.wait_screen("main")
    app.submit("logout")
    app.wait_screen("login")
    app.open("/login?next=//evil.example/")
    app.wait_screen("login")
    app.login()
    app.wait_screen("main")
    assert urllib.parse.urlsplit(app.driver.current_url).hostname == urllib.parse.urlsplit(app.server.base_url).hostname


@pytest.mark.over_https
@pytest.mark.scaled_out
def test_csrf_origin_and_content_type_rejections(nojs_app: App):
    """A wrong or missing csrf token (403), a foreign Origin on /api/actions (403) and a form body
    on /api/actions (415) change nothing; the page's own token is accepted."""
    app = nojs_app
    app.open("/")
    app.wait_screen("login", timeout=SPLASH_SECONDS)
    token = app.form("login").find_element(By.NAME, "csrf").get_attribute("value")
    assert token, "the login form has no csrf token"
    before = app.state()
    login = {"action": "login", "username": USERNAME, "password": PASSWORD, "next": ""}

    wrong = form_post(app, {"csrf": token[::-1] + "x", **login})
    assert wrong.status == 403, f"wrong csrf token: {wrong.status} {wrong.body[:200]}"
    missing = form_post(app, login)
    assert missing.status == 403, f"missing csrf token: {missing.status} {missing.body[:200]}"
    foreign = app.request(
        "POST",
        "/api/actions",
        json.dumps({"action": "login", "username": USERNAME, "password": PASSWORD}).encode(),
        {"Content-Type": "application/json", "Origin": "https://evil.example"},
    )
    assert foreign.status == 403, f"foreign Origin on /api/actions: {foreign.status} {foreign.body[:200]}"
    form_body = form_post(app, login, path="/api/actions")
    assert form_body.status == 415, f"form body on /api/actions: {form_body.status} {form_body.body[:200]}"

    after = app.state()
    assert (after["screen"], after["version"], after["defaults"]) == (
        before["screen"],
        before["version"],
        before["defaults"],
    ), "a rejected request changed the session"

    accepted = form_post(app, {"csrf": token, **login})
    assert accepted.status == 303 and accepted.headers.get("Location", "").endswith("/main"), (
        f"the page's own token: {accepted.status} {accepted.headers.get('Location')} {accepted.body[:200]}"
    )


# --- the HTML page itself --------------------------------------------------------------------


@pytest.mark.over_https
@pytest.mark.scaled_out
def test_security_headers_and_no_inline_code(server):
    """Every screen's HTML page carries the contract's CSP, nosniff and Referrer-Policy, and has no
    inline script or style; its script and stylesheet are versioned and served."""
    client = new_cookie_session()

    def page(path: str):
        with client.open(server.url(path), timeout=WAIT_SECONDS) as answer:
            return answer.url, answer.headers, answer.read().decode()

    def state() -> dict:
        with client.open(server.url("/api/state"), timeout=WAIT_SECONDS) as answer:
            return json.load(answer)

    pages = [page("/")]
    wait_until(lambda: state()["screen"] == "login", "the splash did not turn into login", SPLASH_SECONDS)
    pages.append(page("/login"))
    login = urllib.request.Request(
        server.url("/api/actions"),
        json.dumps({"action": "login", "username": USERNAME, "password": PASSWORD}).encode(),
        {"Content-Type": "application/json", "Origin": server.base_url},
    )
    with client.open(login, timeout=WAIT_SECONDS) as answer:
        assert json.load(answer)["screen"] == "main"
    pages += [page(path) for path in ("/main", "/main/list", "/main/second")]
    assert [urllib.parse.urlsplit(url).path for url, _, _ in pages] == [
        "/",
        "/login",
        "/main",
        "/main/list",
        "/main/second",
    ], "a page was redirected elsewhere"

    for url, headers, body in pages:
        assert headers.get_content_type() == "text/html", url
        csp = csp_directives(headers.get("Content-Security-Policy", ""))
        script_src = csp.get("script-src", csp.get("default-src", []))
        assert "'self'" in script_src and "'unsafe-inline'" not in script_src, f"{url}: script-src {script_src}"
        assert "'unsafe-eval'" not in script_src, f"{url}: script-src {script_src}"
        assert "'unsafe-inline'" not in csp.get("style-src", []), f"{url}: style-src allows inline"
        assert csp.get("frame-ancestors") == ["'none'"], f"{url}: frame-ancestors {csp.get('frame-ancestors')}"
        assert csp.get("default-src") == ["'self'"] and csp.get("base-uri") == ["'none'"], f"{url}: {csp}"
        assert headers.get("X-Content-Type-Options") == "nosniff", url
        assert headers.get("Referrer-Policy") == "same-origin", url
        parser = _InlineCode()
        parser.feed(body)
        assert not parser.found, f"{url}: {parser.found}"
        kinds = {kind for kind, _ in parser.assets}
        assert kinds == {"script", "stylesheet"}, f"{url}: assets {parser.assets}"
        stylesheets = [src for kind, src in parser.assets if kind == "stylesheet"]
        assert stylesheets[0].startswith("/appshell.css?v="), f"{url}: the base stylesheet is not first: {stylesheets}"
        for kind, src in parser.assets:
            assert re.fullmatch(r"/(app\.js|app\.css|appshell\.css)\?v=[^&]+", src), f"{url}: unversioned {kind} {src}"
            with client.open(server.url(src), timeout=WAIT_SECONDS) as asset:
                assert asset.status == 200
                expected = "javascript" if kind == "script" else "css"
                assert expected in asset.headers.get_content_type(), f"{src}: {asset.headers.get_content_type()}"


# --- live across sessions (issue 12, items 5 and 11) -----------------------------------------


@pytest.mark.single_instance
@pytest.mark.over_https
def test_a_restart_that_loses_the_session_shows_the_new_sessions_state(app: App, appshell_binary):
    """A page open on main while the server restarts with the memory store (the session is lost):
    its event stream reconnects to the new server, and the page shows the new session's state —
    the splash, then login — without a click, although that state's version is below the page's."""
    log_in(app)
    for _ in range(3):  # the page's version grows past the new session's
        app.submit("showList")
        app.wait_screen("list")
        app.submit("pop")
        app.wait_screen("main")
    old_version = int(app.driver.execute_script("return document.getElementById('screen').dataset.version"))
    mark_page(app)

    port = app.server.port
    app.server.stop()
    restarted = wait_until(
        lambda: _start_on_port(appshell_binary, port), f"appshell did not start again on port {port}"
    )
    try:
        app.server = restarted
        app.wait_screen("login")
        assert_not_reloaded(app)
        version = int(app.driver.execute_script("return document.getElementById('screen').dataset.version"))
        assert version < old_version, f"the new session's version {version} is not below {old_version}"
        state = app.state()
        assert state["screen"] == "login" and state["defaults"].get("isLogin") is not True
    finally:
        restarted.stop()


def _start_on_port(binary, port: int):
    """A new appshell on `port` (the old one's), or None while the port is not free yet."""
    from conftest import AppShellServer

    try:
        return AppShellServer(binary, {"APPSHELL_PORT": str(port)})
    except RuntimeError:
        return None


@pytest.mark.scaled_out
def test_back_after_presenting_on_a_freshly_loaded_page_dismisses(app: App):
    """On /main loaded afresh, present the second screen, then the browser's Back: it dismisses
    the modal screen (the page stays), rather than leaving the app."""
    log_in(app)
    app.open("/main")
    app.wait_screen("main")
    mark_page(app)
    entries = app.history_length()

    app.submit("presentSecond")
    app.wait_screen("second")
    assert app.history_length() == entries + 1, "present did not add a history entry"

    app.driver.back()
    app.wait_screen("main")
    assert_not_reloaded(app)
    wait_until(lambda: app.state()["presented"] is None, "the server did not dismiss the second screen")
    assert app.state()["stack"] == ["main"]
    assert_no_console_errors(app)


@pytest.mark.scaled_out
def test_a_form_sent_while_another_action_is_pending_is_not_dropped(app: App):
    """A form submitted while an action waits (here a back press, which has nothing to pop) is
    sent after it; a second submit of the same form while it is pending is one action, not two."""
    log_in(app)
    mark_page(app)

    app.driver.execute_script(
        "window.dispatchEvent(new PopStateEvent('popstate', {state: history.state}));"
        "const form = document.querySelector(\"form[data-action='showList']\");"
        "form.requestSubmit(); form.requestSubmit();"
    )
    app.wait_screen("list")

    assert_not_reloaded(app)
    assert app.state()["stack"] == ["main", "list"], "the list was pushed twice, or not at all"
    assert app.driver.execute_script("return document.getElementById('banner').hidden"), "an error was shown"
    assert_no_console_errors(app)


@pytest.mark.single_instance
@pytest.mark.over_https
def test_a_session_that_expires_while_its_page_is_open_shows_login(appshell_binary, request):
    """A page left open on main while its session expires (idle timeout 3 s here): the server ends
    its stream, the page reconnects and shows the new session's login screen without a click."""
    from conftest import AppShellServer, start_chromium

    server = AppShellServer(
        appshell_binary,
        {"APPSHELL_SESSION_IDLE_TIMEOUT_SECONDS": "3", "APPSHELL_SESSION_SWEEP_INTERVAL_SECONDS": "1"},
    )
    driver = start_chromium(javascript=True)
    try:
        app = App(driver, server, request.node.name)
        log_in(app)
        mark_page(app)
        app.wait_screen("login")
        assert_not_reloaded(app)
        assert app.state()["defaults"].get("isLogin") is not True
    finally:
        driver.quit()
        server.stop()
