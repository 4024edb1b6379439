#!/usr/bin/env python3
"""`make bench`: AppShell against the C reference server, measured in the same run.

Builds AppShell (release) and the C reference (bench/c-reference/main.c), then measures with wrk
on loopback (keep-alive, 64 connections, one wrk thread per core wrk has, after a warm-up), the
server and wrk pinned to different cores:

  (a) GET /api/state with a logged-in session's cookie
  (b) GET /api/state without a cookie (a new session per request)
  (c) GET /main (HTML) for a logged-in session
  (d) GET /app.css (a static file)
  (e) POST /api/actions, showList and pop alternating per logged-in session (64 sessions)
  (f) (a) while 4 other clients log in with the right password on fresh sessions (memory store)
  (g) 15 000 open event streams: RSS per stream, action-to-stream delivery, (a) beside them
      (bench/streams.py)
  (h) (a) and (e) through nginx in front of two instances on Redis, against one (bench/scaleout.py)
  (i) memory per visitor's session: GET / without a cookie, then GET /login?next=/ + 7 000 bytes
      with its cookie, VISITOR_SESSIONS times after a warm-up (and with a short next, the baseline)
  (j) the user's store (issue 34), on the example app Notes: 100 users with 10 logged-in pages
      each, their event streams open; a save of a note by one page, and the time until each of
      the user's other pages has it in a `state` event (bench/userpages.py)
  (k) a logged-in read and action of Notes (its notes in the user's store) against the demo's
      (a) and (e), same build, interleaved: CPU per request (bench/userpages.py)
  (l) the shared store's cost (issue 36): reads of one and of 16 sessions, actions, actions with
      event streams open, on the SQLite store and on Redis, interleaved: AppShell's and
      redis-server's CPU per request, Redis's commands, round trips and bytes per request
      (bench/redis_cost.py)
  (m) the actions a Redis Cluster serves (issue 36): one primary against three, each held to the
      same small CPU share (a cgroup), AppShell and wrk beside them unsaturated: actions/s, each
      primary's CPU per action and over its quota, three / one (bench/redis_capacity.py; with
      BENCH_ONLY=m only: it needs root and cgroup v1's cpu controller)
  TLS (a) and (e) over HTTPS, keep-alive, beside the C reference serving HTTPS with the same
      libmicrohttpd, GnuTLS priorities and pinning; (a) with a new connection per request (wrk
      with `Connection: close`, NEW_CONNECTION_CLIENTS connections) over HTTPS and over HTTP: the
      cost of a handshake; what an OpenSSL client negotiates with each (openssl s_client: protocol,
      key exchange, HelloRetryRequest, resumption); the memory per idle connection (HTTPS and
      HTTP, both servers: BENCH_TLS_CONNECTIONS, default 2000, each with one request answered,
      then idle). The certificate is a self-signed EC P-256 pair made per run by openssl in the
      run's temporary folder (removed at the end)

with the memory store and the SQLite store, and the C reference on (a) and (b) and on (e) without
a store and with one SQLite commit per action (answers padded to AppShell's), interleaved round by
round (medians); each measurement also gives the server's CPU time per request. Then the memory
per idle session, the RSS after 100k and 1M cookieless requests (bounded by the session cap) and the cold start to the first 200. Prints a table and writes it as
JSON to bench/out/latest.json. Every server it starts is stopped, also on Ctrl-C.

Environment: BENCH_DURATION (seconds per measurement, default 10), BENCH_ROUNDS (default 5),
BENCH_WARMUP (seconds, default 2), BENCH_QUICK=1 (2 s runs, 1 round, no 1M-request run),
BENCH_STREAMS (the streams of (g), default 15000), BENCH_APPSHELL_BINARY (use this binary, skip
the Swift build), BENCH_ONLY=e (only scenario (e), its rounds and medians: for measuring a change
to the action path), BENCH_ONLY=h (only scenario (h)), BENCH_ONLY=i (only scenario (i);
BENCH_VISITOR_SESSIONS, default 5000, the sessions measured per round), BENCH_ONLY=tls (only
the TLS part, with (a) over plain HTTP beside it; writes latest.json with only that part),
BENCH_ONLY=j or k (only scenario (j) or (k); BENCH_NOTES_BINARY: use this Notes binary, skip
its build; BENCH_USER_CHANGES, default 200, the saves per round of (j)),
BENCH_ONLY=l (only scenario (l); BENCH_REDIS_RELAY=1 adds two instances on one Redis),
BENCH_ONLY=m (only scenario (m); BENCH_REDIS_QUOTA, default 5, each primary's share of a core in
%; BENCH_REDIS_SESSIONS, default 240),
BENCH_ONLY=f (only scenario (f) beside (a) alone, its medians; bench/machinery.py measures it
unpinned, with the actions too, for variants of the server side by side), CC (the C
compiler, default cc), SWIFT (the swift command).

Python 3 standard library only. `python3 bench/run.py --self-test` checks the parsers, compiles the
C reference (warnings are errors) and checks its answers on a free port for a second, over HTTP
and over HTTPS (a certificate made by openssl), and that its TLS priorities are AppShell's.
"""

import datetime
import http.client
import json
import os
import platform
import re
import resource
import select
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

if __name__ == "__main__":
    sys.modules.setdefault("run", sys.modules[__name__])  # bench/streams.py imports this file as `run`
import streams  # noqa: E402  (scenario (g), bench/streams.py)
import scaleout  # noqa: E402  (scenario (h), bench/scaleout.py)
import userpages  # noqa: E402  (scenarios (j) and (k), bench/userpages.py)
import redis_cost  # noqa: E402  (scenario (l), bench/redis_cost.py)
import redis_capacity  # noqa: E402  (scenario (m), bench/redis_capacity.py)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "bench", "out")
LOGS = os.path.join(OUT, "logs")
COOKIE = "appshell_session"
WRK_CONNECTIONS = 64
ACTION_SESSIONS = 64
IDLE_SESSIONS = 100_000
MANY_REQUESTS = 1_000_000
SESSION_CAP = 100_000
COLD_STARTS = 5
C_REFERENCE_SOURCE = os.path.join(REPO, "bench", "c-reference", "main.c")
# the C reference's settings from the environment: c_server sets those it needs, drops the others
C_REFERENCE_VARIABLES = ("BODY_BYTES", "ACTION_BYTES", "STORE", "SNAPSHOT_BYTES", "TLS_CERT", "TLS_KEY",
                         "CONNECTION_LIMIT", "CONNECTION_TIMEOUT")
# What the C reference commits per action with a store (SNAPSHOT_BYTES): about what AppShell's
# SQLite store writes for one of the demo's sessions (its defaults and its snapshot).
C_SNAPSHOT_BYTES = 2500
LOGIN_CLIENTS = 4  # scenario (f): clients logging in one after another beside the reads
# scenario (i): visitors' sessions measured per round (BENCH_VISITOR_SESSIONS), after a warm-up of
# VISITOR_WARMUP; each opens / without a cookie, then /login?next=… with the cookie it got
VISITOR_SESSIONS = 5000
VISITOR_WARMUP = 200
# the nexts of (i): issue 31's long one (7 000 bytes after the slash: the server keeps at most 512,
# RequestChecks.maxPathBytes) and a short one, the baseline
VISITOR_NEXTS = (("long", "/" + "a" * 7000), ("short", "/main/list"))

# The TLS part (BENCH_ONLY=tls; issue 32, point 5): (a) and (e) over HTTPS beside the C reference
# serving HTTPS with the same libmicrohttpd and priorities, a new connection per request (each a
# full handshake: see tls_negotiated) over HTTPS and over plain HTTP, and the memory per idle
# connection (BENCH_TLS_CONNECTIONS of them, after IDLE_WARMUP opened and closed).
TLS_CONNECTIONS = 2000
# wrk's connections with a new connection per request: each new connection spends round trips
# (TCP, then TLS: two with the HelloRetryRequest of tls_negotiated) waiting, not computing, so
# more connections than (a)'s keep the server's core busy (the report's server CPU share says
# whether they did)
NEW_CONNECTION_CLIENTS = 256
IDLE_WARMUP = 100
TLS_SCENARIOS = {
    "a-tls": "(a) over HTTPS, keep-alive",
    "e-tls": f"(e) over HTTPS, keep-alive, {ACTION_SESSIONS} sessions",
    "new-tls": "(a) over HTTPS, a new connection per request",
    "new": "(a) over HTTP, a new connection per request",
    "a": "(a) over HTTP, keep-alive (the baseline)",
}
APPSHELL_PRIORITIES_SOURCE = os.path.join(REPO, "Sources", "AppShellHTTP", "Network", "TLSCertificates.swift")

TARGETS = {
    "a": {"rps_ratio": 0.90, "p99_ratio": 1.3},
    # the TLS part: (a) over HTTPS, AppShell (memory store) over the C reference over HTTPS
    "a_tls": {"rps_ratio": 0.90},
    "b": {"rps_ratio": 0.80},
    "idle_session_bytes": 1024,
    "rss_growth_1m": 1.5,
    "cold_start_ms": 150,
    # (e): AppShell's actions/s over the C reference's, per store; SQLite also over AppShell's memory
    "e": {"memory_vs_c": 0.30, "sqlite_vs_c_sqlite": 1.5, "sqlite_vs_memory": 0.80},
    # (f): reads of one session while LOGIN_CLIENTS log in, over (a) alone; p99 at most
    "f": {"rps_ratio": 0.45, "p99_ms": 5.0},
    # (i): RSS per visitor's session with the long next (issue 31, finding 2), bytes at most
    "visitor_session_bytes": 4096,
}


def appshell_connection_memory():
    """The connectionMemoryBytes AppShell runs with here: config.json's, else the default."""
    try:
        with open(os.path.join(REPO, "config.json")) as f:
            return int(json.load(f).get("connectionMemoryBytes", 16384))
    except (OSError, ValueError):
        return 16384


# libmicrohttpd zeroes a connection's memory pool after every request, so its size is a cost per
# request: the report says which size each side runs with.
CONNECTION_MEMORY_NOTE = (f"connection memory (zeroed after every request): AppShell {appshell_connection_memory()} B"
                          " (connectionMemoryBytes), the C reference 32768 B (libmicrohttpd's default)")

SCENARIOS = {
    "a": "GET /api/state, logged-in cookie",
    "b": "GET /api/state, no cookie (new session each)",
    "c": "GET /main (HTML), logged in",
    "d": "GET /app.css (static file)",
    "e": f"POST /api/actions showList+pop, {ACTION_SESSIONS} sessions",
    "f": f"GET /api/state, logged in; {LOGIN_CLIENTS} logging in",
}

# A `done` hook for every wrk run: the exact figures on one line, latencies in microseconds.
REPORT_LUA = r"""
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH_RESULT requests=%.0f duration_us=%.0f bytes=%.0f connect=%.0f read=%.0f write=%.0f " ..
    "status=%.0f timeout=%.0f p50=%.1f p90=%.1f p99=%.1f max=%.1f mean=%.1f\n",
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
end
"""

# The start of a wrk script whose threads each take their own part of the work: wrk's setup() runs
# once per thread before it starts, and gives each its number, `tid` (0 to the threads less one).
THREAD_NUMBERING_LUA = r"""
local next_thread = 0
function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end
"""

# Scenario (e). wrk's request() does not say which connection it is for, so each thread takes its
# own slice of the sessions (thread k of n: sessions k+1, k+1+n, ...) and goes round them in order,
# every session alternating showList and pop. With as many sessions per thread as connections per
# thread, a session's next request is sent when its previous one has normally been answered;
# when two of one session's requests are in flight at once and run in the other order, the server
# answers 409 (wrk counts them as status errors), and the alternation heals itself.
ACTIONS_LUA = THREAD_NUMBERING_LUA + r"""
local cookies = {%(cookies)s}
local pushes, pops = {}, {}
local count, sent = 0, 0
local verify_pending = false

local function action(cookie, body)
  local headers = {["Content-Type"] = "application/json", ["Cookie"] = "%(cookie_name)s=" .. cookie}
  return wrk.format("POST", "/api/actions", headers, body)
end

function init(args)
  for i = 1, #cookies do
    if (i - 1) %% %(threads)d == tid then
      table.insert(pushes, action(cookies[i], '{"action":"showList"}'))
      table.insert(pops, action(cookies[i], '{"action":"pop"}'))
    end
  end
  count = #pushes
  -- wrk calls request() once on the first thread's state before the run to check the request:
  -- that call must not advance the sequence.
  verify_pending = (tid == 0)
end

function request()
  if verify_pending then
    verify_pending = false
    return pushes[1]
  end
  local session = sent %% count
  local phase = math.floor(sent / count) %% 2
  sent = sent + 1
  if phase == 0 then return pushes[session + 1] end
  return pops[session + 1]
end
"""


class BenchError(Exception):
    """A step that cannot go on (a server that does not start, a wrong answer, a missing tool)."""


# --- small helpers -----------------------------------------------------------------------------


