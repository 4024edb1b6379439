#!/usr/bin/env python3
"""Instructions per `POST /api/actions` of a logged-in session, counted by callgrind (the Performance article).

Runs the given appshell binary (build it with `swift build -c release`) under
`valgrind --tool=callgrind` twice — 300 and 900 actions, `showList` and `pop` in turn, on one
keep-alive connection after one login, one epoll thread, memory store, no access log — and prints
(instructions of the 900-action run - those of the 300-action run) / 600, counting only the
thread that serves requests (other threads' work depends on the wall-clock time, which valgrind
stretches). The password check of the login runs at normal priority, so that it does not wait
behind a busy machine (its thread is not counted). Needs Debian's valgrind.

`--functions N` also prints the N functions with the most instructions per action, inclusive of
what they call, each (900-run - 300-run) / 600 from `callgrind_annotate --inclusive=yes` (the
bench/RESULTS.md's table "Where an action's time goes" is read from it); `--keep DIRECTORY` copies the
callgrind outputs there (one file per thread; the serving thread's names accessHandlerCallback).
Usage: python3 bench/callgrind_actions.py [--functions N] [--keep DIRECTORY] .build/release/appshell
"""

import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def count(binary: str, actions: int, directory: str) -> int:
    """The serving thread's instructions for `actions` actions (and the start, login, stop)."""

    def act(request) -> None:
        for i in range(actions):
            name = "showList" if i % 2 == 0 else "pop"
            if request("POST", "/api/actions", json.dumps({"action": name})) != 200:
                sys.exit("an action failed")

    return logged_in_run(binary, os.path.join(directory, f"callgrind-{actions}"), directory, act)


def logged_in_run(binary: str, out: str, directory: str, work, get_headers: dict | None = None) -> int:
    """Starts `binary` under callgrind (output files `out`*; one epoll thread, memory store, no
    access log), logs the demo user in on one keep-alive connection, runs `work(request)`
    (`request(method, path, body=None)` answers the status, with the session's cookie; a request
    without a body also sends `get_headers`), stops the server, and returns the instructions of
    the thread that served the requests."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    env = dict(
        os.environ, APPSHELL_THREADS="1", APPSHELL_STORE="memory", APPSHELL_PORT=str(port),
        APPSHELL_ACCESS_LOG="false", APPSHELL_SPLASH_DELAY_MILLISECONDS="0",
        APPSHELL_PASSWORD_CHECK_THREADS="1", APPSHELL_CONFIG=os.path.join(ROOT, "config.json"),
        APPSHELL_PUBLIC_DIRECTORY=os.path.join(ROOT, "Public"))
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
        headers = {"Content-Type": "application/json"} if body else dict(get_headers or {})
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
    work(request)
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


def serving_thread(prefix: str) -> str | None:
    """The callgrind output of the thread that served the requests."""
    for name in sorted(glob.glob(prefix + "-*")):
        if "accessHandlerCallback" in open(name).read():
            return name
    return None


def inclusive(path: str) -> dict[str, int]:
    """Inclusive instructions by function, as callgrind_annotate gives them."""
    output = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100", path],
        capture_output=True, text=True, check=True).stdout
    counts: dict[str, int] = {}
    for line in output.splitlines():
        match = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if match:
            # callgrind_annotate lists a function once per source file its code (inlined code
            # included) comes from; the largest of those entries holds its calls: it is kept.
            name = re.sub(r" \[[^\[\]]*\]$", "", match.group(2))
            name = name.split(":", 1)[1] if ":" in name else name
            counts[name] = max(counts.get(name, 0), int(match.group(1).replace(",", "")))
    return counts


def functions(directory: str, limit: int) -> None:
    """Prints the `limit` functions with the most instructions per action (demangled when
    swift-demangle is there)."""
    functions_between(os.path.join(directory, "callgrind-300"), os.path.join(directory, "callgrind-900"), 600, limit)


def functions_between(short_prefix: str, long_prefix: str, requests: int, limit: int) -> None:
    """Prints the `limit` functions with the most instructions per request between the serving
    threads of two runs (callgrind outputs `short_prefix-*` and `long_prefix-*`), the longer run
    `requests` requests longer (also for bench/callgrind_page.py)."""
    short = inclusive(serving_thread(short_prefix))
    long = inclusive(serving_thread(long_prefix))
    rows = sorted(((long.get(name, 0) - short.get(name, 0)) / requests, name) for name in set(short) | set(long))
    text = "\n".join(f"{per:9.0f}  {name}" for per, name in reversed(rows[-limit:]))
    try:
        text = subprocess.run(["swift", "demangle", "--simplified"], input=text, capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pass
    print(text.rstrip())


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
    with tempfile.TemporaryDirectory() as directory:
        short = count(binary, 300, directory)
        long = count(binary, 900, directory)
        if keep:
            shutil.copytree(directory, keep, dirs_exist_ok=True)
        if limit:
            functions(directory, limit)
    print(f"instructions per showList/pop action: {(long - short) / 600:.0f}")


if __name__ == "__main__":
    main()
