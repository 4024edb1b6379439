#!/usr/bin/env python3
"""Scenarios (j) and (k) of `make bench`: the user's store (issue 34), on the example app Notes.

Notes (Examples/Notes, release build, `notes`) keeps each user's notes in the user's store
(`root.userDefaults`); a `save` on the compose sheet adds a note, and every other open page of
that user is rendered again and gets a `state` event (Shell+UserPages.swift). The server runs
with the SQLite store in a fresh temporary folder, pinned as run.py pins AppShell, with USERS
accounts in a configuration file of the run's (one cheap Argon2id hash, m=8 KiB t=1, for every
user: what is measured is the pages, not the logins; the hash's cost is in its string).

(j) USERS users, PAGES_PER_USER logged-in sessions each (1 000 by default), one event stream per
    session (`GET /api/events`, raw sockets, all from 127.0.0.1: the server's per-address limits
    are raised, SERVER_ENV). Then CHANGES times: a random user's random session opens the compose
    sheet (`compose`, not timed), then sends `save` with a title of its own; for each of that
    user's other PAGES_PER_USER - 1 pages, the time from sending the save (and from its answer)
    to the first `state` event that holds the title. p50/p99/max over every page of every change
    (and per round), the server's CPU per change (compose + save + the other pages' renders), of
    which the save and its fan-out. Goal: p99 <= 20 ms from the save's answer.
(k) a logged-in user's read and action with the user's store in play against (a) and (e) on the
    same build's demo: per round, interleaved, on fresh servers with the same store: the demo's
    (a) (GET /api/state, logged in), Notes' read (GET /api/state at the list, its notes read from
    the user's store), the demo's (e) (showList/pop on 64 sessions), Notes' action (open the
    welcome note / back on 64 sessions of 64 users); wrk as run.py measures (a) and (e), the
    server's CPU per request. Goal: Notes' CPU per request within 10 % of the demo's.

`python3 bench/userpages.py j|k` runs one alone (BENCH_NOTES_BINARY, BENCH_APPSHELL_BINARY,
BENCH_ROUNDS, BENCH_DURATION, BENCH_WARMUP, BENCH_QUICK as run.py reads them; BENCH_USER_CHANGES,
default 200); run.py runs them with BENCH_ONLY=j or BENCH_ONLY=k. Python 3 standard library only.
"""

import json
import os
import random
import re
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if __name__ == "__main__":
    sys.modules.setdefault("userpages", sys.modules[__name__])
import run  # noqa: E402  (the helpers of make bench: servers, wrk; read at call time only)
import streams  # noqa: E402  (percentile, raise_open_files)

NOTES_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Examples", "Notes")
NOTES_COOKIE = "notes_session"
USERS = 100
PAGES_PER_USER = 10
CHANGES = 200
CHANGE_INTERVAL = 0.05  # seconds between the starts of two changes
ACTION_USERS = 64  # (k): one session of each of this many users
PASSWORD = "bench-notes"
# Argon2id of PASSWORD with libsodium's smallest limits (m=8 KiB, t=1): a login costs ~0.3 ms.
PASSWORD_HASH = "$argon2id$v=19$m=8,t=1,p=1$0/ND6zldDjpBc/ftG5kwPA$5E8AEVAAJvZFse/oY5TtNdqV6eX7hrNfjDjLck3+Jl0"

TARGETS = {"fanout_p99_ms": 20.0, "cpu_ratio": 1.10}

SERVER_ENV = {
    "APPSHELL_MAX_CONNECTIONS": "4000",
    "APPSHELL_MAX_EVENT_STREAMS": "2000",  # within 3/4 of the connections
    "APPSHELL_MAX_CONNECTIONS_PER_IP": "0",
    "APPSHELL_MAX_EVENT_STREAMS_PER_IP": "0",
}


def user_name(index):
    return f"bench{index:03d}"


# --- the Notes server ----------------------------------------------------------------------------


