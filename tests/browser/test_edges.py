"""Edges of the browser page (issue 12): reminders across logout, deep links opened during the
splash. Same fixtures as test_app.py (see conftest.py)."""

from __future__ import annotations

import time
import urllib.parse

import pytest
from conftest import App, wait_until
from selenium.webdriver.common.by import By
from test_app import REMINDER_SECONDS, SPLASH_SECONDS, assert_not_reloaded, log_in, mark_page

#: Past the reminder's time ("Remind me" waits 5 s), for a test that it never arrives.
PAST_THE_REMINDER_SECONDS = 8


def deny_notifications(app: App) -> None:
    """Reminders then arrive as the in-page #banner."""
    app.driver.execute_cdp_cmd(
        "Browser.setPermission",
        {"permission": {"name": "notifications"}, "setting": "denied", "origin": app.server.base_url},
    )


def banner_hidden(app: App) -> bool:
    return app.driver.execute_script("return document.getElementById('banner').hidden") is True


@pytest.mark.scaled_out
def test_a_reminder_shown_on_main_goes_away_at_logout(app: App):
    """The banner of a reminder belongs to the logged-in session: logging out takes it away."""
    deny_notifications(app)
    log_in(app)
    app.submit("remind")
    app.wait_visible("#banner:not([hidden])", "the reminder banner did not appear", REMINDER_SECONDS)

    app.submit("logout")
    app.wait_screen("login")

    wait_until(lambda: banner_hidden(app), "the reminder's banner stayed on the login page")
    assert "viewType" not in app.state()["defaults"]


@pytest.mark.scaled_out
def test_a_reminder_asked_for_before_logout_never_arrives(app: App):
    """Remind me, then log out at once: the login page never shows the reminder."""
    deny_notifications(app)
    log_in(app)
    mark_page(app)
    app.submit("remind")
    app.submit("logout")
    app.wait_screen("login")

    # Past the reminder's time (5 s after it was asked for), with the page's stream open.
    time.sleep(PAST_THE_REMINDER_SECONDS)
    assert_not_reloaded(app)
    assert banner_hidden(app), "the reminder arrived on the login page after logout"
    assert app.state()["defaults"].get("viewType", 0) == 0


#: The splash of the deep-link test: long enough that a busy machine's page load (which the first
#: check waits for) still ends on the splash (the server's 1 s raced it).
DEEP_LINK_SPLASH_MILLISECONDS = "6000"


@pytest.mark.server_env(APPSHELL_SPLASH_DELAY_MILLISECONDS=DEEP_LINK_SPLASH_MILLISECONDS)
@pytest.mark.scaled_out
def test_a_deep_link_opened_during_the_splash_leads_there_after_login(app: App):
    """/main/second on a new session: the splash, then /login?next=/main/second, then second."""
    app.open("/main/second")
    assert app.screen() == "splash", f"the first page is not the splash: {app.describe()}"
    mark_page(app)
    app.wait_screen("login", timeout=SPLASH_SECONDS)

    assert_not_reloaded(app)
    wait_until(lambda: app.path().startswith("/login"), "the address did not become /login")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(app.driver.current_url).query)
    assert query.get("next") == ["/main/second"], f"the address lost the target: {app.driver.current_url}"
    hidden = app.driver.find_elements(By.CSS_SELECTOR, "#screen input[name='next']")
    assert hidden and hidden[0].get_dom_attribute("value") == "/main/second", "the login form lost the target"

    app.login()
    app.wait_screen("second")
    assert app.path() == "/main/second"
    assert app.state()["presented"] == "second"
