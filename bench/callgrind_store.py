#!/usr/bin/env python3
"""Instructions per showList/pop action with either store, counted by callgrind (the Performance article,
"The store path").

Runs the given appshell binary (build it with `swift build -c release`) under
`valgrind --tool=callgrind` twice — SHORT and LONG actions after the logins, one epoll thread, no
access log — and prints (instructions of the LONG run - those of the SHORT run) / (LONG - SHORT),
counting ALL threads (with the SQLite store the writer thread does part of the work), and each
thread's share. With CLIENTS > 1, that many sessions act at once, each on its own connection and
Python thread, so that the SQLite store's writer batches their writes (how many per transaction
varies with the scheduling: the script prints the writer's batch counters). Needs Debian's
valgrind. With CALLGRIND_KEEP=folder, the runs' callgrind files are copied there (per thread, for
callgrind_annotate). Usage:

    python3 bench/callgrind_store.py .build/release/appshell sqlite [SHORT LONG [CLIENTS]]
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
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


class Session:
    """One logged-in session; its actions go over a fresh keep-alive connection (the logins under
    valgrind take long enough for an idle connection to time out)."""

    def __init__(self, port: int):
        self.port = port
        self.cookie = None
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.request("GET", "/api/state")
        time.sleep(0.2)
        self.request("GET", "/api/state")
        login = json.dumps({"action": "login", "username": "demo", "password": "appshell"})
        if self.request("POST", "/api/actions", login) != 200:
            sys.exit("the demo login failed (is config.json's demo user there?)")
        self.connection.close()
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def request(self, method: str, path: str, body: str | None = None) -> int:
        headers = {"Content-Type": "application/json"} if body else {}
        if self.cookie:
            headers["Cookie"] = self.cookie
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        response.read()
        if response.getheader("Set-Cookie"):
            self.cookie = response.getheader("Set-Cookie").split(";")[0]
        return response.status

    def act(self, count: int, failures: list) -> None:
        for index in range(count):
            name = "showList" if index % 2 == 0 else "pop"
            if self.request("POST", "/api/actions", json.dumps({"action": name})) != 200:
                failures.append(name)


def count(binary: str, store: str, actions: int, clients: int, directory: str) -> tuple[dict, list]:
    """Each thread's instructions for `actions` actions (and the start, logins and stop), and the
    store writer's batch counters."""
    port = free_port()
    out = os.path.join(directory, f"callgrind-{store}-{actions}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPSHELL_")}
    env.update(
        APPSHELL_THREADS="1", APPSHELL_STORE=store, APPSHELL_PORT=str(port),
        APPSHELL_STORE_PATH=os.path.join(directory, f"store-{actions}.sqlite"),
        APPSHELL_ACCESS_LOG="false", APPSHELL_SPLASH_DELAY_MILLISECONDS="0",
        # One client logs every session in: no per-client limit on logins or new sessions.
        APPSHELL_LOGIN_ATTEMPTS_PER_NETWORK="0", APPSHELL_NEW_SESSIONS_PER_MINUTE="0",
        APPSHELL_PASSWORD_CHECK_THREADS="1", APPSHELL_CONFIG=os.path.join(ROOT, "config.json"),
        APPSHELL_PUBLIC_DIRECTORY=os.path.join(ROOT, "Public"))
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out, binary],
        env=env, cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while True:
        try:
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            probe.connect()
            probe.close()
            break
        except OSError:
            if time.time() > deadline:
                server.kill()
                sys.exit("the server did not start")
            time.sleep(0.3)
    sessions = [Session(port) for _ in range(clients)]
    failures: list = []
    threads = [threading.Thread(target=s.act, args=(actions // clients, failures)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        server.kill()
        sys.exit(f"{len(failures)} actions failed")
    metrics = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    metrics.request("GET", "/metrics")
    batches = [line for line in metrics.getresponse().read().decode().splitlines()
               if line.startswith(("appshell_store_batches_total", "appshell_store_batch_writes_sum"))]
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=300)
    keep = os.environ.get("CALLGRIND_KEEP")
    if keep:  # a folder to copy the runs' callgrind files to (for callgrind_annotate)
        os.makedirs(keep, exist_ok=True)
        for name in glob.glob(out + "*"):
            shutil.copy(name, os.path.join(keep, f"{actions}-" + os.path.basename(name)))
    totals = {}
    for name in glob.glob(out + "*"):
        with open(name) as file:
            text = file.read()
        totals[name.rsplit("-", 1)[-1]] = sum(
            int(line.split()[1]) for line in text.splitlines() if line.startswith("summary:"))
    return totals, batches


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[2] not in ("memory", "sqlite"):
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    store = sys.argv[2]
    short, long = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (300, 900)
    clients = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    with tempfile.TemporaryDirectory() as directory:
        first, first_batches = count(binary, store, short, clients, directory)
        second, second_batches = count(binary, store, long, clients, directory)
    actions = (long // clients - short // clients) * clients
    for thread in sorted(set(first) | set(second)):
        share = (second.get(thread, 0) - first.get(thread, 0)) / actions
        if abs(share) >= 1000:
            print(f"  thread {thread}: {share:.0f} per action")
    if store == "sqlite":
        print(f"  writer batches: {first_batches} then {second_batches}")
    print(f"instructions per action ({store} store, {clients} session(s), all threads): "
          f"{(sum(second.values()) - sum(first.values())) / actions:.0f}")


if __name__ == "__main__":
    main()