def notes_binary(bench):
    """BENCH_NOTES_BINARY, or Notes' release build (built here)."""
    binary = os.environ.get("BENCH_NOTES_BINARY")
    if binary:
        run.log(f"using BENCH_NOTES_BINARY={binary} (no Swift build)")
    else:
        swift = os.environ.get("SWIFT", "swift")
        command = [swift, "build", "-c", "release", "--package-path", NOTES_PACKAGE, "--product", "notes"]
        run.log("building Notes: " + " ".join(command))
        subprocess.run(command, cwd=run.REPO, check=True)
        bin_path = subprocess.run([swift, "build", "-c", "release", "--package-path", NOTES_PACKAGE, "--show-bin-path"],
                                  cwd=run.REPO, check=True, capture_output=True, text=True).stdout.strip()
        binary = os.path.join(bin_path, "notes")
    if not os.access(binary, os.X_OK):
        raise run.BenchError(f"no Notes binary at {binary}")
    return binary


def notes_server(bench, binary, store, label, extra=None):
    """Notes on a free port with `store`, USERS accounts, the limits of SERVER_ENV."""
    port = run.free_port()
    data = tempfile.mkdtemp(prefix=f"notes-{store}-", dir=bench.tmp)
    config = os.path.join(data, "config.json")
    with open(config, "w") as f:
        json.dump({"users": [{"username": user_name(i), "passwordHash": PASSWORD_HASH} for i in range(USERS)]}, f)
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPSHELL_")}
    env.update({
        "APPSHELL_PORT": str(port),
        "APPSHELL_ACCESS_LOG": "false",
        "APPSHELL_SPLASH_MILLISECONDS": "0",
        "APPSHELL_THREADS": str(len(bench.machine.server_cpus)),
        "APPSHELL_NEW_SESSIONS_PER_MINUTE": "0",
        "APPSHELL_LOGIN_ATTEMPTS_PER_NETWORK": "0",
        "APPSHELL_MAX_SESSIONS_IN_MEMORY": str(run.SESSION_CAP),
        "APPSHELL_STORE": store,
        "APPSHELL_STORE_PATH": os.path.join(data, "notes.sqlite"),
        "APPSHELL_PUBLIC_DIRECTORY": os.path.join(NOTES_PACKAGE, "Public"),
        "APPSHELL_MAX_CONNECTIONS_PER_IP": "1024",
    })
    env.update(extra or {})
    argv = bench.machine.server_prefix() + [binary, "--config", config]
    return run.Server(label, argv, env, port, "/healthz", f"notes-{store}.log", cookie=NOTES_COOKIE)


def notes_login(port, username):
    """A logged-in Notes session of `username` (the cookie the login rotated to), at the list."""
    status, headers, body = run.request(port, "GET", "/api/state")
    cookie = run.set_cookie(headers, NOTES_COOKIE)
    if status != 200 or not cookie:
        raise run.BenchError(f"Notes: GET /api/state answered {status} without a cookie: {body[:200]!r}")
    for _ in range(200):  # the splash routes to login at once (splashMilliseconds 0)
        if json.loads(body).get("screen") == "login":
            break
        time.sleep(0.01)
        status, _, body = run.request(port, "GET", "/api/state", headers={"Cookie": f"{NOTES_COOKIE}={cookie}"})
    credentials = {"action": "login", "username": username, "password": PASSWORD}
    status, headers, body = run.request(
        port, "POST", "/api/actions", body=json.dumps(credentials),
        headers={"Content-Type": "application/json", "Cookie": f"{NOTES_COOKIE}={cookie}"})
    rotated = run.set_cookie(headers, NOTES_COOKIE)
    if status != 200 or not rotated or json.loads(body).get("screen") != "notes":
        raise run.BenchError(f"Notes: login of {username} answered {status}: {body[:300]!r}")
    return rotated


# --- (j) a change of the user's store reaching the user's other pages ------------------------------


