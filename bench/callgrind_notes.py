#!/usr/bin/env python3
"""Instructions per logged-in read and per action of Notes (its notes in the user's store) beside
the demo's, counted by callgrind: where scenario (k)'s difference goes (bench/userpages.py).

Runs each binary under `valgrind --tool=callgrind` as bench/callgrind_actions.py does (one epoll
thread, memory store, no access log, one keep-alive connection after one login; only the thread
that serves requests counted), twice per kind of request — SHORT and LONG requests — and prints
(instructions of the long run - those of the short run) / (LONG - SHORT):

  read    GET /api/state at the demo's main screen / at Notes' list (the welcome note)
  action  showList/pop (demo) / open the welcome note and back (Notes)

`--functions N` prints, per kind, the N functions whose instructions per request differ most
between Notes and the demo (inclusive, as callgrind_annotate counts them).
`--only read` or `--only action` counts that kind alone.
Usage: python3 bench/callgrind_notes.py [--functions N] [--only KIND] .build/release/appshell Examples/Notes/.build/release/notes
"""

import glob
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_actions  # noqa: E402  (inclusive, serving_thread)
import userpages  # noqa: E402  (the Notes user's cheap hash)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHORT, LONG = 300, 900
WORK = {
    ("demo", "read"): [("GET", "/api/state", None)],
    ("demo", "action"): [("POST", "/api/actions", '{"action":"showList"}'), ("POST", "/api/actions", '{"action":"pop"}')],
    ("notes", "read"): [("GET", "/api/state", None)],
    ("notes", "action"): [("POST", "/api/actions", '{"action":"open","id":1}'), ("POST", "/api/actions", '{"action":"back"}')],
}


def run(app, binary, kind, requests, out, directory):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    env = dict(os.environ, APPSHELL_THREADS="1", APPSHELL_STORE="memory", APPSHELL_PORT=str(port),
               APPSHELL_ACCESS_LOG="false", APPSHELL_PASSWORD_CHECK_THREADS="1")
    env = {k: v for k, v in env.items() if not k.startswith("APPSHELL_") or k in (
        "APPSHELL_THREADS", "APPSHELL_STORE", "APPSHELL_PORT", "APPSHELL_ACCESS_LOG",
        "APPSHELL_PASSWORD_CHECK_THREADS")}
    if app == "demo":
        env.update(APPSHELL_SPLASH_DELAY_MILLISECONDS="0", APPSHELL_CONFIG=os.path.join(ROOT, "config.json"),
                   APPSHELL_PUBLIC_DIRECTORY=os.path.join(ROOT, "Public"))
        username, password, screen = "demo", "appshell", "main"
    else:
        config = os.path.join(directory, "notes-config.json")
        with open(config, "w") as f:
            json.dump({"users": [{"username": "bench000", "passwordHash": userpages.PASSWORD_HASH}]}, f)
        env.update(APPSHELL_SPLASH_MILLISECONDS="0", APPSHELL_CONFIG=config,
                   APPSHELL_PUBLIC_DIRECTORY=os.path.join(userpages.NOTES_PACKAGE, "Public"))
        username, password, screen = "bench000", userpages.PASSWORD, "notes"
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
                sys.exit(f"{app} did not start")
            time.sleep(0.3)
    cookie = None

    def request(method, path, body=None):
        nonlocal cookie
        headers = {"Content-Type": "application/json"} if body else {}
        if cookie:
            headers["Cookie"] = cookie
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        if response.getheader("Set-Cookie"):
            cookie = response.getheader("Set-Cookie").split(";")[0]
        return response.status, data

    request("GET", "/api/state")
    time.sleep(0.2)
    request("GET", "/api/state")
    status, body = request("POST", "/api/actions", json.dumps({"action": "login", "username": username,
                                                                "password": password}))
    if status != 200 or json.loads(body).get("screen") != screen:
        sys.exit(f"{app}: the login failed ({status})")
    steps = WORK[(app, kind)]
    for i in range(requests):
        method, path, payload = steps[i % len(steps)]
        if request(method, path, payload)[0] != 200:
            sys.exit(f"{app}: {method} {path} {payload} failed")
    connection.close()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=120)
    for name in glob.glob(out + "*"):
        text = open(name).read()
        if "accessHandlerCallback" in text:
            return sum(int(line.split()[1]) for line in text.splitlines() if line.startswith("summary:"))
    return 0


def main():
    arguments = sys.argv[1:]
    limit, kinds = 0, ("read", "action")
    while arguments[:1] in (["--functions"], ["--only"]):
        if arguments[0] == "--functions":
            limit = int(arguments[1])
        else:
            kinds = (arguments[1],)
        arguments = arguments[2:]
    binaries = {"demo": os.path.abspath(arguments[0]), "notes": os.path.abspath(arguments[1])}
    with tempfile.TemporaryDirectory() as directory:
        per = {}
        for kind in kinds:
            for app in ("demo", "notes"):
                short = run(app, binaries[app], kind, SHORT, os.path.join(directory, f"{app}-{kind}-short"), directory)
                long = run(app, binaries[app], kind, LONG, os.path.join(directory, f"{app}-{kind}-long"), directory)
                per[(app, kind)] = (long - short) / (LONG - SHORT)
            print(f"{kind}: demo {per[('demo', kind)]:.0f}, Notes {per[('notes', kind)]:.0f} instructions per request"
                  f" (x{per[('notes', kind)] / per[('demo', kind)]:.2f})", flush=True)
            if limit:
                rows = {}
                for app, sign in (("notes", 1), ("demo", -1)):
                    short = callgrind_actions.inclusive(callgrind_actions.serving_thread(
                        os.path.join(directory, f"{app}-{kind}-short")))
                    long = callgrind_actions.inclusive(callgrind_actions.serving_thread(
                        os.path.join(directory, f"{app}-{kind}-long")))
                    for name in set(short) | set(long):
                        rows[name] = rows.get(name, 0) + sign * (long.get(name, 0) - short.get(name, 0)) / (LONG - SHORT)
                top = sorted(rows.items(), key=lambda item: -abs(item[1]))[:limit]
                text = "\n".join(f"{value:+9.0f}  {name}" for name, value in top)
                try:
                    text = subprocess.run(["swift", "demangle", "--simplified"], input=text, capture_output=True,
                                          text=True, check=True).stdout
                except (OSError, subprocess.CalledProcessError):
                    pass
                print(f"{kind}: Notes - demo, per request, by function (inclusive):\n{text.rstrip()}", flush=True)


if __name__ == "__main__":
    main()
