"""The example app Notes (Examples/Notes) in real browsers: one user on several devices.

Each test starts the built `notes` binary (`NotesServer`: SQLite in a folder of its own, a free
port, a user `demo` with a password made for the run) and several headless Chromiums, each with
its own profile — its own cookies, as two devices of the user. A user's notes are in the
framework's user's store, shared by all the user's sessions: a note saved in one browser shows in
the other's open page through its event stream, with no reload, and in a browser that logs in
later; a note's deep link (`/notes/<id>`) opened logged out shows the note once logged in.
"""

from __future__ import annotations

import urllib.parse

import pytest
from conftest import SCALEOUT, App, NotesServer, start_chromium
from selenium.webdriver.common.by import By

pytestmark = pytest.mark.skipif(
    SCALEOUT,
    reason="Notes runs as one instance on SQLite; the scale-out pass runs the demo behind nginx (Redis)",
)

#: The note every new user has (Notebook's welcome note).
WELCOME = "Welcome to Notes"
#: The splash routes after `NotesServer.SPLASH_MILLISECONDS`; an upper bound for a busy machine.
SPLASH_SECONDS = 60


@pytest.fixture
def browsers(notes_server: NotesServer, request):
    """Starts a new Chromium (own profile: a device of its own) on the test's Notes server and
    returns its `App`; every one is quit at the end, before the server stops."""
    started = []

    def start(label: str) -> App:
        driver = start_chromium(javascript=True)
        started.append(driver)
        return App(driver, notes_server, f"{request.node.name}-{label}")

    yield start
    for driver in started:
        driver.quit()


# --- helpers ---------------------------------------------------------------------------------


def log_in(app: App, password: str) -> None:
    """On the login screen (after the splash): logs in as the user; waits for the notes list."""
    app.wait_screen("login", timeout=SPLASH_SECONDS)
    app.login(password=password)
    app.wait_screen("notes")
    assert app.path() == "/notes", f"the list is not at /notes: {app.describe()}"


def listed(app: App) -> list[str]:
    """The titles the list shows, top to bottom (each note is an `open` button)."""
    return app.driver.execute_script(
        "return [...document.querySelectorAll(\"#screen form[data-action='open'] button\")]"
        ".map(button => button.textContent.trim())"
    )


def wait_listed(app: App, title: str) -> None:
    """Waits until the list on the page shows a note titled `title`."""
    app.wait(lambda _: title in listed(app), f"the list does not show {title!r} (it shows {listed(app)})")


def save_note(app: App, title: str, body: str) -> int:
    """From the list: New note, fill in, Save; waits for the list with the note; returns its id."""
    app.submit("compose")
    app.wait_screen("compose")
    app.submit("save", title=title, body=body)
    app.wait_screen("notes")
    wait_listed(app, title)
    notes = app.state()["userDefaults"]["notes"]
    ids = [note["id"] for note in notes if note["title"] == title]
    assert len(ids) == 1, f"the user's store holds {len(ids)} notes titled {title!r}: {notes}"
    return ids[0]


def document_identity(app: App) -> list:
    """What a reload or a navigation would change: the marker set by `mark_document` on `window`,
    the document's time origin, and its navigation entries (one per document)."""
    return app.driver.execute_script(
        "return [window.__notesMarker ?? null, performance.timeOrigin,"
        " performance.getEntriesByType('navigation').length]"
    )


def mark_document(app: App) -> list:
    """Sets a marker on `window` (a reload or navigation loses it); returns `document_identity`."""
    app.driver.execute_script("window.__notesMarker = 'before the save'")
    return document_identity(app)


def assert_no_console_errors(app: App) -> None:
    """No script errors, CSP violations or failed requests were logged in the browser's console."""
    errors = app.console_errors()
    assert not errors, "console errors:\n" + "\n".join(entry["message"] for entry in errors)


# --- the tests -------------------------------------------------------------------------------


def test_a_note_saved_on_one_device_shows_on_the_others_open_page(notes_server: NotesServer, browsers):
    """A and B, two browsers logged in as the same user, both on the list. A saves "From A": B's
    list shows it without a reload or any click of B's (its event stream's `state`). B then logs
    out and in again: the note is still there, as it is for any session of the user."""
    a, b = browsers("a"), browsers("b")
    for device in (a, b):
        device.open("/")
        log_in(device, notes_server.password)
        assert listed(device) == [WELCOME], f"a new user's list: {listed(device)}"
    b_document = mark_document(b)
    b_version = int(b.driver.execute_script("return document.getElementById('screen').dataset.version"))

    save_note(a, "From A", "Written on device A.")

    wait_listed(b, "From A")
    assert listed(b) == ["From A", WELCOME], f"B's list: {listed(b)}"
    assert document_identity(b) == b_document, "B's page was reloaded or navigated to show the note"
    assert b.path() == "/notes" and b.screen() == "notes", f"B left the list: {b.describe()}"
    version = int(b.driver.execute_script("return document.getElementById('screen').dataset.version"))
    assert version > b_version, f"B's page version did not move on ({b_version} → {version})"
    b.screenshot("live")
    assert_no_console_errors(b)
    assert_no_console_errors(a)

    # B on another session of the same user: log out, log in again.
    b.submit("logout")
    b.wait_screen("login")
    assert not b.driver.find_elements(By.CSS_SELECTOR, "#screen form[data-action='open']"), "notes shown logged out"
    b.login(password=notes_server.password)
    b.wait_screen("notes")
    wait_listed(b, "From A")
    assert listed(b) == ["From A", WELCOME], f"B's list after logging in again: {listed(b)}"


def test_a_note_deep_link_in_a_fresh_browser_shows_the_note_after_login(notes_server: NotesServer, browsers):
    """A saves a note; C, a browser that never visited, opens its link `/notes/<id>`: the splash,
    then login (with `next` the link), then — after logging in — that note, at its URL."""
    a = browsers("a")
    a.open("/")
    log_in(a, notes_server.password)
    note = save_note(a, "Linked note", "Opened from a link.")
    link = f"/notes/{note}"

    c = browsers("c")
    c.open(link)
    c.wait_screen("login", timeout=SPLASH_SECONDS)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(c.driver.current_url).query)
    assert query.get("next") == [link], f"login does not lead to {link}: {c.driver.current_url}"
    assert not c.driver.find_elements(By.XPATH, "//*[contains(., 'Opened from a link.')]"), "the note showed logged out"

    c.login(password=notes_server.password)
    c.wait_screen("note")
    c.wait(lambda _: c.path() == link, f"the note's screen is not at {link}")
    heading = c.driver.find_element(By.CSS_SELECTOR, "#screen h1").text
    assert heading == "Linked note", f"the screen's heading is {heading!r}: {c.describe()}"
    text = c.driver.find_element(By.ID, "screen").text
    assert "Opened from a link." in text, f"the note's text is not shown: {text!r}"
    state = c.state()
    assert state["screen"] == "note" and state["stack"] == ["notes", "note"], f"C's state: {state}"
    assert_no_console_errors(c)

    # Back from the deep-linked note: the list, with the note in it.
    c.submit("back")
    c.wait_screen("notes")
    wait_listed(c, "Linked note")
