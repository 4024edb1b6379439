#!/usr/bin/env python3
"""Instructions per logged-in `GET /main` (the HTML page of make bench's (c)), counted by callgrind.

Runs the given appshell binary (build it with `swift build -c release`) under
`valgrind --tool=callgrind` twice — 300 and 900 pages on one keep-alive connection after one
login, one epoll thread, memory store, no access log — and prints
(instructions of the 900-page run - those of the 300-page run) / 600 for the serving thread only
(as bench/callgrind_actions.py), in two ways:

- kept: `GET /main` again and again, as (c) asks for it — from the second request on, the page the
  live app keeps (`Shell.renderPage`) is served;
- rendered: `GET /main?r=0` and `GET /main?r=1` in turn — the URL differs from the last one, so the
  page is made every time (the screen's `body` read, its HTML written into the layout).

`--functions N` also prints the N functions with the most instructions per rendered page,
inclusive (as callgrind_actions.py's); `--keep DIRECTORY` copies the callgrind outputs there.
Needs Debian's valgrind.
Usage: python3 bench/callgrind_page.py [--functions N] [--keep DIRECTORY] .build/release/appshell
"""

import glob
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from callgrind_actions import functions_between

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def count(binary: str, pages: int, rendered: bool, directory: str) -> int:
    """The serving thread's instructions for `pages` pages (and the start, login, stop)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    out = os.path.join(directory, f"callgrind-{'rendered' if rendered else 'kept'}-{pages}")
    env = dict(
        os.environ, APPSHELL_THREADS="1", APPSHELL_STORE="memory", APPSHELL_PORT=str(port),
        APPSHELL_ACCESS_LOG="false", APPSHELL_SPLASH_DELAY_MILLISECONDS="0",
        APPSHELL_PASSWORD_CHECK_THREADS="1",
        APPSHELL_PASSWORD_CHECK_PRIORITY="normal", APPSHELL_CONFIG=os.path.join(ROOT, "config.json"),
        APPSHELL_PUBLIC_DIRECTORY=os.path.join(ROOT, "Public"))
    # As callgrind_actions.py: the allocator setting a server started normally runs with.
    env.setdefault("GLIBC_TUNABLES", "glibc.malloc.tcache_count=256")
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out, binary],
        env=env, cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            connection.connect()
            break
        except OSError:
            if time.time() > deadline:
                server.kill()
                sys.exit("the server did not start")
            time.sleep(0.3)
    cookie = None

    def request(method: str, path: str, body: str | None = None) -> int:
        nonlocal cookie
        headers = {"Content-Type": "application/json"} if body else {"Accept": "text/html"}
        if cookie:
            headers["Cookie"] = cookie
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.getheader("Set-Cookie"):
            cookie = response.getheader("Set-Cookie").split(";")[0]
        return response.status

    request("GET", "/api/state")
    time.sleep(0.2)
    request("GET", "/api/state")
    login = json.dumps({"action": "login", "username": "demo", "password": "appshell"})
    if request("POST", "/api/actions", login) != 200:
        sys.exit("the demo login failed (is config.json's demo user there?)")
    for i in range(pages):
        path = f"/main?r={i % 2}" if rendered else "/main"
        if request("GET", path) != 200:
            sys.exit(f"GET {path} failed")
    connection.close()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=120)
    total = 0
    for name in glob.glob(out + "*"):
        text = open(name).read()
        if "accessHandlerCallback" not in text:
            continue
        total += sum(int(line.split()[1]) for line in text.splitlines() if line.startswith("summary:"))
    return total


def main() -> None:
    arguments = sys.argv[1:]
    keep = None
    limit = 0
    while arguments[:1] in (["--keep"], ["--functions"]):
        if arguments[0] == "--keep":
            keep = arguments[1]
        else:
            limit = int(arguments[1])
        arguments = arguments[2:]
    binary = os.path.abspath(arguments[0] if arguments else os.path.join(ROOT, ".build/release/appshell"))
    figures = {}
    with tempfile.TemporaryDirectory() as directory:
        for rendered in (False, True):
            short = count(binary, 300, rendered, directory)
            long = count(binary, 900, rendered, directory)
            figures[rendered] = (long - short) / 600
        if keep:
            shutil.copytree(directory, keep, dirs_exist_ok=True)
        if limit:
            functions_between(os.path.join(directory, "callgrind-rendered-300"),
                              os.path.join(directory, "callgrind-rendered-900"), 600, limit)
    print(f"instructions per logged-in GET /main, kept page: {figures[False]:.0f}")
    print(f"instructions per logged-in GET /main, rendered page: {figures[True]:.0f}")


if __name__ == "__main__":
    main()
