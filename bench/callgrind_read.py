#!/usr/bin/env python3
"""Instructions per logged-in `GET /api/state`, counted by callgrind (the Performance article).

Runs the given appshell binary (build it with `swift build -c release`) under
`valgrind --tool=callgrind` twice — 1 000 and 3 000 reads on one keep-alive connection after one
login, one epoll thread, memory store, no access log — and prints
(instructions of the 3 000-read run - those of the 1 000-read run) / 2 000, counting only the
thread that serves requests (other threads' work depends on the wall-clock time, which valgrind
stretches). Needs Debian's valgrind. Usage: python3 bench/callgrind_read.py .build/release/appshell
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def count(binary: str, reads: int, directory: str) -> int:
    """The serving thread's instructions for `reads` logged-in reads (and the start, login, stop)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    out = os.path.join(directory, f"callgrind-{reads}")
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
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
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
        headers = {"Content-Type": "application/json"} if body else {}
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
    for _ in range(reads):
        if request("GET", "/api/state") != 200:
            sys.exit("a read failed")
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
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/appshell"))
    with tempfile.TemporaryDirectory() as directory:
        short = count(binary, 1000, directory)
        long = count(binary, 3000, directory)
    print(f"instructions per logged-in GET /api/state: {(long - short) / 2000:.0f}")


if __name__ == "__main__":
    main()