class ChunkedStream:
    """An event stream's socket (non-blocking once open) and its decoded body: chunked transfer
    decoding, so that an event split across chunks is found whole."""

    def __init__(self, port, cookie):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall((f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                           f"Cookie: {NOTES_COOKIE}={cookie}\r\n\r\n").encode())
        self.raw = b""
        self.text = b""
        self.head = None
        deadline = time.monotonic() + 10
        while b"event: state\n" not in self.text:  # the current state, sent at once
            if time.monotonic() > deadline:
                raise run.BenchError("a Notes event stream sent no state in 10 s")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise run.BenchError(f"a Notes event stream was closed: {self.raw[:200]!r}")
            self.feed(chunk)
        self.sock.setblocking(False)
        self.text = b""

    def feed(self, data):
        self.raw += data
        if self.head is None:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            self.head, self.raw = self.raw[:end], self.raw[end + 4:]
            if not self.head.startswith(b"HTTP/1.1 200"):
                raise run.BenchError(f"GET /api/events answered {self.head[:60]!r}")
        while True:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end].split(b";")[0], 16)
            if len(self.raw) < line_end + 2 + size + 2:
                return
            self.text += self.raw[line_end + 2:line_end + 2 + size]
            self.raw = self.raw[line_end + 2 + size + 2:]

    def drain(self):
        """Reads what waits (without blocking); False once the server closed the stream."""
        while True:
            try:
                chunk = self.sock.recv(262144)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            self.feed(chunk)

    def close(self):
        self.sock.close()


