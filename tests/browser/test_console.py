"""No page writes to the browser console: every screen, with and without JavaScript, the pages a
link opens directly, the offline page and an error page. Chromium's whole console log
(`goog:loggingPrefs` browser: ALL, see conftest.py) is read after each step and must be empty — a
failed request (a missing `/favicon.ico`, a 4xx an action answers), a script error, a CSP
violation or a deprecation warning all show up there.
"""

from __future__ import annotations

import pytest
from conftest import App
from selenium.webdriver.common.by import By

#: Over HTTPS the console also reports mixed content and a secure context's refusals: every test
#: here runs again over HTTPS.
pytestmark = pytest.mark.over_https

#: The splash routes after 1 s (APPSHELL_SPLASH_DELAY_MILLISECONDS); an upper bound generous for
#: a busy machine (the wait ends as soon as the login screen shows).
SPLASH_SECONDS = 60


class ConsoleLog:
    """Every console entry of the tab, labelled with the step that produced it."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.entries: list[str] = []

    def after(self, step: str) -> None:
        """Reads what the console got since the last call (the log is emptied by reading it)."""
        for entry in self.app.driver.get_log("browser"):
            self.entries.append(f"{step}: [{entry['level']}] {entry['message']}")

    def assert_empty(self) -> None:
        assert not self.entries, "the browser console was written to:\n" + "\n".join(self.entries)


def settle(app: App) -> None:
    """Waits until the document has loaded, so the requests it makes (icons, scripts) are logged."""
    app.wait(lambda d: d.execute_script("return document.readyState") == "complete", "the page did not load")


def is_refused_login(entry: str) -> bool:
    """Whether `entry` is Chromium's note of the refused login's `POST /api/actions` answered 401."""
    return entry.startswith("login refused: [SEVERE] ") and entry.endswith(
        "/api/actions - Failed to load resource: the server responded with a status of 401 (Unauthorized)"
    )


def walk_every_screen(app: App, log: ConsoleLog) -> None:
    """Splash → login → a refused login → main → list → main → second → main → logout → login."""
    app.open("/")
    settle(app)
    log.after("splash")
    app.wait_screen("login", timeout=SPLASH_SECONDS)
    settle(app)
    log.after("login")
    app.login(password="not-the-password")
    app.wait_visible("#screen .message[role='alert']", "no message after a wrong password")
    log.after("login refused")
    # With JavaScript the refusal is the JSON API's documented 401, and Chromium logs every fetch
    # answered 4xx as a failed resource load: that one line, for that request, is the API speaking
    # (the page shows the message, nothing failed); anything else is still an error.
    log.entries = [entry for entry in log.entries if not is_refused_login(entry)]
    app.login()
    app.wait_screen("main")
    log.after("main")
    for action, screen in [("showList", "list"), ("pop", "main"), ("presentSecond", "second"), ("dismiss", "main")]:
        app.submit(action)
        app.wait_screen(screen)
        settle(app)
        log.after(f"{action} → {screen}")
    for path, screen in [("/main/list", "list"), ("/main/second", "second"), ("/main", "main")]:
        app.open(path)
        app.wait_screen(screen)
        settle(app)
        log.after(f"open {path}")
    app.submit("logout")
    app.wait_screen("login")
    settle(app)
    log.after("logout → login")


def test_no_screen_writes_to_the_console(app: App):
    """With JavaScript: every screen and transition, and a login the server refuses (401)."""
    log = ConsoleLog(app)
    walk_every_screen(app, log)
    log.assert_empty()


def test_no_screen_writes_to_the_console_without_javascript(nojs_app: App):
    """Without JavaScript: the same screens through plain forms and redirects."""
    log = ConsoleLog(nojs_app)
    walk_every_screen(nojs_app, log)
    log.assert_empty()


def test_the_offline_and_error_pages_write_nothing_to_the_console(app: App):
    """The offline page and a 404 page (no app markup, but a browser still asks for an icon)."""
    log = ConsoleLog(app)
    app.open("/offline")
    settle(app)
    log.after("offline")
    app.open("/no-such-page")
    settle(app)
    assert app.driver.find_element(By.TAG_NAME, "h1").text == "404"
    # The 404 itself is what was asked for; it is the one entry allowed, and only for that URL.
    log.entries = [entry for entry in log.entries if "/no-such-page" not in entry]
    log.after("404 page")
    log.entries = [entry for entry in log.entries if "/no-such-page" not in entry]
    log.assert_empty()