def env_number(name, default, kind=float):
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = kind(value)
    except ValueError:
        raise BenchError(f"{name} must be a number, got {value!r}") from None
    if number <= 0:
        raise BenchError(f"{name} must be positive, got {value!r}")
    return number


def log(message):
    print(message, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None, timeout=30, tls=None):
    """One request on its own connection (over TLS with `tls`, an ssl.SSLContext): (status,
    [(name, value)], body bytes)."""
    if tls:
        connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=tls)
    else:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        connection.close()


def set_cookie(headers, name=COOKIE):
    """The value that `Set-Cookie` gives the cookie `name`, or None."""
    for key, value in headers:
        if key.lower() == "set-cookie":
            pair = value.split(";", 1)[0].strip()
            if pair.startswith(name + "="):
                return pair[len(name) + 1 :]
    return None


def parse_metrics(text):
    """Prometheus text to {name: value} (samples without labels)."""
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and not line.startswith("#"):
            try:
                values[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return values


def proc_status_kib(pid, field):
    """VmRSS or VmHWM of a process in KiB (None once it has gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def proc_cpu_split(pid):
    """The user and the system CPU time a process has used, in seconds: (user, system), or None
    once it has gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick  # utime, stime


def proc_cpu_seconds(pid):
    """The user and system CPU time a process has used, in seconds (None once it has gone)."""
    split = proc_cpu_split(pid)
    return None if split is None else split[0] + split[1]


def cpu_per_request(before, after, requests):
    """Microseconds of the server's CPU time per request: unlike requests/s, barely moved by other
    processes on the machine (they take the server's turns, not its work per request)."""
    if before is None or after is None or not requests:
        return None
    return round((after - before) * 1e6 / requests, 1)


def children_cpu_seconds():
    """The user and system CPU time of this process's waited-for children (wrk), in seconds."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tcp_passive_opens():
    """The kernel's count of TCP connections accepted since boot (/proc/net/snmp), or None."""
    try:
        with open("/proc/net/snmp") as snmp:
            rows = [line.split() for line in snmp if line.startswith("Tcp:")]
        return int(rows[1][rows[0].index("PassiveOpens")])
    except (OSError, IndexError, ValueError):
        return None


def parse_wrk(output):
    """wrk's stdout (with the REPORT_LUA hook) to a dict of figures; latencies in ms."""
    match = re.search(r"^BENCH_RESULT (.*)$", output, re.MULTILINE)
    if not match:
        raise BenchError("wrk printed no result:\n" + output[-2000:])
    raw = {key: float(value) for key, value in (item.split("=") for item in match.group(1).split())}
    seconds = raw["duration_us"] / 1e6
    requests = int(raw["requests"])
    return {
        "requests": requests,
        "seconds": round(seconds, 3),
        "rps": round(requests / seconds, 1) if seconds > 0 else 0.0,
        "p50_ms": round(raw["p50"] / 1000, 3),
        "p90_ms": round(raw["p90"] / 1000, 3),
        "p99_ms": round(raw["p99"] / 1000, 3),
        "max_ms": round(raw["max"] / 1000, 3),
        "mean_ms": round(raw["mean"] / 1000, 3),
        "bytes_per_response": round(raw["bytes"] / requests) if requests else 0,
        "status_errors": int(raw["status"]),
        "socket_errors": int(raw["connect"] + raw["read"] + raw["write"] + raw["timeout"]),
        "timeouts": int(raw["timeout"]),
    }


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def mib(kib):
    return None if kib is None else round(kib / 1024, 1)


# --- the machine and pinning -------------------------------------------------------------------


class Machine:
    """The cores: the server on the first half, wrk (and this script) on the rest."""

    def __init__(self):
        self.cpus = sorted(os.sched_getaffinity(0))
        self.has_taskset = shutil.which("taskset") is not None
        if len(self.cpus) >= 2:
            half = len(self.cpus) - len(self.cpus) // 2
            self.server_cpus, self.load_cpus = self.cpus[:half], self.cpus[half:]
            self.pinned = self.has_taskset
        else:
            self.server_cpus = self.load_cpus = self.cpus
            self.pinned = False
        # One wrk thread per core wrk runs on: two threads on one core take turns in slices of the
        # scheduler (milliseconds), and a response that arrives while its thread waits for its turn
        # counts that wait as latency — p99 then measured wrk's scheduling, not the server.
        self.wrk_threads = max(1, len(self.load_cpus))
        self.note = None
        if len(self.cpus) < 2:
            self.note = f"only {len(self.cpus)} core: server and wrk share it (not pinned)"
        elif not self.has_taskset:
            self.note = "taskset is missing: server and wrk are not pinned"

    def server_prefix(self):
        return self._prefix(self.server_cpus)

    def load_prefix(self):
        return self._prefix(self.load_cpus)

    def _prefix(self, cpus):
        return ["taskset", "-c", ",".join(map(str, cpus))] if self.pinned else []

    def describe(self):
        model = None
        try:
            with open("/proc/cpuinfo") as info:
                for line in info:
                    if line.startswith("model name"):
                        model = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        return {
            "arch": platform.machine(),
            "nproc": len(self.cpus),
            "cpu_model": model,
            "kernel": platform.release(),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "server_cpus": self.server_cpus,
            "wrk_cpus": self.load_cpus,
            "wrk_threads": self.wrk_threads,
            "pinned": self.pinned,
            "note": self.note,
        }


# --- servers -----------------------------------------------------------------------------------

RUNNING = []  # every server started and not yet stopped: stopped in main's finally


class Server:
    """A server process, its port, its log; started pinned to the server cores."""

    def __init__(self, label, argv, env, port, health_path, log_name, tls=None, cookie=COOKIE):
        self.label, self.argv, self.env, self.port = label, argv, env, port
        self.health_path = health_path
        self.tls = tls  # the client's ssl.SSLContext when the server speaks HTTPS, else None
        self.cookie = cookie  # the session cookie's name (AppShell's has __Host- over HTTPS)
        self.log_path = os.path.join(LOGS, log_name)
        self.process = None
        self.started_at = None

    def start(self):
        log_file = open(self.log_path, "ab")
        try:
            self.started_at = time.perf_counter()
            self.process = subprocess.Popen(
                self.argv, cwd=REPO, env=self.env, stdin=subprocess.DEVNULL,
                stdout=log_file, stderr=subprocess.STDOUT)
        finally:
            log_file.close()
        RUNNING.append(self)
        return self

    @property
    def pid(self):
        return self.process.pid

    @property
    def scheme(self):
        return "https" if self.tls else "http"

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BenchError(f"{self.label} exited with {self.process.returncode}: {self.log_tail()}")
            try:
                status, _, _ = request(self.port, "GET", self.health_path, timeout=2, tls=self.tls)
                if status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.02)
        raise BenchError(f"{self.label} did not answer {self.health_path} in {timeout} s: {self.log_tail()}")

    def log_tail(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-1500:].decode(errors="replace")
        except OSError:
            return ""

    def rss_kib(self):
        return proc_status_kib(self.pid, "VmRSS")

    def hwm_kib(self):
        return proc_status_kib(self.pid, "VmHWM")

    def stop(self):
        if self in RUNNING:
            RUNNING.remove(self)
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class RssSampler:
    """The largest VmRSS of a process, read every 100 ms until stopped."""

    def __init__(self, pid):
        self.pid, self.peak = pid, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            rss = proc_status_kib(self.pid, "VmRSS")
            if rss is not None and (self.peak is None or rss > self.peak):
                self.peak = rss
            if self._stop.wait(0.1):
                return

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


class LoginLoad:
    """`clients` threads that each log in with the right password on a fresh session, one login
    after another, until stopped (scenario f): the logins, the failures, each login's time."""

    def __init__(self, bench, port, clients):
        self.bench, self.port = bench, port
        self.logins, self.failures, self.latencies_ms = 0, 0, []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(clients)]

    def _run(self):
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                self.bench.login(self.port)
            except (BenchError, OSError, ValueError):
                with self._lock:
                    self.failures += 1
                self._stop.wait(0.05)  # a refused login (503 when the queue is full): try again soon
                continue
            with self._lock:
                self.logins += 1
                self.latencies_ms.append((time.perf_counter() - started) * 1000)

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def snapshot(self):
        with self._lock:
            return {"logins": self.logins, "failures": self.failures, "latencies_ms": list(self.latencies_ms)}

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


# --- the C reference ---------------------------------------------------------------------------


def build_c_reference(output, strict=False):
    """Compiles bench/c-reference/main.c to `output` with libmicrohttpd and SQLite (Debian's
    libmicrohttpd-dev, libsqlite3-dev); `strict` makes warnings errors (make bench-check)."""
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd", "sqlite3"],
                               capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as error:
        raise BenchError("pkg-config finds no libmicrohttpd or sqlite3 (apt-get install pkg-config"
                         f" libmicrohttpd-dev libsqlite3-dev): {error}") from None
    command = [os.environ.get("CC", "cc"), "-O2", "-Wall", "-Wextra", "-std=gnu11", "-pthread"]
    command += ["-Werror"] if strict else []
    command += ["-o", output, C_REFERENCE_SOURCE] + flags
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"the C reference does not compile ({' '.join(command)}):\n{done.stderr[-3000:]}")