class ActionConnection:
    """A keep-alive connection for one session's actions."""

    def __init__(self, port, cookie):
        self.port, self.cookie = port, cookie
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def send(self, payload):
        body = json.dumps(payload).encode()
        self.sock.sendall((f"POST /api/actions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           f"Cookie: {NOTES_COOKIE}={self.cookie}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
                          + body)

    def answer(self):
        """The answer, if whole in what was read: (status line, body) — or None."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = self.buffer[:end]
        length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
        if len(self.buffer) < end + 4 + length:
            return None
        body = self.buffer[end + 4:end + 4 + length]
        self.buffer = self.buffer[end + 4 + length:]
        return head.split(b"\r\n", 1)[0], body

    def read_more(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise run.BenchError("Notes closed an action connection")
        self.buffer += chunk

    def act(self, payload, timeout=10):
        self.send(payload)
        deadline = time.monotonic() + timeout
        poller = select.poll()  # select() stops at descriptor 1023
        poller.register(self.sock, select.POLLIN)
        while True:
            whole = self.answer()
            if whole:
                return whole
            if not poller.poll(max(0, deadline - time.monotonic()) * 1000):
                raise run.BenchError(f"no answer to {payload.get('action')} in {timeout} s")
            self.read_more()

    def close(self):
        self.sock.close()


def one_change(server, saver, pages, title, timeout=10):
    """`saver` (an ActionConnection) opens the sheet, then saves a note titled `title`; `pages`:
    the user's other pages' streams. Returns (ms from the save's send to each page's event,
    ms from the save's answer to each, ms from the save's send to its answer, CPU seconds of the
    compose, CPU seconds of the save and its fan-out)."""
    for page in pages:
        page.drain()
        page.text = b""
    cpu_0 = run.proc_cpu_seconds(server.pid)
    status, body = saver.act({"action": "compose"})
    if not status.startswith(b"HTTP/1.1 200"):
        raise run.BenchError(f"compose answered {status!r}: {body[:200]!r}")
    cpu_1 = run.proc_cpu_seconds(server.pid)
    needle = title.encode()
    poller = select.poll()
    by_fd = {page.sock.fileno(): page for page in pages}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    poller.register(saver.sock.fileno(), select.POLLIN)
    arrived = {}
    answered = None
    sent = time.perf_counter()
    saver.send({"action": "save", "title": title, "body": "a note of the bench"})
    deadline = time.monotonic() + timeout
    while answered is None or len(arrived) < len(pages):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise run.BenchError(f"the save of {title}: answer {'in' if answered else 'not in'} time,"
                                 f" {len(arrived)} of {len(pages)} pages told in {timeout} s")
        for fd, _ in poller.poll(remaining * 1000):
            now = time.perf_counter()
            if fd == saver.sock.fileno():
                saver.read_more()
                whole = saver.answer()
                if whole:
                    if not whole[0].startswith(b"HTTP/1.1 200"):
                        raise run.BenchError(f"save answered {whole[0]!r}: {whole[1][:200]!r}")
                    answered = now
                    poller.unregister(fd)
                continue
            page = by_fd[fd]
            if not page.drain():
                raise run.BenchError("Notes closed a page's event stream")
            if needle in page.text:
                arrived[fd] = now
                poller.unregister(fd)
    cpu_2 = run.proc_cpu_seconds(server.pid)
    from_send = [(t - sent) * 1000 for t in arrived.values()]
    from_answer = [(t - answered) * 1000 for t in arrived.values()]
    return from_send, from_answer, (answered - sent) * 1000, cpu_1 - cpu_0, cpu_2 - cpu_1


def live_round(bench, binary, round_number, changes, log):
    """One round of (j) on a fresh Notes (SQLite store): figures as a dict."""
    server = notes_server(bench, binary, "sqlite", "Notes (sqlite, user pages)", SERVER_ENV).start().wait_ready()
    opened, actions = [], []
    try:
        port = server.port
        started = time.monotonic()
        cookies = [[notes_login(port, user_name(u)) for _ in range(PAGES_PER_USER)] for u in range(USERS)]
        logins_s = time.monotonic() - started
        started = time.monotonic()
        pages = []
        for user_cookies in cookies:
            row = []
            for cookie in user_cookies:
                row.append(ChunkedStream(port, cookie))
                opened.append(row[-1])
            pages.append(row)
        opening_s = time.monotonic() - started
        log(f"  round {round_number}: {USERS * PAGES_PER_USER} sessions logged in ({logins_s:.1f} s),"
            f" {len(opened)} event streams open ({opening_s:.1f} s); RSS {run.mib(server.rss_kib())} MiB")
        rng = random.Random(34 + round_number)
        from_send, from_answer, compose_cpu, save_cpu = [], [], 0.0, 0.0
        per_change_max, saves = [], []
        time.sleep(1)
        cpu_before = run.proc_cpu_seconds(server.pid)
        loop_started = time.monotonic()
        next_at = loop_started
        for n in range(changes):
            user = rng.randrange(USERS)
            saver = rng.randrange(PAGES_PER_USER)
            # a connection of its own for each change (an idle keep-alive connection is closed by
            # the server after its timeout): the compose, untimed, opens it
            connection = ActionConnection(port, cookies[user][saver])
            actions.append(connection)
            others = [page for i, page in enumerate(pages[user]) if i != saver]
            title = f"bench {round_number}.{n} {rng.getrandbits(32):08x}"
            try:
                sends, answers, save_ms, c1, c2 = one_change(server, connection, others, title)
            finally:
                connection.close()
                actions.remove(connection)
            from_send += sends
            from_answer += answers
            per_change_max.append(max(sends))
            saves.append(save_ms)
            compose_cpu += c1
            save_cpu += c2
            next_at += CHANGE_INTERVAL
            pause = next_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        loop_s = time.monotonic() - loop_started
        cpu_after = run.proc_cpu_seconds(server.pid)
        closed = sum(1 for page in opened if not page.drain())
        if closed:
            raise run.BenchError(f"{closed} event streams closed during the round")
        pct = streams.percentile
        figures = {
            "round": round_number, "sessions": USERS * PAGES_PER_USER, "streams": len(opened),
            "changes": changes, "deliveries": len(from_send), "seconds": round(loop_s, 1),
            "logins_s": round(logins_s, 1), "opening_s": round(opening_s, 1),
            "send_p50_ms": round(statistics.median(from_send), 3), "send_p99_ms": round(pct(from_send, 0.99), 3),
            "send_max_ms": round(max(from_send), 3),
            "answer_p50_ms": round(statistics.median(from_answer), 3),
            "answer_p99_ms": round(pct(from_answer, 0.99), 3), "answer_max_ms": round(max(from_answer), 3),
            "last_page_p50_ms": round(statistics.median(per_change_max), 3),
            "last_page_p99_ms": round(pct(per_change_max, 0.99), 3),
            "save_p50_ms": round(statistics.median(saves), 3), "save_p99_ms": round(pct(saves, 0.99), 3),
            "save_max_ms": round(max(saves), 3),
            "cpu_ms_per_change": round((cpu_after - cpu_before) * 1000 / changes, 3),
            "compose_cpu_ms": round(compose_cpu * 1000 / changes, 3),
            "save_cpu_ms": round(save_cpu * 1000 / changes, 3),
            "rss_kib": server.rss_kib(),
        }
        log(f"  round {round_number}: {changes} changes, {len(from_send)} pages told: from the save's send"
            f" p50 {figures['send_p50_ms']:.2f} p99 {figures['send_p99_ms']:.2f} max {figures['send_max_ms']:.2f} ms;"
            f" from its answer p50 {figures['answer_p50_ms']:.2f} p99 {figures['answer_p99_ms']:.2f} ms;"
            f" the save answered in p50 {figures['save_p50_ms']:.2f} p99 {figures['save_p99_ms']:.2f} ms;"
            f" CPU {figures['cpu_ms_per_change']:.2f} ms per change (save and fan-out {figures['save_cpu_ms']:.2f})")
        return figures, from_send, from_answer
    finally:
        for thing in opened + actions:
            thing.close()
        server.stop()


def live_measure(bench, binary=None, log=None):
    """Scenario (j), `bench.rounds` rounds: the summary with every round's figures."""
    log = log or run.log
    binary = binary or notes_binary(bench)
    limit = streams.raise_open_files()
    if USERS * PAGES_PER_USER * 2 + 200 > limit:
        raise run.BenchError(f"(j) needs {USERS * PAGES_PER_USER * 2 + 200} open files; the hard limit is {limit}")
    changes = int(run.env_number("BENCH_USER_CHANGES", 50 if bench.quick else CHANGES, int))
    rounds, all_send, all_answer = [], [], []
    for round_number in range(1, bench.rounds + 1):
        figures, sends, answers = live_round(bench, binary, round_number, changes, log)
        rounds.append(figures)
        all_send += sends
        all_answer += answers
    med = run.median
    summary = {"users": USERS, "pages_per_user": PAGES_PER_USER, "changes_per_round": changes,
               "rounds": len(rounds), "server_env": SERVER_ENV, "targets": TARGETS,
               "deliveries": len(all_send),
               "pooled": {"send_p50_ms": round(statistics.median(all_send), 3),
                          "send_p99_ms": round(streams.percentile(all_send, 0.99), 3),
                          "send_max_ms": round(max(all_send), 3),
                          "answer_p50_ms": round(statistics.median(all_answer), 3),
                          "answer_p99_ms": round(streams.percentile(all_answer, 0.99), 3),
                          "answer_max_ms": round(max(all_answer), 3)},
               "rounds_detail": rounds}
    for key in ("send_p50_ms", "send_p99_ms", "send_max_ms", "answer_p50_ms", "answer_p99_ms", "answer_max_ms",
                "last_page_p99_ms", "save_p50_ms", "save_p99_ms", "save_max_ms", "cpu_ms_per_change",
                "compose_cpu_ms", "save_cpu_ms"):
        values = [r[key] for r in rounds]
        summary[key] = {"median": round(med(values), 3), "min": min(values), "max": max(values)}
    return summary


def render_live(j):
    def fig(key):
        v = j[key]
        return f"{v['median']:.2f} ({v['min']:.2f}-{v['max']:.2f})"

    p99 = j["answer_p99_ms"]["median"]
    return "\n".join([
        f"(j) a change of the user's store to the user's other pages: Notes (SQLite), {j['users']} users x"
        f" {j['pages_per_user']} pages with their event streams, {j['changes_per_round']} saves per round"
        f" (medians of {j['rounds']} round(s), spread):",
        f"  from the save's answer: p50 {fig('answer_p50_ms')}, p99 {fig('answer_p99_ms')}, max {fig('answer_max_ms')} ms"
        f" (target p99 <= {TARGETS['fanout_p99_ms']:.0f} ms: {'met' if p99 <= TARGETS['fanout_p99_ms'] else 'NOT MET'})",
        f"  from the save's send:   p50 {fig('send_p50_ms')}, p99 {fig('send_p99_ms')}, max {fig('send_max_ms')} ms;"
        f" the user's last page p99 {fig('last_page_p99_ms')} ms ({j['deliveries']} pages told in all)",
        f"  the save's own answer: p50 {fig('save_p50_ms')}, p99 {fig('save_p99_ms')}, max {fig('save_max_ms')} ms",
        f"  server CPU per change {fig('cpu_ms_per_change')} ms: the save and its fan-out {fig('save_cpu_ms')},"
        f" opening the sheet {fig('compose_cpu_ms')}",
    ])


# --- (k) a logged-in read and action with the user's store, against (a) and (e) ----------------------


def notes_wrk(bench, binary, scenario, store, round_number):
    """(a) or (e) on a fresh Notes: its read at the list, or open/back on ACTION_USERS sessions."""
    server = notes_server(bench, binary, store, f"Notes ({store})").start().wait_ready()
    try:
        port = server.port
        extra = {}
        if scenario == "a":
            cookie = notes_login(port, user_name(0))
            status, _, body = run.request(port, "GET", "/api/state", headers={"Cookie": f"{NOTES_COOKIE}={cookie}"})
            if status != 200 or json.loads(body).get("screen") != "notes":
                raise run.BenchError(f"Notes: GET /api/state answered {status}")
            extra["body_bytes"] = len(body)
            result = bench.measure(server, port, "/api/state", [f"Cookie: {NOTES_COOKIE}={cookie}"])
        else:
            cookies = [notes_login(port, user_name(u)) for u in range(ACTION_USERS)]
            sizes = []
            for action in ({"action": "open", "id": 1}, {"action": "back"}):
                status, _, body = run.request(port, "POST", "/api/actions", body=json.dumps(action),
                                              headers={"Content-Type": "application/json",
                                                       "Cookie": f"{NOTES_COOKIE}={cookies[0]}"})
                if status != 200:
                    raise run.BenchError(f"Notes: {action} answered {status}: {body[:200]!r}")
                sizes.append(len(body))
            extra["action_bytes"] = round(sum(sizes) / 2)
            lua = (run.ACTIONS_LUA.replace('{"action":"showList"}', '{"action":"open","id":1}')
                   .replace('{"action":"pop"}', '{"action":"back"}'))
            script = bench.lua("actions-notes.lua", lua % {
                "cookies": ", ".join(json.dumps(c) for c in cookies), "cookie_name": NOTES_COOKIE,
                "threads": bench.machine.wrk_threads} + run.REPORT_LUA)
            result = bench.measure(server, port, "/api/actions", [], script)
    finally:
        server.stop()
    result.update(extra)
    result.update({"server": "notes", "store": store, "scenario": "k-" + scenario, "round": round_number})
    bench.runs.append(result)
    bench.progress(result)
    return result


STORES = ("sqlite", "memory")


def compare_measure(bench, binary=None, log=None):
    """Scenario (k), `bench.rounds` rounds, interleaved per store: the demo's (a), Notes' read,
    the demo's (e), Notes' action. The medians and the ratios (Notes / demo) of CPU per request."""
    log = log or run.log
    binary = binary or notes_binary(bench)
    pairs = {}
    for round_number in range(1, bench.rounds + 1):
        log(f"(k) round {round_number} of {bench.rounds}")
        for store in STORES:
            for scenario in ("a", "e"):
                demo = bench.run_appshell(scenario, store, round_number)
                demo["scenario"] = f"k-{scenario}-demo"  # kept apart from the full run's (a) and (e)
                notes = notes_wrk(bench, binary, scenario, store, round_number)
                pairs.setdefault((scenario, store), []).append((demo, notes))
    summary = {"rounds": bench.rounds, "targets": TARGETS, "comparisons": []}
    med = run.median
    for (scenario, store), rows in pairs.items():
        demo_cpu = [d["cpu_us_per_request"] for d, _ in rows]
        notes_cpu = [n["cpu_us_per_request"] for _, n in rows]
        ratios = [n / d for d, n in zip(demo_cpu, notes_cpu) if d and n]
        summary["comparisons"].append({
            "scenario": scenario, "store": store,
            "demo_rps": round(med(d["rps"] for d, _ in rows)), "notes_rps": round(med(n["rps"] for _, n in rows)),
            "demo_cpu_us": round(med(demo_cpu), 1), "notes_cpu_us": round(med(notes_cpu), 1),
            "demo_cpu_spread": [min(demo_cpu), max(demo_cpu)], "notes_cpu_spread": [min(notes_cpu), max(notes_cpu)],
            "cpu_ratio": round(med(ratios), 3), "cpu_ratio_spread": [round(min(ratios), 3), round(max(ratios), 3)],
            "demo_bytes": rows[0][0].get("body_bytes") or rows[0][0].get("action_bytes"),
            "notes_bytes": rows[0][1].get("body_bytes") or rows[0][1].get("action_bytes"),
            "notes_errors": sum(n["status_errors"] for _, n in rows),
        })
    return summary


def render_compare(k):
    lines = [f"(k) a logged-in user's read and action with the user's store (Notes) against the demo's (a) and (e),"
             f" same build, medians of {k['rounds']} round(s):"]
    names = {"a": "read  GET /api/state        ", "e": "action open/back vs showList/pop"}
    for c in k["comparisons"]:
        met = "met" if c["cpu_ratio"] <= TARGETS["cpu_ratio"] else "NOT MET"
        lines.append(
            f"  {names[c['scenario']]} {c['store']:<6}: CPU {c['notes_cpu_us']:.1f} us/req"
            f" ({c['notes_cpu_spread'][0]:.1f}-{c['notes_cpu_spread'][1]:.1f}) against {c['demo_cpu_us']:.1f}"
            f" ({c['demo_cpu_spread'][0]:.1f}-{c['demo_cpu_spread'][1]:.1f}): x{c['cpu_ratio']:.2f}"
            f" ({c['cpu_ratio_spread'][0]:.2f}-{c['cpu_ratio_spread'][1]:.2f}; target <= x{TARGETS['cpu_ratio']:.2f}: {met});"
            f" {c['notes_rps']} against {c['demo_rps']} req/s; answers {c['notes_bytes']} against {c['demo_bytes']} B")
    return "\n".join(lines)


# --- alone -----------------------------------------------------------------------------------------


def main(which):
    os.makedirs(run.LOGS, exist_ok=True)
    bench = run.Bench()
    try:
        if which == "k":
            bench.build()
        if bench.machine.pinned:
            os.sched_setaffinity(0, bench.machine.load_cpus)
        bench.report_lua = bench.lua("report.lua", run.REPORT_LUA)
        binary = notes_binary(bench)
        if which == "j":
            text = render_live(live_measure(bench, binary))
        else:
            text = render_compare(compare_measure(bench, binary))
        print()
        print(text)
        return 0
    except KeyboardInterrupt:
        return 130
    except (run.BenchError, subprocess.CalledProcessError) as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        for server in list(run.RUNNING):
            server.stop()


def self_test():
    """The parsers and lines on fixed input: run by `make bench-check`, starts nothing."""
    class Fake(ChunkedStream):
        def __init__(self):
            self.raw, self.text, self.head = b"", b"", None

    page = Fake()
    page.feed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n1e\r\nevent: state\nid: c.3\ndata:")
    assert page.text == b"", page.text
    page.feed(b" {}\n\r\n5\r\n\n: hb\r\n")
    assert page.text == b"event: state\nid: c.3\ndata: {}\n\n: hb", page.text
    assert user_name(7) == "bench007"
    span = {"median": 5.0, "min": 4.0, "max": 6.0}
    j = {"users": 100, "pages_per_user": 10, "changes_per_round": 200, "rounds": 1, "deliveries": 1800,
         **{k: span for k in ("send_p50_ms", "send_p99_ms", "send_max_ms", "answer_p50_ms", "answer_p99_ms",
                              "answer_max_ms", "last_page_p99_ms", "save_p50_ms", "save_p99_ms", "save_max_ms",
                              "cpu_ms_per_change", "compose_cpu_ms", "save_cpu_ms")}}
    assert "p99 5.00 (4.00-6.00)" in render_live(j) and "NOT MET" not in render_live(j)
    k = {"rounds": 1, "comparisons": [{"scenario": "a", "store": "sqlite", "notes_cpu_us": 11.0, "demo_cpu_us": 10.0,
                                       "notes_cpu_spread": [11.0, 11.0], "demo_cpu_spread": [10.0, 10.0],
                                       "cpu_ratio": 1.1, "cpu_ratio_spread": [1.1, 1.1], "notes_rps": 9,
                                       "demo_rps": 10, "notes_bytes": 1, "demo_bytes": 1}]}
    assert "x1.10 (1.10-1.10; target <= x1.10: met)" in render_compare(k), render_compare(k)
    print("userpages self-test: 3 passed, 0 failed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    if sys.argv[1:] in (["j"], ["k"]):
        sys.exit(main(sys.argv[1]))
    print("usage: bench/userpages.py j|k|--self-test", file=sys.stderr)
    sys.exit(2)