def check_c_reference(binary):
    """Starts the C reference on port 0 with a SQLite store for a moment and checks what bench
    relies on: the printed port, a new session's cookie and padded body, an adopted cookie, the
    actions (200, 409, 403, padded answers), a committed row per done action, /api/stats."""
    import sqlite3  # only here: the benchmark itself never reads SQLite

    folder = tempfile.mkdtemp(prefix="c-reference-check-")
    store = os.path.join(folder, "check.sqlite")
    env = {**os.environ, "COOKIE_NAME": COOKIE, "BODY_BYTES": "600", "ACTION_BYTES": "700",
           "STORE": store, "SNAPSHOT_BYTES": "333"}
    process = subprocess.Popen([binary, "0", "single"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        match = re.match(r"listening on (\d+) ", line)
        assert match, f"the C reference printed {line!r}"
        port = int(match.group(1))
        status, headers, body = request(port, "GET", "/api/state", timeout=5)
        cookie = set_cookie(headers)
        assert status == 200 and cookie and len(cookie) == 64 and len(body) == 600, (status, cookie, len(body))
        assert json.loads(body)["new"] is True
        jar = {"Cookie": f"{COOKIE}={cookie}"}
        status, headers, body = request(port, "GET", "/api/state", headers=jar, timeout=5)
        assert status == 200 and set_cookie(headers) is None and json.loads(body)["requests"] == 2
        answers = []
        for action in ("showList", "showList", "pop", "pop"):
            status, _, body = request(port, "POST", "/api/actions", body=json.dumps({"action": action}),
                                      headers=jar, timeout=5)
            answers.append((status, len(body), json.loads(body).get("screen")))
        assert answers == [(200, 700, "list"), (409, 700, "list"), (200, 700, "main"), (409, 700, "main")], answers
        status, _, _ = request(port, "POST", "/api/actions", body='{"action":"pop"}', timeout=5)
        assert status == 403, status
        status, _, _ = request(port, "POST", "/api/actions", body='{}', headers=jar, timeout=5)
        assert status == 400, status
        status, _, body = request(port, "GET", "/api/stats", timeout=5)
        assert status == 200 and json.loads(body) == {"sessions": 1}, body
        with sqlite3.connect(store) as db:
            rows = db.execute("SELECT hex(id), length(snapshot) FROM sessions").fetchall()
        assert rows == [(cookie.upper(), 333)], rows
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    assert process.returncode == 0, process.returncode


def make_certificate(folder):
    """A self-signed EC P-256 certificate for 127.0.0.1 and localhost (as the Makefile's test-tls
    makes), valid for two days, in `folder`: (certificate path, key path)."""
    certificate, key = os.path.join(folder, "server.pem"), os.path.join(folder, "server.key")
    command = ["openssl", "req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
               "-days", "2", "-subj", "/CN=AppShell bench", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
               "-keyout", key, "-out", certificate]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        raise BenchError(f"openssl is missing (apt-get install openssl): {error}") from None
    if done.returncode != 0:
        raise BenchError(f"openssl req failed: {done.stderr[-1000:]}")
    return certificate, key


def tls_client_context():
    """The bench's TLS client: OpenSSL's defaults (as wrk's), the self-signed certificate not checked."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def swift_priorities(text):
    """The GnuTLS priority string of TLSCertificates.swift (`static let priorities = "…" + "…"`)."""
    match = re.search(r"static let priorities =((?:\s*\+?\s*\"[^\"]*\")+)", text)
    return "".join(re.findall(r'"([^"]*)"', match.group(1))) if match else None


def c_priorities(text):
    """The GnuTLS priority string of the C reference (`TLS_PRIORITIES[] = "…" "…";`)."""
    match = re.search(r"TLS_PRIORITIES\[\] =((?:\s*\"[^\"]*\")+);", text)
    return "".join(re.findall(r'"([^"]*)"', match.group(1))) if match else None


def read_text(path):
    with open(path) as f:
        return f.read()


def open_idle_connections(port, count, path, tls=None):
    """`count` connections to the server on `port`, each (over TLS with `tls`: once its handshake
    is done) with one GET `path` sent and its answer read, then left open and idle: the sockets."""
    message = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    held = []
    try:
        for _ in range(count):
            connection = socket.create_connection(("127.0.0.1", port), timeout=30)
            held.append(connection)
            # as wrk: without it the request waits in Nagle's algorithm for the server's delayed
            # ACK of the handshake's last message (some 40 ms a connection)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls:
                connection = held[-1] = tls.wrap_socket(connection)
            connection.sendall(message)
            response = http.client.HTTPResponse(connection)
            response.begin()
            response.read()
            if response.status != 200 or response.will_close:
                raise BenchError(f"GET {path} on an idle connection answered {response.status}"
                                 f"{' and closed it' if response.will_close else ''}")
    except BaseException:
        for connection in held:
            connection.close()
        raise
    return held


def still_open(connections):
    """How many of the idle `connections` the server has neither closed nor written to since."""
    poller = select.poll()
    for connection in connections:
        poller.register(connection.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    return len(connections) - len({fd for fd, _ in poller.poll(0)})


def tls_negotiated(port):
    """What an OpenSSL client with its defaults (openssl s_client, as wrk) negotiates with the
    HTTPS server on `port`: protocol, cipher, key exchange, whether the server asked for another
    key share (HelloRetryRequest: two ClientHellos), and whether a reconnection resumes (session
    tickets or ids) with TLS 1.3 and with TLS 1.2."""
    def s_client(*arguments):
        done = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", *arguments],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        return done.stdout

    figures = parse_s_client(s_client("-trace"))
    for version, flag in (("tls1_3", "-tls1_3"), ("tls1_2", "-tls1_2")):
        text = s_client(flag, "-reconnect")  # one connection, then five with its session
        reused = len(re.findall(r"^Reused,", text, re.MULTILINE))
        fresh = len(re.findall(r"^New,", text, re.MULTILINE))
        figures[f"resumed_{version}"] = f"{reused} of {reused + fresh - 1}"
    return figures


def parse_s_client(text):
    """openssl s_client -trace's output to {protocol, cipher, key_exchange, hello_retry}."""
    new = re.search(r"^New, (\S+), Cipher is (\S+)", text, re.MULTILINE)
    key = re.search(r"^Server Temp Key: (.*)$", text, re.MULTILINE)
    return {"protocol": new.group(1) if new else None, "cipher": new.group(2) if new else None,
            "key_exchange": key.group(1).strip() if key else None,
            "hello_retry": len(re.findall(r"^\s+ClientHello, Length=", text, re.MULTILINE)) > 1}


def check_c_reference_tls(binary):
    """Starts the C reference over HTTPS (a certificate made here, CONNECTION_LIMIT=2) for a moment
    and checks: it says so, answers GET /api/state over TLS 1.3 (and 1.2) with a cookie and the
    padded body, closes a plain HTTP request, and refuses a connection over its limit; and that
    its priority string is AppShell's."""
    appshell, c = swift_priorities(read_text(APPSHELL_PRIORITIES_SOURCE)), c_priorities(read_text(C_REFERENCE_SOURCE))
    assert appshell and appshell == c, f"the C reference's TLS_PRIORITIES {c!r} are not AppShell's {appshell!r}"
    folder = tempfile.mkdtemp(prefix="c-reference-tls-check-")
    certificate, key = make_certificate(folder)
    env = {**os.environ, "COOKIE_NAME": COOKIE, "BODY_BYTES": "600", "TLS_CERT": certificate, "TLS_KEY": key,
           "CONNECTION_LIMIT": "2"}
    process = subprocess.Popen([binary, "0", "single"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    held = []
    try:
        line = process.stdout.readline()
        match = re.match(r"listening on (\d+) .* tls=1$", line.strip())
        assert match, f"the C reference printed {line!r}"
        port = int(match.group(1))
        for version in (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2):
            context = tls_client_context()
            context.minimum_version = context.maximum_version = version
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                with context.wrap_socket(raw) as connection:
                    assert connection.version() == version.name.replace("v1_", "v1."), connection.version()
                    assert connection.cipher()[0] in ("TLS_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"), connection.cipher()
        status, headers, body = request(port, "GET", "/api/state", timeout=5, tls=tls_client_context())
        assert status == 200 and len(set_cookie(headers) or "") == 64 and len(body) == 600, (status, headers, len(body))
        try:
            answer = request(port, "GET", "/api/stats", timeout=5)
        except (OSError, http.client.HTTPException):
            answer = None
        assert answer is None, f"plain HTTP to the HTTPS port was answered: {answer}"
        # at its limit libmicrohttpd accepts no more: a third connection waits in the listen
        # queue (its handshake does not even begin) until one of the two is closed
        held = open_idle_connections(port, 2, "/api/stats", tls_client_context())
        with socket.create_connection(("127.0.0.1", port), timeout=1) as raw:
            try:
                tls_client_context().wrap_socket(raw).close()
                waited = False
            except TimeoutError:
                waited = True
        assert waited, "a third connection's handshake was served with CONNECTION_LIMIT=2"
        assert still_open(held) == 2
        held.pop().close()
        held += open_idle_connections(port, 1, "/api/stats", tls_client_context())
    finally:
        for connection in held:
            connection.close()
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    assert process.returncode == 0, process.returncode


class Bench:
    """The run: settings, binaries, servers, measurements, report."""

    def __init__(self):
        self.quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
        self.duration = int(env_number("BENCH_DURATION", 2 if self.quick else 10, float))
        self.warmup = int(env_number("BENCH_WARMUP", 1 if self.quick else 2, float))
        self.rounds = int(env_number("BENCH_ROUNDS", 1 if self.quick else 5, int))
        self.machine = Machine()
        self.appshell = os.environ.get("BENCH_APPSHELL_BINARY")
        self.c_reference = os.path.join(OUT, "c-reference")
        self.tmp = tempfile.mkdtemp(prefix="appshell-bench-")
        self.runs = []  # one dict per wrk measurement
        self.notes = []
        self.rate_hint = None  # cookieless requests per second, from (b)
        self.tls_pair = None  # (certificate, key) files, made by certificate()

    # building

    def build(self):
        swift = os.environ.get("SWIFT", "swift")
        if self.appshell:
            log(f"using BENCH_APPSHELL_BINARY={self.appshell} (no Swift build)")
        else:
            command = [swift, "build", "-c", "release", "--product", "appshell"]
            log("building AppShell: " + " ".join(command))
            subprocess.run(command, cwd=REPO, check=True)
            bin_path = subprocess.run(
                [swift, "build", "-c", "release", "--show-bin-path"], cwd=REPO, check=True,
                capture_output=True, text=True).stdout.strip()
            self.appshell = os.path.join(bin_path, "appshell")
        if not os.access(self.appshell, os.X_OK):
            raise BenchError(f"no AppShell binary at {self.appshell}")
        log(f"building the C reference: {os.path.relpath(C_REFERENCE_SOURCE, REPO)} -> {self.c_reference}")
        build_c_reference(self.c_reference)
        if shutil.which("wrk") is None:
            raise BenchError("wrk is not installed (make bench installs it; or apt-get install wrk)")

    # servers

    def appshell_server(self, store, label, extra=None, tls=False):
        """AppShell on a free port with `store`; over HTTPS with `tls` (the run's certificate)."""
        port = free_port()
        # AppShell refuses unknown APPSHELL_* variables: start from an environment without any,
        # so only the settings below apply over config.json.
        env = {k: v for k, v in os.environ.items() if not k.startswith("APPSHELL_")}
        data = tempfile.mkdtemp(prefix=f"{store}-", dir=self.tmp)
        env.update({
            "APPSHELL_PORT": str(port),
            "APPSHELL_ACCESS_LOG": "false",
            "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
            "APPSHELL_THREADS": str(len(self.machine.server_cpus)),
            # The load generators are one client: the limits per client (which keep one client from
            # taking the server from the others) would measure themselves, not the server.
            "APPSHELL_MAX_CONNECTIONS_PER_IP": "1024",
            "APPSHELL_NEW_SESSIONS_PER_MINUTE": "0",
            "APPSHELL_LOGIN_ATTEMPTS_PER_NETWORK": "0",
            "APPSHELL_MAX_SESSIONS_IN_MEMORY": str(SESSION_CAP),
            "APPSHELL_STORE": store,
            "APPSHELL_STORE_PATH": os.path.join(data, "appshell.sqlite"),
        })
        if tls:
            certificate, key = self.certificate()
            env.update({"APPSHELL_TLS_CERTIFICATE_PATH": certificate, "APPSHELL_TLS_KEY_PATH": key})
        env.update(extra or {})
        argv = self.machine.server_prefix() + [self.appshell]
        return Server(label, argv, env, port, "/healthz", f"appshell-{store}{'-tls' if tls else ''}.log",
                      tls=tls_client_context() if tls else None,
                      cookie=("__Host-" + COOKIE) if tls else COOKIE)

    def c_server(self, body_bytes=None, action_bytes=None, store=None, tls=False, extra=None):
        """The C reference (pool of as many epoll threads as AppShell has, MHD_USE_TURBO); with
        `store` ("sqlite") it commits a C_SNAPSHOT_BYTES blob per action into a fresh SQLite file;
        with `tls` it serves HTTPS with the run's certificate and AppShell's priorities."""
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in C_REFERENCE_VARIABLES}
        env["COOKIE_NAME"] = COOKIE
        if body_bytes:
            env["BODY_BYTES"] = str(body_bytes)
        if action_bytes:
            env["ACTION_BYTES"] = str(action_bytes)
        if store:
            data = tempfile.mkdtemp(prefix="c-reference-", dir=self.tmp)
            env.update({"STORE": os.path.join(data, "c-reference.sqlite"), "SNAPSHOT_BYTES": str(C_SNAPSHOT_BYTES)})
        if tls:
            certificate, key = self.certificate()
            env.update({"TLS_CERT": certificate, "TLS_KEY": key})
        env.update(extra or {})
        argv = self.machine.server_prefix() + [
            self.c_reference, str(port), "pool", str(len(self.machine.server_cpus)), "1"]
        return Server("C reference", argv, env, port, "/api/stats", f"c-reference{'-tls' if tls else ''}.log",
                      tls=tls_client_context() if tls else None)

    def certificate(self):
        """The run's self-signed pair (certificate, key), made on first use in the run's temporary
        folder (removed at the end)."""
        if self.tls_pair is None:
            self.tls_pair = make_certificate(tempfile.mkdtemp(prefix="tls-", dir=self.tmp))
        return self.tls_pair

    # sessions

    def login(self, port, tls=None, cookie_name=COOKIE):
        """A logged-in AppShell session's cookie (the one the login rotated to); over TLS with
        `tls` (an ssl.SSLContext), where the cookie is `cookie_name`."""
        status, headers, body = request(port, "GET", "/api/state", tls=tls)
        cookie = set_cookie(headers, cookie_name)
        if status != 200 or not cookie:
            raise BenchError(f"GET /api/state answered {status} without a cookie: {body[:200]!r}")
        for _ in range(200):  # the splash turns to login by itself (at once with a 0 ms delay)
            if json.loads(body).get("screen") == "login":
                break
            time.sleep(0.01)
            status, _, body = request(port, "GET", "/api/state", headers={"Cookie": f"{cookie_name}={cookie}"}, tls=tls)
        credentials = {"action": "login", "username": "demo", "password": "appshell"}
        status, headers, body = request(
            port, "POST", "/api/actions", body=json.dumps(credentials),
            headers={"Content-Type": "application/json", "Cookie": f"{cookie_name}={cookie}"}, tls=tls)
        rotated = set_cookie(headers, cookie_name)
        if status != 200 or not rotated or json.loads(body).get("screen") != "main":
            raise BenchError(f"login answered {status}: {body[:300]!r}")
        return rotated

    # wrk

    def lua(self, name, text):
        path = os.path.join(OUT, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def wrk(self, port, path, seconds, headers=(), script=None, scheme="http", connections=WRK_CONNECTIONS):
        """One wrk run; with the CPU time wrk used (its cores' share: near 1 means the load
        generator, not the server, set the pace)."""
        command = self.machine.load_prefix() + [
            "wrk", f"-t{self.machine.wrk_threads}", f"-c{connections}", f"-d{seconds}s", "--latency",
            "-s", script or self.report_lua]
        for header in headers:
            command += ["-H", header]
        command.append(f"{scheme}://127.0.0.1:{port}{path}")
        usage_before = children_cpu_seconds()
        done = subprocess.run(command, capture_output=True, text=True)
        wrk_cpu = children_cpu_seconds() - usage_before
        if done.returncode != 0:
            raise BenchError(f"wrk failed ({done.returncode}): {done.stderr[-1000:]}")
        result = parse_wrk(done.stdout)
        result["command"] = " ".join(command)
        if result["seconds"]:
            result["wrk_cpu_share"] = round(wrk_cpu / result["seconds"] / len(self.machine.load_cpus), 3)
        return result

    def measure(self, server, port, path, headers=(), script=None, connections=WRK_CONNECTIONS):
        """Warm-up, then the measured run; the peak VmRSS sampled during both, and the server's
        CPU time per request during the measured run."""
        sampler = RssSampler(server.pid).start()
        try:
            self.wrk(port, path, self.warmup, headers, script, server.scheme, connections)
            cpu_before, opens_before = proc_cpu_seconds(server.pid), tcp_passive_opens()
            result = self.wrk(port, path, self.duration, headers, script, server.scheme, connections)
            cpu_after, opens_after = proc_cpu_seconds(server.pid), tcp_passive_opens()
        finally:
            peak = sampler.stop()
        result["peak_rss_kib"] = peak
        result["hwm_kib"] = server.hwm_kib()
        result["cpu_us_per_request"] = cpu_per_request(cpu_before, cpu_after, result["requests"])
        if cpu_before is not None and cpu_after is not None and result["seconds"]:
            # the share of its cores the server used: below 1, something else set the pace
            result["server_cpu_share"] = round(
                (cpu_after - cpu_before) / result["seconds"] / len(self.machine.server_cpus), 3)
        if opens_before is not None and opens_after is not None:
            # connections the kernel accepted on the machine during the run (every server's: the
            # bench's own when nothing else connects), to check how many connections wrk opened
            result["tcp_passive_opens"] = opens_after - opens_before
        return result

    # scenarios

    def run_appshell(self, scenario, store, round_number, tls=False, new_connections=False):
        """One measurement of `scenario` on a fresh AppShell; over HTTPS with `tls`; with
        `new_connections` (scenario a only) every request on a new connection (`Connection:
        close`: wrk connects again after each answer), recorded as scenario "new"."""
        server = self.appshell_server(store, f"AppShell ({store}{', TLS' if tls else ''})", tls=tls).start().wait_ready()
        try:
            port, client, name = server.port, server.tls, server.cookie
            headers, script, path, extra = [], None, "/api/state", {}
            if scenario in ("a", "c"):
                cookie = self.login(port, client, name)
                headers.append(f"Cookie: {name}={cookie}")
                if scenario == "c":
                    path = "/main"
                    headers.append("Accept: text/html")
                status, _, body = request(port, "GET", path, headers=dict(h.split(": ", 1) for h in headers), tls=client)
                if status != 200:
                    raise BenchError(f"({scenario}) GET {path} answered {status}")
                if scenario == "a":
                    extra["body_bytes"] = len(body)
                if new_connections:
                    headers.append("Connection: close")
            elif scenario == "b":
                status, _, body = request(port, "GET", path, tls=client)
                if status != 200:
                    raise BenchError(f"(b) GET /api/state answered {status}")
            elif scenario == "d":
                path = "/app.css"
                status, _, body = request(port, "GET", path, tls=client)
                if status != 200:
                    raise BenchError(f"(d) GET /app.css answered {status}")
            elif scenario == "e":
                path = "/api/actions"
                cookies = [self.login(port, client, name) for _ in range(ACTION_SESSIONS)]
                extra["action_bytes"] = self.action_answer_bytes(port, cookies[0], client, name)
                script = self.lua("actions.lua", ACTIONS_LUA % {
                    "cookies": ", ".join(json.dumps(c) for c in cookies),
                    "cookie_name": name, "threads": self.machine.wrk_threads} + REPORT_LUA)
            result = self.measure(server, port, path, headers, script,
                                  NEW_CONNECTION_CLIENTS if new_connections else WRK_CONNECTIONS)
            if scenario == "e":
                extra["screens_after"] = self.screens(port, cookies, client, name)
            metrics = parse_metrics(request(port, "GET", "/metrics", tls=client)[2].decode())
            extra["sessions_in_memory"] = int(metrics.get("appshell_sessions_in_memory", -1))
        finally:
            server.stop()
        result.update(extra)
        result.update({"server": "appshell", "store": store, "scenario": scenario_key(scenario, tls, new_connections),
                       "round": round_number, "tls": tls})
        self.runs.append(result)
        self.progress(result)
        return result

    def screens(self, port, cookies, tls=None, cookie_name=COOKIE):
        """How many of the sessions show each screen (after scenario e: main or list)."""
        tally = {}
        for cookie in cookies:
            status, _, body = request(port, "GET", "/api/state", headers={"Cookie": f"{cookie_name}={cookie}"}, tls=tls)
            screen = json.loads(body).get("screen") if status == 200 else f"status {status}"
            tally[screen] = tally.get(screen, 0) + 1
        return tally

    def run_c(self, scenario, body_bytes, round_number, tls=False, new_connections=False):
        """(a) or (b) on a fresh C reference; `tls` and `new_connections` as run_appshell's."""
        server = self.c_server(body_bytes, tls=tls).start().wait_ready()
        try:
            headers = []
            status, response_headers, body = request(server.port, "GET", "/api/state", tls=server.tls)
            cookie = set_cookie(response_headers)
            if status != 200 or not cookie or len(body) != body_bytes:
                raise BenchError(f"C reference: GET /api/state answered {status}, {len(body)} bytes")
            if scenario == "a":
                headers.append(f"Cookie: {COOKIE}={cookie}")
                status, response_headers, _ = request(server.port, "GET", "/api/state",
                                                      headers={"Cookie": f"{COOKIE}={cookie}"}, tls=server.tls)
                if set_cookie(response_headers):
                    raise BenchError("C reference: its own cookie was not adopted")
                if new_connections:
                    headers.append("Connection: close")
            result = self.measure(server, server.port, "/api/state", headers, None,
                                  NEW_CONNECTION_CLIENTS if new_connections else WRK_CONNECTIONS)
        finally:
            server.stop()
        result.update({"server": "c-reference", "store": None, "scenario": scenario_key(scenario, tls, new_connections),
                       "round": round_number, "body_bytes": body_bytes, "tls": tls})
        self.runs.append(result)
        self.progress(result)
        return result

    def progress(self, r):
        who = (f"C ref/{r['store'] or 'no store'}" if r["server"] == "c-reference"
               else f"Notes/{r['store']}" if r["server"] == "notes" else f"AppShell/{r['store']}")
        log(f"  round {r['round']} ({r['scenario']}) {who:<16} {r['rps']:>9.0f} req/s  p50 {r['p50_ms']:.2f} ms"
            f"  p99 {r['p99_ms']:.2f} ms  peak RSS {mib(r['peak_rss_kib'])} MiB"
            f"  errors {r['status_errors']}/{r['socket_errors']}  CPU {r.get('cpu_us_per_request')} us/request")

    def throughput(self):
        for round_number in range(1, self.rounds + 1):
            log(f"round {round_number} of {self.rounds}")
            body_bytes = None
            for scenario in ("a", "b"):
                result = self.run_appshell(scenario, "memory", round_number)
                if scenario == "a":
                    body_bytes = result["body_bytes"]
                self.run_c(scenario, body_bytes, round_number)
                self.run_appshell(scenario, "sqlite", round_number)
            for scenario in ("c", "d"):
                for store in ("memory", "sqlite"):
                    self.run_appshell(scenario, store, round_number)
            self.actions_round(round_number)
            self.logins_round(round_number)
        self.rate_hint = median(r["rps"] for r in self.runs if r["scenario"] == "b" and r["server"] == "appshell")

    # (e) actions side by side with the C reference, and (f) reads while clients log in

    def action_answer_bytes(self, port, cookie, tls=None, cookie_name=COOKIE):
        """The mean body size of a showList and a pop answer (the session ends where it began):
        the C reference pads its action answers to it (ACTION_BYTES)."""
        sizes = []
        for action in ("showList", "pop"):
            status, _, body = request(port, "POST", "/api/actions", body=json.dumps({"action": action}),
                                      headers={"Content-Type": "application/json", "Cookie": f"{cookie_name}={cookie}"},
                                      tls=tls)
            if status != 200:
                raise BenchError(f"(e) {action} answered {status}: {body[:200]!r}")
            sizes.append(len(body))
        return round(sum(sizes) / len(sizes))

    def run_c_actions(self, store, action_bytes, round_number, tls=False):
        """(e) on the C reference: the same wrk script on ACTION_SESSIONS sessions of its own, its
        answers padded to AppShell's; `store` None (memory only) or "sqlite" (a commit per action);
        over HTTPS with `tls`."""
        server = self.c_server(action_bytes=action_bytes, store=store, tls=tls).start().wait_ready()
        try:
            cookies = []
            for _ in range(ACTION_SESSIONS):
                status, headers, _ = request(server.port, "GET", "/api/state", tls=server.tls)
                cookies.append(set_cookie(headers))
                if status != 200 or not cookies[-1]:
                    raise BenchError(f"C reference: GET /api/state answered {status} without a cookie")
            status, _, body = request(server.port, "POST", "/api/actions", body='{"action":"pop"}',
                                      headers={"Cookie": f"{COOKIE}={cookies[0]}"}, tls=server.tls)
            if status != 409 or len(body) != action_bytes:
                raise BenchError(f"C reference: pop on main answered {status} with {len(body)} bytes")
            script = self.lua("actions-c.lua", ACTIONS_LUA % {
                "cookies": ", ".join(json.dumps(c) for c in cookies),
                "cookie_name": COOKIE, "threads": self.machine.wrk_threads} + REPORT_LUA)
            result = self.measure(server, server.port, "/api/actions", (), script)
        finally:
            server.stop()
        result.update({"server": "c-reference", "store": store, "scenario": scenario_key("e", tls), "round": round_number,
                       "action_bytes": action_bytes, "tls": tls})
        self.runs.append(result)
        self.progress(result)
        return result

    def actions_round(self, round_number, tls=False):
        """(e), interleaved: AppShell memory, the C reference without and with a store, AppShell
        SQLite; over HTTPS with `tls`."""
        memory = self.run_appshell("e", "memory", round_number, tls=tls)
        for store in (None, "sqlite"):
            self.run_c_actions(store, memory["action_bytes"], round_number, tls=tls)
        self.run_appshell("e", "sqlite", round_number, tls=tls)

    def logins_round(self, round_number):
        """(f): (a) on AppShell (memory store) while LOGIN_CLIENTS clients log in with the right
        password on fresh sessions, one login after another each; the logins counted during the
        measured run."""
        server = self.appshell_server("memory", "AppShell (memory, logins)").start().wait_ready()
        load = None
        try:
            cookie = self.login(server.port)
            load = LoginLoad(self, server.port, LOGIN_CLIENTS).start()
            headers = [f"Cookie: {COOKIE}={cookie}"]
            sampler = RssSampler(server.pid).start()
            try:
                self.wrk(server.port, "/api/state", self.warmup, headers)
                before = load.snapshot()
                result = self.wrk(server.port, "/api/state", self.duration, headers)
                after = load.snapshot()
            finally:
                result_peak = sampler.stop()
        finally:
            if load is not None:
                load.stop()
            server.stop()
        logins = after["logins"] - before["logins"]
        latencies = sorted(after["latencies_ms"][len(before["latencies_ms"]):])
        result.update({
            # the server's CPU time would count the password checks too: not a figure per read
            "cpu_us_per_request": None,
            "peak_rss_kib": result_peak, "server": "appshell", "store": "memory", "scenario": "f",
            "round": round_number, "logins": logins, "logins_per_s": round(logins / result["seconds"], 1),
            "login_failures": after["failures"] - before["failures"],
            "login_p50_ms": round(latencies[len(latencies) // 2], 1) if latencies else None,
            "login_max_ms": round(latencies[-1], 1) if latencies else None,
        })
        self.runs.append(result)
        self.progress(result)
        log(f"    {logins} logins ({result['logins_per_s']}/s, median {result['login_p50_ms']} ms),"
            f" {result['login_failures']} failed")
        return result

    def action_and_login_rows(self, table):
        """The comparison rows of (e) and (f): ratio, target, met."""
        rows = []
        e = {who: table["appshell"][who].get("e") for who in ("memory", "sqlite")}
        c = {who: table["c-reference"][who].get("e") for who in ("none", "sqlite")}

        def row(scenario, label, ratio, target):
            rows.append({"scenario": scenario, "label": label, "ratio": round(ratio, 3), "target": target,
                         "met": ratio >= target})

        target = TARGETS["e"]
        if e["memory"] and c["none"]:
            row("e", "memory / C reference without a store", e["memory"]["rps"] / c["none"]["rps"], target["memory_vs_c"])
        if e["sqlite"] and c["sqlite"]:
            row("e", "sqlite / C reference's commit per action", e["sqlite"]["rps"] / c["sqlite"]["rps"],
                target["sqlite_vs_c_sqlite"])
        if e["sqlite"] and e["memory"]:
            row("e", "sqlite / AppShell memory", e["sqlite"]["rps"] / e["memory"]["rps"], target["sqlite_vs_memory"])
        f, a = table["appshell"]["memory"].get("f"), table["appshell"]["memory"].get("a")
        if f and a:
            row("f", "memory / (a) alone", f["rps"] / a["rps"], TARGETS["f"]["rps_ratio"])
            rows.append({"scenario": "f", "label": "p99 (ms)", "value": f["p99_ms"], "target": TARGETS["f"]["p99_ms"],
                         "met": f["p99_ms"] <= TARGETS["f"]["p99_ms"],
                         "logins_per_s": median(r["logins_per_s"] for r in self.runs if r["scenario"] == "f")})
        return rows

    # the TLS part

    def tls_round(self, round_number, baseline=True):
        """One round of the TLS part, AppShell and the C reference interleaved: (a) over HTTPS
        (AppShell memory, C, AppShell SQLite), (e) over HTTPS as actions_round, a new connection
        per request over HTTPS and over HTTP (AppShell memory, C); with `baseline` (a) over plain
        HTTP too (the full run has it from throughput())."""
        a = self.run_appshell("a", "memory", round_number, tls=True)
        self.run_c("a", a["body_bytes"], round_number, tls=True)
        self.run_appshell("a", "sqlite", round_number, tls=True)
        self.actions_round(round_number, tls=True)
        for tls in (True, False):
            self.run_appshell("a", "memory", round_number, tls=tls, new_connections=True)
            self.run_c("a", a["body_bytes"], round_number, tls=tls, new_connections=True)
        if baseline:
            self.run_appshell("a", "memory", round_number)
            self.run_c("a", a["body_bytes"], round_number)

    def idle_connections(self, kind, tls, count, round_number):
        """Memory per idle connection on a fresh server (AppShell with the memory store, or the C
        reference): IDLE_WARMUP connections opened and closed, VmRSS, `count` connections opened
        (over TLS: each after a full handshake) with one request answered on each and left idle,
        VmRSS after a second's settle; (after - before) / count. The limits are raised so that
        every connection stays open while measured."""
        if kind == "appshell":
            server = self.appshell_server("memory", f"AppShell (memory, idle connections{', TLS' if tls else ''})", tls=tls,
                                          extra={"APPSHELL_MAX_CONNECTIONS": str(count + 1024),
                                                 "APPSHELL_MAX_CONNECTIONS_PER_IP": "0",
                                                 "APPSHELL_KEEP_ALIVE_TIMEOUT_SECONDS": "300",
                                                 "APPSHELL_IDLE_TIMEOUT_SECONDS": "300"})
        else:
            server = self.c_server(tls=tls, extra={"CONNECTION_LIMIT": str(count + 1024), "CONNECTION_TIMEOUT": "300"})
        server.start().wait_ready()
        held = []
        try:
            for connection in open_idle_connections(server.port, IDLE_WARMUP, server.health_path, server.tls):
                connection.close()
            before = streams.wait_rss_settled(server)
            started = time.monotonic()
            held = open_idle_connections(server.port, count, server.health_path, server.tls)
            opening = time.monotonic() - started
            after = streams.wait_rss_settled(server)
            left_open = still_open(held)
            server_count = None
            if kind == "appshell":
                metrics = parse_metrics(request(server.port, "GET", "/metrics", tls=server.tls)[2].decode())
                server_count = int(metrics.get("appshell_http_connections_open", -1)) - 1  # less this one
        finally:
            for connection in held:
                connection.close()
            server.stop()
        result = {"scenario": "idle-tls" if tls else "idle", "server": kind, "round": round_number, "tls": tls,
                  "connections": count, "still_open": left_open, "server_counted_open": server_count,
                  "rss_before_kib": before, "rss_after_kib": after, "opening_s": round(opening, 2),
                  "bytes_per_connection": rss_bytes_per(before, after, count)}
        if left_open != count:
            self.notes.append(f"idle connections, {kind}{' TLS' if tls else ''} round {round_number}:"
                              f" {count - left_open} of {count} closed (or written to) by the server before the RSS was read")
        log(f"  round {round_number} idle {'TLS ' if tls else ''}connections {kind:<12} RSS {before} -> {after} KiB"
            f" over {count} ({left_open} still open, opened in {opening:.1f} s):"
            f" {result['bytes_per_connection']} B per connection")
        return result

    def tls_part(self, baseline=True):
        """The TLS part, `self.rounds` rounds: what each server negotiates, the measurements of
        tls_round and the memory per idle connection (over HTTPS and over HTTP, both servers) in
        each round. Its figures (the runs themselves are in self.runs)."""
        count = int(env_number("BENCH_TLS_CONNECTIONS", TLS_CONNECTIONS, int))
        streams.raise_open_files()
        negotiated = {}
        for kind in ("appshell", "c-reference"):
            server = (self.appshell_server("memory", "AppShell (memory, TLS check)", tls=True) if kind == "appshell"
                      else self.c_server(tls=True)).start().wait_ready()
            try:
                negotiated[kind] = tls_negotiated(server.port)
            finally:
                server.stop()
            log(f"  {kind} over HTTPS negotiates {negotiated[kind]}")
        idle = []
        for round_number in range(1, self.rounds + 1):
            log(f"TLS round {round_number} of {self.rounds}")
            self.tls_round(round_number, baseline)
            for tls in (True, False):
                for kind in ("appshell", "c-reference"):
                    idle.append(self.idle_connections(kind, tls, count, round_number))
        return {"negotiated": negotiated, "idle_connections": count, "idle_runs": idle}

    def tls_settings(self):
        m = self.machine
        text = (f"wrk -t{m.wrk_threads} -c{WRK_CONNECTIONS} -d{self.duration}s after {self.warmup} s, medians of"
                f" {self.rounds} round(s) interleaved, a fresh server each; server on CPU {m.server_cpus}, wrk on"
                f" CPU {m.load_cpus}" + (f" ({m.note})" if m.note else ""))
        return {"duration_s": self.duration, "warmup_s": self.warmup, "rounds": self.rounds, "quick": self.quick,
                "text": text, "connection_memory": CONNECTION_MEMORY_NOTE}

    def tls_summary(self, figures):
        """The TLS part's report: the medians of every server, store and scenario, the ratios to
        the C reference, the cost of a handshake, the memory per idle connection."""
        table = {}
        for scenario in TLS_SCENARIOS:
            for server, store in (("appshell", "memory"), ("appshell", "sqlite"), ("c-reference", None),
                                  ("c-reference", "sqlite")):
                summary = self.summary(server, store, scenario)
                if summary:
                    runs = [r for r in self.runs if r["server"] == server and r["store"] == store and r["scenario"] == scenario]
                    summary["rps_spread"] = [min(r["rps"] for r in runs), max(r["rps"] for r in runs)]
                    cpu = [r["cpu_us_per_request"] for r in runs if r.get("cpu_us_per_request") is not None]
                    summary["cpu_spread"] = [min(cpu), max(cpu)] if cpu else None
                    summary["server_cpu_share"] = median(r.get("server_cpu_share") for r in runs)
                    summary["wrk_cpu_share"] = median(r.get("wrk_cpu_share") for r in runs)
                    opens = [r["tcp_passive_opens"] / r["requests"] for r in runs if r.get("tcp_passive_opens") and r["requests"]]
                    summary["connections_per_request"] = round(median(opens), 3) if opens else None
                    table.setdefault(scenario, {})[f"{server}/{store or 'none'}"] = summary
        ratios = []

        def ratio(label, scenario, ours, theirs, target=None):
            a, c = table.get(scenario, {}).get(ours), table.get(scenario, {}).get(theirs)
            if a and c and c["rps"]:
                row = {"label": label, "scenario": scenario, "ratio": round(a["rps"] / c["rps"], 3)}
                # the ratio of each round's pair (AppShell and the C reference measured one after the
                # other): when the machine's load changes between rounds, their median is steadier
                # than the ratio of the two medians (which may come from different rounds)
                pairs = [x["rps"] / y["rps"] for x, y in self.round_pairs(scenario, ours, theirs) if y["rps"]]
                row["pair_median"] = round(median(pairs), 3) if pairs else None
                cpu = [x["cpu_us_per_request"] / y["cpu_us_per_request"] for x, y in self.round_pairs(scenario, ours, theirs)
                       if x.get("cpu_us_per_request") and y.get("cpu_us_per_request")]
                row["cpu_ratio"] = round(median(cpu), 3) if cpu else None  # the pairs' median
                row["ratio_spread"] = [round(min(pairs), 3), round(max(pairs), 3)] if pairs else None
                if target is not None:
                    judged = row["pair_median"] if pairs else row["ratio"]
                    row.update({"target": target, "met": judged >= target})
                ratios.append(row)

        ratio("(a) HTTPS memory / C HTTPS", "a-tls", "appshell/memory", "c-reference/none", TARGETS["a_tls"]["rps_ratio"])
        ratio("(a) HTTPS sqlite / C HTTPS", "a-tls", "appshell/sqlite", "c-reference/none")
        ratio("(e) HTTPS memory / C HTTPS without a store", "e-tls", "appshell/memory", "c-reference/none")
        ratio("(e) HTTPS sqlite / C HTTPS commit per action", "e-tls", "appshell/sqlite", "c-reference/sqlite")
        ratio("new connections HTTPS / C", "new-tls", "appshell/memory", "c-reference/none")
        ratio("new connections HTTP / C", "new", "appshell/memory", "c-reference/none")
        ratio("(a) HTTP memory / C (the baseline)", "a", "appshell/memory", "c-reference/none")
        handshake = {}
        for who in ("appshell/memory", "c-reference/none"):
            new_tls, new_plain = table.get("new-tls", {}).get(who), table.get("new", {}).get(who)
            kept = table.get("a-tls", {}).get(who)
            if new_tls and new_tls["cpu_us_per_request"]:
                entry = {"cpu_us_per_new_tls_connection": new_tls["cpu_us_per_request"],
                         # what one core of the server would do, new connections and nothing else
                         "new_tls_connections_per_core_s": round(1e6 / new_tls["cpu_us_per_request"])}
                if new_plain and new_plain["cpu_us_per_request"]:
                    entry["cpu_us_tls_handshake"] = round(new_tls["cpu_us_per_request"] - new_plain["cpu_us_per_request"], 1)
                if kept and kept["cpu_us_per_request"]:
                    entry["cpu_us_connection_over_kept_alive"] = round(new_tls["cpu_us_per_request"] - kept["cpu_us_per_request"], 1)
                handshake[who.split("/")[0]] = entry
        idle = {}
        for scenario in ("idle-tls", "idle"):
            for kind in ("appshell", "c-reference"):
                values = [r["bytes_per_connection"] for r in figures["idle_runs"] if r["scenario"] == scenario and r["server"] == kind]
                if values:
                    idle.setdefault(scenario, {})[kind] = spread(values)
        return {"negotiated": figures["negotiated"], "scenarios": table, "ratios": ratios, "handshake": handshake,
                "idle_connections": figures["idle_connections"], "idle": idle, "idle_runs": figures["idle_runs"],
                "targets": {"a_tls": TARGETS["a_tls"]}}

    def round_pairs(self, scenario, ours, theirs):
        """(AppShell's run, the C reference's run) of each round of `scenario`."""
        def runs(who):
            server, store = who.split("/")
            return {r["round"]: r for r in self.runs if r["server"] == server and (r["store"] or "none") == store
                    and r["scenario"] == scenario}
        a, c = runs(ours), runs(theirs)
        return [(a[n], c[n]) for n in sorted(a) if n in c]

    # memory and start-up

    def cookieless(self, port, count):
        """`count` cookieless GET /api/state on one keep-alive connection (exact counts)."""
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            for _ in range(count):
                connection.request("GET", "/api/state")
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    raise BenchError(f"cookieless GET /api/state answered {response.status}")
        finally:
            connection.close()

    def created(self, port):
        metrics = parse_metrics(request(port, "GET", "/metrics")[2].decode())
        return int(metrics["appshell_sessions_created_total"]), int(metrics["appshell_sessions_in_memory"])

    def create_sessions(self, port, target, exact):
        """Cookieless requests until `target` sessions were created: wrk in chunks sized from the
        measured rate, then (when `exact`) the last few on one connection, so none is evicted."""
        rate = self.rate_hint or 5000.0
        errors = 0
        while True:
            created, _ = self.created(port)
            remaining = target - created
            # exact: stop wrk while a 1 s run stays clearly below what remains (the cap must not evict)
            if remaining <= 0 or (exact and 0.8 * remaining / rate < 1):
                break
            seconds = max(1, min(60, int(0.8 * remaining / rate)))
            result = self.wrk(port, "/api/state", seconds)
            errors += result["status_errors"] + result["socket_errors"]
            rate = max(result["rps"], 100.0)
            time.sleep(0.3)  # let the requests still in flight when wrk stopped finish
        if exact and remaining > 0:
            self.cookieless(port, remaining)
        return errors

    def memory(self):
        server = self.appshell_server("memory", "AppShell (memory, sessions)").start().wait_ready()
        figures = {"session_cap": SESSION_CAP}
        try:
            time.sleep(0.5)
            before = server.rss_kib()
            _, in_memory_before = self.created(server.port)
            log(f"creating {IDLE_SESSIONS} sessions with cookieless GET /api/state")
            errors = self.create_sessions(server.port, IDLE_SESSIONS, exact=True)
            time.sleep(1)
            after = server.rss_kib()
            created, in_memory = self.created(server.port)
            held = in_memory - in_memory_before
            figures.update({
                "rss_before_kib": before, "rss_after_100k_kib": after,
                "sessions_created_100k": created, "sessions_in_memory_100k": in_memory,
                # the issue's figure: (after - before) / sessions created
                "bytes_per_idle_session": round((after - before) * 1024 / created),
                # the same per session still held (the cap may have evicted some already)
                "bytes_per_session_in_memory": round((after - before) * 1024 / held) if held > 0 else None,
                "errors_100k": errors,
            })
            log(f"  RSS {mib(before)} MiB before, {mib(after)} MiB after {created} sessions created"
                f" ({in_memory} in memory): {figures['bytes_per_idle_session']} B per session")
            if self.quick:
                figures["skipped_1m"] = "BENCH_QUICK"
            else:
                log(f"running cookieless requests until {MANY_REQUESTS} sessions were created")
                started = time.monotonic()
                errors = self.create_sessions(server.port, MANY_REQUESTS, exact=False)
                time.sleep(1)
                created, in_memory = self.created(server.port)
                rss = server.rss_kib()
                figures.update({
                    "rss_after_1m_kib": rss, "sessions_created_1m": created,
                    "sessions_in_memory_1m": in_memory, "seconds_1m": round(time.monotonic() - started, 1),
                    "growth_100k_to_1m": round(rss / after, 3), "errors_1m": errors,
                })
                log(f"  RSS {mib(rss)} MiB after {created} sessions created ({in_memory} in memory)")
            figures["hwm_kib"] = server.hwm_kib()
        finally:
            server.stop()
        return figures

    # (i) memory per visitor's session

    def visitors(self, port, count, next_path):
        """`count` visitors one after another on one keep-alive connection, each as a browser opens
        the site: GET / without a cookie (its Set-Cookie taken), then GET /login?next=`next_path`
        with that cookie. The statuses of the /login answers, {status: count}."""
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        statuses = {}
        try:
            for _ in range(count):
                connection.request("GET", "/", headers={"Accept": "text/html"})
                response = connection.getresponse()
                response.read()
                cookie = set_cookie(response.getheaders())
                if response.status >= 400 or not cookie:
                    raise BenchError(f"(i) GET / without a cookie answered {response.status}"
                                     f" {'without' if not cookie else 'with'} a cookie")
                connection.request("GET", visitor_login_path(next_path),
                                   headers={"Accept": "text/html", "Cookie": f"{COOKIE}={cookie}"})
                response = connection.getresponse()
                response.read()
                statuses[response.status] = statuses.get(response.status, 0) + 1
        finally:
            connection.close()
        if any(status >= 400 for status in statuses):
            raise BenchError(f"(i) GET /login?next=… answered {statuses}: the sessions measured were not all held")
        return statuses

    def visitor_round(self, kind, next_path, count, round_number):
        """(i), one measurement on a fresh server (memory store): VISITOR_WARMUP visitors, VmRSS,
        `count` visitors, VmRSS after a second's settle; the bytes per session created."""
        # newSessionsPerMinute 0: one client (this script) starts all the sessions, and the limit
        # (600 a minute) would answer 429 from the 601st on and hold none of the rest
        server = self.appshell_server("memory", f"AppShell (memory, visitors, {kind} next)").start().wait_ready()
        try:
            self.visitors(server.port, VISITOR_WARMUP, next_path)
            time.sleep(1)
            created_before, _ = self.created(server.port)
            before = server.rss_kib()
            statuses = self.visitors(server.port, count, next_path)
            time.sleep(1)
            after = server.rss_kib()
            created_after, in_memory = self.created(server.port)
        finally:
            server.stop()
        created = created_after - created_before
        result = {
            "scenario": "i", "next": kind, "next_bytes": len(next_path), "round": round_number,
            "sessions": count, "sessions_created": created, "sessions_in_memory": in_memory,
            "rss_before_kib": before, "rss_after_kib": after,
            "bytes_per_session": rss_bytes_per(before, after, count),
            "login_statuses": {str(k): v for k, v in sorted(statuses.items())},
        }
        if created != count:
            self.notes.append(f"(i) {kind} next round {round_number}: {created} sessions created for {count} visitors")
        log(f"  round {round_number} (i) {kind} next ({len(next_path)} B): RSS {before} -> {after} KiB over"
            f" {count} sessions ({created} created, {in_memory} in memory): {result['bytes_per_session']} B per session;"
            f" /login answered {result['login_statuses']}")
        return result

    def session_memory(self):
        """(i), `self.rounds` rounds, the long and the short next interleaved in each: every round's
        figures and, per next, the median and spread of the bytes per session."""
        count = int(env_number("BENCH_VISITOR_SESSIONS", VISITOR_SESSIONS, int))
        runs = []
        for round_number in range(1, self.rounds + 1):
            for kind, next_path in VISITOR_NEXTS:
                runs.append(self.visitor_round(kind, next_path, count, round_number))
        figures = {"sessions": count, "warmup_sessions": VISITOR_WARMUP, "rounds": self.rounds,
                   "target_bytes": TARGETS["visitor_session_bytes"], "runs": runs}
        for kind, next_path in VISITOR_NEXTS:
            figures[kind] = spread([r["bytes_per_session"] for r in runs if r["next"] == kind])
            figures[kind]["next_bytes"] = len(next_path)
            figures[kind]["login_statuses"] = add_counts(r["login_statuses"] for r in runs if r["next"] == kind)
        figures["short"]["next"] = dict(VISITOR_NEXTS)["short"]
        figures["met"] = figures["long"]["median"] <= TARGETS["visitor_session_bytes"]
        return figures

    def first_200(self, port, started, process, timeout=30):
        probe = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        deadline = started + timeout
        while time.perf_counter() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(probe)
                    if s.recv(64).startswith(b"HTTP/1.1 200"):
                        return time.perf_counter() - started
            except OSError:
                if process.poll() is not None:
                    raise BenchError(f"AppShell exited with {process.returncode} while starting")
                time.sleep(0.001)
        raise BenchError("AppShell did not answer /healthz while starting")

    def cold_start(self):
        figures = {}
        for store in ("memory", "sqlite"):
            times = []
            for _ in range(COLD_STARTS):
                server = self.appshell_server(store, f"AppShell ({store}, cold start)").start()
                try:
                    times.append(self.first_200(server.port, server.started_at, server.process) * 1000)
                finally:
                    server.stop()
            figures[store] = {"median_ms": round(median(times), 1), "runs_ms": [round(t, 1) for t in times]}
            log(f"  cold start ({store}): median {figures[store]['median_ms']} ms of {figures[store]['runs_ms']}")
        return figures

    # the report

    def summary(self, server, store, scenario):
        runs = [r for r in self.runs if r["server"] == server and r["store"] == store and r["scenario"] == scenario]
        if not runs:
            return None
        return {
            "rounds": len(runs),
            "rps": round(median(r["rps"] for r in runs), 1),
            "p50_ms": round(median(r["p50_ms"] for r in runs), 3),
            "p99_ms": round(median(r["p99_ms"] for r in runs), 3),
            "peak_rss_mib": mib(max((r["peak_rss_kib"] for r in runs if r["peak_rss_kib"]), default=None)),
            "status_errors": sum(r["status_errors"] for r in runs),
            "socket_errors": sum(r["socket_errors"] for r in runs),
            "requests": sum(r["requests"] for r in runs),
            "bytes_per_response": runs[-1]["bytes_per_response"],
            "rps_rounds": [r["rps"] for r in runs],
            "p99_rounds_ms": [r["p99_ms"] for r in runs],
            "cpu_us_per_request": median(r.get("cpu_us_per_request") for r in runs),
        }

    def comparison(self, table):
        rows = []
        for scenario in ("a", "b"):
            c = table["c-reference"]["none"].get(scenario)
            for store in ("memory", "sqlite"):
                a = table["appshell"][store].get(scenario)
                if not a or not c:
                    continue
                rps_ratio = a["rps"] / c["rps"] if c["rps"] else None
                p99_ratio = a["p99_ms"] / c["p99_ms"] if c["p99_ms"] else None
                target = TARGETS[scenario]
                row = {"scenario": scenario, "store": store,
                       "rps_ratio": round(rps_ratio, 3), "rps_target": target["rps_ratio"],
                       "rps_met": rps_ratio >= target["rps_ratio"],
                       "p99_ratio": round(p99_ratio, 3)}
                if "p99_ratio" in target:
                    row["p99_target"] = target["p99_ratio"]
                    row["p99_met"] = p99_ratio <= target["p99_ratio"]
                rows.append(row)
        return rows

    def render(self, report):
        lines = []
        m = report["machine"]
        s = report["settings"]
        lines.append(f"AppShell benchmark — {report['date']} — {m['arch']}, {m['nproc']} cores ({m['cpu_model']})")
        pin = (f"server on CPU {','.join(map(str, m['server_cpus']))} (APPSHELL_THREADS={len(m['server_cpus'])}),"
               f" wrk on CPU {','.join(map(str, m['wrk_cpus']))}") if m["pinned"] else m["note"]
        lines.append(f"wrk -t{m['wrk_threads']} -c{WRK_CONNECTIONS} -d{s['duration_s']}s --latency, keep-alive, loopback,"
                     f" {s['warmup_s']} s warm-up; {pin}")
        lines.append(f"medians of {s['rounds']} round(s), AppShell and the C reference interleaved;"
                     " a fresh server per measurement; peak RSS = largest VmRSS sampled every 100 ms"
                     " during warm-up and run")
        lines.append(CONNECTION_MEMORY_NOTE)
        if m["note"]:
            lines.append("NOTE: " + m["note"])
        lines.append("")
        header = (f"{'scenario':<50} {'server':<16} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'peak RSS':>9}"
                  f" {'>=400':>7} {'sock err':>8} {'CPU us/req':>10}")
        lines.append(header)
        lines.append("-" * len(header))
        for scenario in SCENARIOS:
            entries = [(f"AppShell/{store}", report["scenarios"]["appshell"][store].get(scenario))
                       for store in ("memory", "sqlite")]
            for store, who in (("none", "C reference"), ("sqlite", "C ref/sqlite")):
                if scenario in report["scenarios"]["c-reference"][store]:
                    entries.append((who, report["scenarios"]["c-reference"][store][scenario]))
            for i, (who, r) in enumerate(entries):
                if not r:
                    continue
                name = f"({scenario}) {SCENARIOS[scenario]}" if i == 0 else ""
                lines.append(f"{name:<50} {who:<16} {r['rps']:>9.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}"
                             f" {str(r['peak_rss_mib']) + ' MiB':>9} {r['status_errors']:>7} {r['socket_errors']:>8}"
                             f" {r['cpu_us_per_request'] if r['cpu_us_per_request'] is not None else '-':>10}")
        lines.append("")
        lines.append("AppShell / C reference (medians):")
        for row in report["comparison"]:
            text = (f"  ({row['scenario']}) {row['store']:<7} req/s {row['rps_ratio']:.2f}"
                    f" (target >= {row['rps_target']:.2f}: {'met' if row['rps_met'] else 'NOT MET'})"
                    f"   p99 {row['p99_ratio']:.2f}x")
            if "p99_target" in row:
                text += f" (target <= {row['p99_target']}x: {'met' if row['p99_met'] else 'NOT MET'})"
            lines.append(text)
        lines.extend(render_e_f(report["comparison_e_f"]))
        mem = report["memory"]
        lines.append("")
        lines.append("Memory (memory store, APPSHELL_MAX_SESSIONS_IN_MEMORY=100000):")
        per = mem.get("bytes_per_idle_session")
        lines.append(f"  RSS per idle session: {per} B ((RSS after - before) / {mem['sessions_created_100k']}"
                     f" sessions created; target <= {TARGETS['idle_session_bytes']} B:"
                     f" {'met' if per <= TARGETS['idle_session_bytes'] else 'NOT MET'})")
        if mem["sessions_in_memory_100k"] != mem["sessions_created_100k"]:
            lines.append(f"    {mem['sessions_in_memory_100k']} of them still in memory (the cap evicted the rest):"
                         f" {mem['bytes_per_session_in_memory']} B per session held")
        if "rss_after_1m_kib" in mem:
            growth = mem["growth_100k_to_1m"]
            lines.append(f"  RSS after 100k sessions {mib(mem['rss_after_100k_kib'])} MiB, after"
                         f" {mem['sessions_created_1m']} cookieless requests {mib(mem['rss_after_1m_kib'])} MiB"
                         f" ({mem['sessions_in_memory_1m']} in memory): x{growth}"
                         f" (bounded if <= x{TARGETS['rss_growth_1m']}: {'met' if growth <= TARGETS['rss_growth_1m'] else 'NOT MET'})")
        else:
            lines.append(f"  RSS after 100k sessions {mib(mem['rss_after_100k_kib'])} MiB; 1M-request run skipped (BENCH_QUICK)")
        lines.append("")
        lines.append(f"Cold start to the first 200 on /healthz (median of {COLD_STARTS}, target <= {TARGETS['cold_start_ms']} ms):")
        for store, figures in report["cold_start"].items():
            met = "met" if figures["median_ms"] <= TARGETS["cold_start_ms"] else "NOT MET"
            lines.append(f"  {store:<7} {figures['median_ms']} ms ({met}); runs {figures['runs_ms']}")
        if report["notes"]:
            lines.append("")
            lines.extend("Note: " + note for note in report["notes"])
        return "\n".join(lines)

    def report(self, memory, cold):
        table = {"appshell": {store: {} for store in ("memory", "sqlite")},
                 "c-reference": {store: {} for store in ("none", "sqlite")}}
        for scenario in SCENARIOS:
            for store in ("memory", "sqlite"):
                summary = self.summary("appshell", store, scenario)
                if summary:
                    table["appshell"][store][scenario] = summary
            for store in (None, "sqlite"):
                summary = self.summary("c-reference", store, scenario)
                if summary:
                    table["c-reference"][store or "none"][scenario] = summary
        notes = list(self.notes)
        for store in ("memory", "sqlite"):
            e = table["appshell"][store].get("e")
            if e and e["status_errors"]:
                notes.append(f"(e) {store}: {e['status_errors']} answers >= 400 in {e['requests']} requests"
                             " (409: two requests of one session in flight at once ran in the other order;"
                             " each wrk thread goes round its own sessions, one per connection)")
        notes += self.socket_error_notes({r["scenario"] for r in self.runs})
        report = self.report_head()
        report.update({
            "settings": {"duration_s": self.duration, "warmup_s": self.warmup, "rounds": self.rounds,
                         "quick": self.quick, "wrk": f"wrk -t{self.machine.wrk_threads} -c{WRK_CONNECTIONS} --latency",
                         "peak_rss": "largest VmRSS sampled every 100 ms during warm-up and run, fresh server each",
                         "c_reference": "bench/c-reference: c-reference PORT pool THREADS 1,"
                                        " COOKIE_NAME=appshell_session, BODY_BYTES = AppShell's (a) body,"
                                        " ACTION_BYTES = AppShell's (e) answers; with a store"
                                        f" STORE=file SNAPSHOT_BYTES={C_SNAPSHOT_BYTES}",
                         "connection_memory": CONNECTION_MEMORY_NOTE},
            "targets": TARGETS,
            "scenarios": table,
            "comparison": self.comparison(table),
            "comparison_e_f": self.action_and_login_rows(table),
            "memory": memory,
            "cold_start": cold,
            "notes": notes,
            "runs": self.runs,
        })
        return report

    def report_head(self):
        """What every report begins with: when, how, on what."""
        command = "make bench" if os.environ.get("MAKELEVEL") else " ".join(["python3"] + sys.argv)
        return {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command,
            "environment": {k: v for k, v in os.environ.items() if k.startswith("BENCH_")},
            "machine": self.machine.describe(),
            "appshell": {"binary": self.appshell, "commit": git_commit()},
        }

    def socket_error_notes(self, scenarios):
        """A note for every run of `scenarios` with socket errors or answers >= 400."""
        notes = []
        for r in self.runs:
            if r["scenario"] not in scenarios:
                continue
            if r["socket_errors"]:
                notes.append(f"({r['scenario']}) {r['server']}/{r['store']} round {r['round']}:"
                             f" {r['socket_errors']} socket errors ({r['timeouts']} timeouts)")
            if r["status_errors"] and not r["scenario"].startswith(("e", "k-e")):  # (e)'s 409s: noted apart
                notes.append(f"({r['scenario']}) {r['server']}/{r['store']} round {r['round']}:"
                             f" {r['status_errors']} answers >= 400")
        return notes


def render_e_f(rows):
    """The report's lines for the (e) and (f) comparison rows."""
    lines = []
    for row in rows:
        met = "met" if row["met"] else "NOT MET"
        if "ratio" in row:
            lines.append(f"  ({row['scenario']}) {row['label']:<42} {row['ratio']:.2f}"
                         f" (target >= {row['target']:.2f}: {met})")
        else:
            lines.append(f"  ({row['scenario']}) {row['label']:<42} {row['value']:.2f}"
                         f" (target <= {row['target']}: {met}); {row['logins_per_s']} logins/s")
    return lines


def render_tls(t, settings):
    """The TLS part's lines of the report."""
    lines = ["TLS part: HTTPS with a self-signed EC P-256 certificate made for the run; both servers on"
             " libmicrohttpd's GnuTLS with AppShell's priorities; " + settings]
    for kind, n in t["negotiated"].items():
        lines.append(f"  {kind} negotiates (OpenSSL's client defaults, as wrk's): {n['protocol']} {n['cipher']},"
                     f" key exchange {n['key_exchange']}, HelloRetryRequest {'yes' if n['hello_retry'] else 'no'};"
                     f" reconnections resumed: {n['resumed_tls1_3']} (TLS 1.3), {n['resumed_tls1_2']} (TLS 1.2)")
    lines.append("")
    header = (f"{'scenario':<46} {'server':<17} {'req/s':>8} {'(min-max)':>15} {'p50 ms':>7} {'p99 ms':>7}"
              f" {'CPU us/req':>10} {'(min-max)':>13} {'srv CPU':>7} {'wrk CPU':>7} {'conn/req':>8} {'errors':>7}")
    lines.append(header)
    lines.append("-" * len(header))
    names = {"appshell/memory": "AppShell/memory", "appshell/sqlite": "AppShell/sqlite",
             "c-reference/none": "C reference", "c-reference/sqlite": "C ref/sqlite"}
    for scenario, label in TLS_SCENARIOS.items():
        for i, (who, r) in enumerate(t["scenarios"].get(scenario, {}).items()):
            low, high = r["rps_spread"]
            cpu = f"({r['cpu_spread'][0]:.0f}-{r['cpu_spread'][1]:.0f})" if r["cpu_spread"] else "-"
            conn = "-" if r["connections_per_request"] is None else f"{r['connections_per_request']:.2f}"
            lines.append(f"{label if i == 0 else '':<46} {names[who]:<17} {r['rps']:>8.0f} {f'({low:.0f}-{high:.0f})':>15}"
                         f" {r['p50_ms']:>7.2f} {r['p99_ms']:>7.2f} {r['cpu_us_per_request'] or 0:>10.1f} {cpu:>13}"
                         f" {r['server_cpu_share'] or 0:>7.2f} {r['wrk_cpu_share'] or 0:>7.2f} {conn:>8}"
                         f" {r['status_errors'] + r['socket_errors']:>7}")
    lines.append("  srv CPU / wrk CPU: the share of its cores each used during the run (near 1: it set the pace);"
                 " conn/req: TCP connections the kernel accepted per request")
    lines.append("")
    lines.append("AppShell / C reference: req/s of the medians; each round's pair (AppShell and the C reference"
                 " one after the other): median (min-max), the one a target is judged on:")
    for row in t["ratios"]:
        text = f"  {row['label']:<46} req/s {row['ratio']:.2f}"
        if row.get("ratio_spread"):
            text += f"; pairs {row['pair_median']:.2f} ({row['ratio_spread'][0]:.2f}-{row['ratio_spread'][1]:.2f})"
        if "target" in row:
            text += f" (target >= {row['target']:.2f}: {'met' if row['met'] else 'NOT MET'})"
        if row.get("cpu_ratio"):
            text += f"; CPU per request x{row['cpu_ratio']:.2f}"
        lines.append(text)
    lines.append("")
    lines.append("A new HTTPS connection per request (server CPU, medians):")
    for kind, h in t["handshake"].items():
        text = (f"  {kind:<12} {h['cpu_us_per_new_tls_connection']:.0f} us per new connection with its request"
                f" ({h['new_tls_connections_per_core_s']} per second per core)")
        if "cpu_us_tls_handshake" in h:
            text += f"; {h['cpu_us_tls_handshake']:.0f} us more than a new plain HTTP connection (the TLS handshake)"
        lines.append(text)
    lines.append("")
    lines.append(f"Memory per idle connection ({t['idle_connections']} connections, each with one request answered,"
                 f" then idle; (RSS after - before) / connections; medians, min-max):")
    for scenario, label in (("idle-tls", "HTTPS"), ("idle", "HTTP")):
        for kind, f in t["idle"].get(scenario, {}).items():
            lines.append(f"  {label:<5} {kind:<12} {f['median']:>6} B ({f['min']}-{f['max']}; rounds {', '.join(map(str, f['rounds']))})")
    return "\n".join(lines)


def scenario_key(scenario, tls=False, new_connections=False):
    """A measurement's scenario in the report: "a", "e", ...; "a-tls", "e-tls" over HTTPS; "new"
    and "new-tls" for (a) with a new connection per request."""
    name = "new" if new_connections else scenario
    return f"{name}-tls" if tls else name


def visitor_login_path(next_path):
    """The login page a visitor opens with `next_path` as its next (sent as it is: a path)."""
    return "/login?next=" + next_path


def rss_bytes_per(before_kib, after_kib, count):
    """(VmRSS after - before) / count, in bytes (KiB in, as /proc gives them): the memory per
    session of (i), per idle connection of the TLS part."""
    return round((after_kib - before_kib) * 1024 / count)


def add_counts(tallies):
    """{status: count} tallies added up."""
    total = {}
    for tally in tallies:
        for key, count in tally.items():
            total[key] = total.get(key, 0) + count
    return dict(sorted(total.items()))


def spread(values):
    """A figure over rounds: its median, lowest, highest and every round's value."""
    return {"median": round(median(values)), "min": min(values), "max": max(values), "rounds": list(values)}


def render_session_memory(i):
    """The (i) lines of the report."""
    long, short = i["long"], i["short"]
    target = i["target_bytes"]

    def figure(f):
        answers = ", ".join(f"{count} x {status}" for status, count in f["login_statuses"].items())
        return (f"{f['median']} B per session (rounds {', '.join(map(str, f['rounds']))};"
                f" {f['min']}-{f['max']}; /login answered {answers})")

    return "\n".join([
        f"(i) memory per visitor's session: GET / without a cookie, then GET /login?next=… with its cookie"
        f" (memory store, {i['sessions']} sessions after {i['warmup_sessions']}, medians of {i['rounds']} round(s)):",
        f"  next of {long['next_bytes']} B: {figure(long)}; target <= {target} B:"
        f" {'met' if long['median'] <= target else 'NOT MET'}",
        f"  next {short['next']} (baseline): {figure(short)}; long - short {long['median'] - short['median']} B",
    ])


def run_scenario_alone(json_name, measure, render):
    """The `main` of a scenario script run alone (redis_cost.py, redis_capacity.py): builds (or
    takes BENCH_APPSHELL_BINARY), keeps this process off the server's core when pinned, runs
    `measure(bench)`, writes its figures to bench/out/<json_name> with the commit and binary, and
    prints `render(figures)`. Returns the exit status."""
    os.makedirs(LOGS, exist_ok=True)
    bench = Bench()
    try:
        bench.build()
        if bench.machine.pinned:
            os.sched_setaffinity(0, bench.machine.load_cpus)  # this script stays off the server's core
        bench.report_lua = bench.lua("report.lua", REPORT_LUA)
        figures = measure(bench)
        path = write_figures(json_name, figures)
        print(render(figures))
        print(f"written: {path}")
    except BenchError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        for server in list(RUNNING):
            server.stop()
        shutil.rmtree(bench.tmp, ignore_errors=True)
    return 0


def write_figures(json_name, figures):
    """Writes a scenario's figures to bench/out/<json_name>, with the commit and the binary
    measured; returns the path."""
    path = os.path.join(OUT, json_name)
    with open(path, "w") as f:
        json.dump(dict(figures, commit=git_commit(), binary=os.environ.get("BENCH_APPSHELL_BINARY")), f, indent=2)
        f.write("\n")
    return path


def git_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def actions_only(bench):
    """BENCH_ONLY=e: scenario (e) alone, its rounds interleaved as in the full run; prints the
    medians (actions/s, CPU per action) and the memory store's ratio to the C reference without a
    store. Writes no report."""
    for round_number in range(1, bench.rounds + 1):
        log(f"round {round_number} of {bench.rounds}")
        bench.actions_round(round_number)
    rps = {}
    for server, store in (("appshell", "memory"), ("c-reference", None), ("c-reference", "sqlite"),
                          ("appshell", "sqlite")):
        runs = [r for r in bench.runs if r["scenario"] == "e" and r["server"] == server and r["store"] == store]
        rps[(server, store)] = median(r["rps"] for r in runs)
        print(f"(e) {server}/{store or 'no store'}: {rps[(server, store)]:.0f} actions/s"
              f" ({min(r['rps'] for r in runs):.0f}-{max(r['rps'] for r in runs):.0f}),"
              f" CPU {median(r.get('cpu_us_per_request') or 0 for r in runs):.1f} us/action")
    print(f"(e) memory / C reference without a store: "
          f"{rps[('appshell', 'memory')] / rps[('c-reference', None)]:.3f}")


def tls_only(bench):
    """BENCH_ONLY=tls: the TLS part alone (with (a) over plain HTTP beside it); prints its lines
    and writes them as bench/out/latest.json (and latest.txt), holding only this part."""
    tls = bench.tls_summary(bench.tls_part(baseline=True))
    report = bench.report_head()
    report.update({"settings": bench.tls_settings(), "targets": TARGETS, "tls": tls,
                   "notes": bench.notes + bench.socket_error_notes(set(TLS_SCENARIOS)), "runs": bench.runs})
    text = render_tls(tls, report["settings"]["text"])
    if report["notes"]:
        text += "\n\n" + "\n".join("Note: " + note for note in report["notes"])
    write_report(report, text)


def write_report(report, text):
    """bench/out/latest.json and latest.txt, then the text on standard output."""
    with open(os.path.join(OUT, "latest.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    with open(os.path.join(OUT, "latest.txt"), "w") as f:
        f.write(text + "\n")
    print()
    print(text)
    print(f"\nwritten: {os.path.join(OUT, 'latest.json')}")


def session_memory_only(bench):
    """BENCH_ONLY=i: scenario (i) alone, its rounds; prints its lines (and any note). Writes no report."""
    print(render_session_memory(bench.session_memory()))
    for note in bench.notes:
        print("Note: " + note)


def logins_only(bench):
    """BENCH_ONLY=f: scenario (f) alone (with (a) alone before each round, for its ratio); prints
    the medians of the reads' requests/s and p99 and of the logins per second. Writes no report."""
    ratios, p99s, logins = [], [], []
    for round_number in range(1, bench.rounds + 1):
        log(f"round {round_number} of {bench.rounds}")
        alone = bench.run_appshell("a", "memory", round_number)
        beside = bench.logins_round(round_number)
        ratios.append(beside["rps"] / alone["rps"])
        p99s.append(beside["p99_ms"])
        logins.append(beside["logins_per_s"])
    print(f"(f): reads / (a) alone {median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}),"
          f" p99 {median(p99s):.2f} ms ({min(p99s):.2f}-{max(p99s):.2f}),"
          f" logins {median(logins):.1f}/s ({min(logins):.1f}-{max(logins):.1f})")


def main():
    os.makedirs(LOGS, exist_ok=True)
    for name in os.listdir(LOGS):
        os.remove(os.path.join(LOGS, name))
    # Ctrl-C and SIGTERM both end the run through the finally below, which stops every server.
    signal.signal(signal.SIGTERM, interrupt)
    bench = None
    try:
        bench = Bench()
        bench.build()
        if bench.machine.pinned:
            os.sched_setaffinity(0, bench.machine.load_cpus)  # this script stays off the server's core
        bench.report_lua = bench.lua("report.lua", REPORT_LUA)
        log(f"{bench.rounds} round(s) of {bench.warmup} s warm-up + {bench.duration} s per measurement;"
            f" server on CPU {bench.machine.server_cpus}, wrk on CPU {bench.machine.load_cpus}"
            + (f" ({bench.machine.note})" if bench.machine.note else ""))
        if os.environ.get("BENCH_ONLY", "") == "e":
            actions_only(bench)
            return
        if os.environ.get("BENCH_ONLY", "") == "f":
            logins_only(bench)
            return
        if os.environ.get("BENCH_ONLY", "") == "h":
            print(scaleout.render(scaleout.measure(bench)))
            return
        if os.environ.get("BENCH_ONLY", "") == "i":
            session_memory_only(bench)
            return
        if os.environ.get("BENCH_ONLY", "") == "tls":
            tls_only(bench)
            return
        if os.environ.get("BENCH_ONLY", "") == "j":
            print(userpages.render_live(userpages.live_measure(bench)))
            return
        if os.environ.get("BENCH_ONLY", "") == "k":
            print(userpages.render_compare(userpages.compare_measure(bench)))
            return
        if os.environ.get("BENCH_ONLY", "") == "l":
            costs = redis_cost.measure(bench)
            print(redis_cost.render(costs))
            print(f"written: {write_figures('redis_cost.json', costs)}")
            return
        if os.environ.get("BENCH_ONLY", "") == "m":
            capacity = redis_capacity.measure(bench)
            print(redis_capacity.render(capacity))
            print(f"written: {write_figures('redis_capacity.json', capacity)}")
            return
        bench.throughput()
        log("the TLS part: (a) and (e) over HTTPS, new connections, idle connections")
        tls = bench.tls_summary(bench.tls_part(baseline=False))
        log("(g) live event streams (bench/streams.py)")
        live = streams.measure(bench)
        log("(h) two instances on Redis behind nginx (bench/scaleout.py)")
        scale = scaleout.measure(bench)
        log("memory per session and under 1M cookieless requests")
        memory = bench.memory()
        log("(i) memory per visitor's session, a long next and a short one")
        visitors = bench.session_memory()
        log("(j) and (k): the user's store, on Notes (bench/userpages.py)")
        notes = userpages.notes_binary(bench)
        user_pages = userpages.live_measure(bench, notes)
        compared = userpages.compare_measure(bench, notes)
        log("(l) the shared store's cost per request, SQLite against Redis (bench/redis_cost.py)")
        store_costs = redis_cost.measure(bench)
        log("cold start")
        cold = bench.cold_start()
        report = bench.report(memory, cold)
        report["streams"] = live
        report["scaleout"] = scale
        report["session_memory"] = visitors
        report["tls"] = tls
        report["user_pages"] = user_pages
        report["user_store_costs"] = compared
        report["redis_costs"] = store_costs
        text = (bench.render(report) + "\n\n" + streams.render(live) + "\n\n" + scaleout.render(scale)
                + "\n\n" + render_session_memory(visitors) + "\n\n" + userpages.render_live(user_pages) + "\n\n"
                + userpages.render_compare(compared) + "\n\n" + redis_cost.render(store_costs) + "\n\n" + render_tls(tls, bench.tls_settings()["text"]))
        write_report(report, text)
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted: stopping the servers", file=sys.stderr)
        return 130
    except (BenchError, subprocess.CalledProcessError) as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for server in list(RUNNING):
            server.stop()
        if bench is not None:
            shutil.rmtree(bench.tmp, ignore_errors=True)


def interrupt(signum, frame):
    raise KeyboardInterrupt()


def self_test():
    """The parsers on fixed input: run by `make bench-check`, starts nothing."""
    sample = ("Running 1s test @ http://127.0.0.1:1/api/state\n"
              "BENCH_RESULT requests=50000 duration_us=2000000 bytes=70000000 connect=0 read=1 write=0"
              " status=3 timeout=2 p50=1234.0 p90=2000.0 p99=4567.6 max=9000.0 mean=1300.0\n")
    r = parse_wrk(sample)
    assert r["rps"] == 25000.0 and r["p50_ms"] == 1.234 and r["p99_ms"] == 4.568, r
    assert r["status_errors"] == 3 and r["socket_errors"] == 3 and r["bytes_per_response"] == 1400, r
    metrics = parse_metrics("# HELP x\nappshell_sessions_created_total 12\nappshell_sessions_in_memory 7\n")
    assert metrics == {"appshell_sessions_created_total": 12.0, "appshell_sessions_in_memory": 7.0}
    headers = [("Content-Type", "x"), ("Set-Cookie", f"{COOKIE}=abc_-1; Path=/; HttpOnly")]
    assert set_cookie(headers) == "abc_-1" and set_cookie([]) is None
    lua = ACTIONS_LUA % {"cookies": '"x", "y"', "cookie_name": COOKIE, "threads": 2}
    assert "local cookies = {\"x\", \"y\"}" in lua and "% 2 == tid" in lua and "%%" not in lua
    rows = [{"scenario": "e", "label": "memory / C", "ratio": 0.31, "target": 0.3, "met": True},
            {"scenario": "f", "label": "p99 (ms)", "value": 6.0, "target": 5.0, "met": False, "logins_per_s": 3.0}]
    lines = render_e_f(rows)
    assert "0.31 (target >= 0.30: met)" in lines[0] and "NOT MET); 3.0 logins/s" in lines[1], lines
    # (i): the figure per session, its spread over rounds, the lines and the goal
    assert visitor_login_path("/main/list") == "/login?next=/main/list"
    assert len(visitor_login_path(dict(VISITOR_NEXTS)["long"])) == len("/login?next=/") + 7000
    assert rss_bytes_per(20_000, 40_000, 5000) == 4096 and rss_bytes_per(100, 99, 1024) == -1
    assert spread([5000, 4000, 4500]) == {"median": 4500, "min": 4000, "max": 5000, "rounds": [5000, 4000, 4500]}
    assert add_counts([{"200": 3}, {"200": 2, "303": 1}]) == {"200": 5, "303": 1}
    figures = {"sessions": 5000, "warmup_sessions": 200, "rounds": 3, "target_bytes": 4096,
               "long": {**spread([4100, 4096, 4000]), "next_bytes": 7001, "login_statuses": {"200": 15000}},
               "short": {**spread([3000, 3100, 2900]), "next_bytes": 10, "next": "/main/list",
                         "login_statuses": {"200": 15000}}}
    lines = render_session_memory(figures).splitlines()
    assert lines[1] == ("  next of 7001 B: 4096 B per session (rounds 4100, 4096, 4000; 4000-4100;"
                        " /login answered 15000 x 200); target <= 4096 B: met"), lines
    assert lines[2].startswith("  next /main/list (baseline): 3000 B per session") and lines[2].endswith(
        "long - short 1096 B"), lines
    figures["long"] = {**spread([4200, 4097]), "next_bytes": 7001, "login_statuses": {"200": 10000}}
    assert render_session_memory(figures).splitlines()[1].endswith("target <= 4096 B: NOT MET")
    folder = tempfile.mkdtemp(prefix="c-reference-build-")
    try:
        binary = os.path.join(folder, "c-reference")
        build_c_reference(binary, strict=True)
        check_c_reference(binary)
        check_c_reference_tls(binary)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert cpu_per_request(1.0, 1.5, 10_000) == 50.0 and cpu_per_request(None, 1.0, 5) is None
    assert proc_cpu_seconds(os.getpid()) is not None
    # the TLS part: its names, parsers and lines
    assert [scenario_key("a"), scenario_key("e", True), scenario_key("a", True, True), scenario_key("a", False, True)] == [
        "a", "e-tls", "new-tls", "new"]
    assert swift_priorities('static let priorities =\n  "A:B"\n  + ":C"\n') == "A:B:C"
    assert c_priorities('static const char TLS_PRIORITIES[] =\n  "A:B"\n  ":C";') == "A:B:C"
    trace = ("    ClientHello, Length=288\n    ServerHello, Length=84\n    ClientHello, Length=321\n"
             "Server Temp Key: ECDH, prime256v1, 256 bits\nNew, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256\n")
    assert parse_s_client(trace) == {"protocol": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256",
                                     "key_exchange": "ECDH, prime256v1, 256 bits", "hello_retry": True}
    assert parse_s_client(trace.replace("    ClientHello, Length=321\n", ""))["hello_retry"] is False
    assert tcp_passive_opens() is not None and children_cpu_seconds() >= 0
    summary = {"rps": 900.0, "p50_ms": 1.0, "p99_ms": 2.0, "rps_spread": [850.0, 950.0], "cpu_us_per_request": 1000.0,
               "cpu_spread": [990.0, 1100.0], "server_cpu_share": 0.98, "wrk_cpu_share": 0.5,
               "connections_per_request": 1.0, "status_errors": 0, "socket_errors": 0}
    negotiated = {"protocol": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256", "key_exchange": "X25519",
                  "hello_retry": False, "resumed_tls1_3": "0 of 5", "resumed_tls1_2": "0 of 5"}
    text = render_tls({"negotiated": {"appshell": negotiated}, "scenarios": {"new-tls": {"appshell/memory": summary}},
                       "ratios": [{"label": "new connections HTTPS / C", "ratio": 0.95, "ratio_spread": [0.9, 1.0],
                                   "pair_median": 0.97, "cpu_ratio": 1.02}],
                       "handshake": {"appshell": {"cpu_us_per_new_tls_connection": 1000.0,
                                                  "new_tls_connections_per_core_s": 1000, "cpu_us_tls_handshake": 950.0}},
                       "idle_connections": 2000, "idle": {"idle-tls": {"appshell": spread([30000, 31000, 29000])}}},
                      "settings")
    for expected in ("HelloRetryRequest no", "(850-950)", "req/s 0.95; pairs 0.97 (0.90-1.00); CPU per request x1.02",
                     "1000 us per new connection with its request (1000 per second per core); 950 us more",
                     "HTTPS appshell      30000 B (29000-31000; rounds 30000, 31000, 29000)"):
        assert expected in text, (expected, text)
    print("bench self-test: 9 passed, 0 failed (the C reference compiled without warnings and answered,"
          " over HTTP and over HTTPS)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        try:
            self_test()
        except BenchError as error:
            print(f"bench self-test: {error}", file=sys.stderr)
            sys.exit(1)
        sys.exit(0)
    sys.exit(main())
