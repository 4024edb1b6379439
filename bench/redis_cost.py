#!/usr/bin/env python3
"""Scenario (l) of `make bench`: what a request costs each process, SQLite store against Redis.

Per round, fresh topologies one after the other, interleaved (SQLite, Redis, SQLite, Redis…): one
AppShell release instance with THREADS event loops on the SQLite store; the same on the Redis
store, with Debian's redis-server (no persistence, a free port) pinned beside it as (h) pins
them; with BENCH_REDIS_RELAY=1 also two instances on the one Redis, the load on the first and the
event streams of load (4) on the second (the relay's cost). SESSIONS logged-in sessions, as many
keep-alive connections, wrk with a Lua script (run.py's warm-up, then 5 seconds, or BENCH_DURATION):

  (1) read-one:    GET /api/state of one session, over and over;
  (2) read-many:   GET /api/state of the SESSIONS sessions in turn (each wrk thread rotates the
                   cookies of its slice of them);
  (3) actions:     POST /api/actions, showList and pop alternating on the SESSIONS sessions (as (e));
  (4) actions+sse: (3) while a page of every session holds its event stream open (GET /api/events,
                   read and counted by this script): the state events, and the relay's publish.

Figures per load and store: requests/s; AppShell's and redis-server's CPU time (user + system,
/proc/<pid>/stat, before and after the measured run) per completed request; from Redis (INFO,
before and after, this script's own INFO calls taken out): per request, the calls and
microseconds of each command (`INFO commandstats`: a script's own time includes the commands it
calls, and those are also counted under their own names), the commands processed
(`total_commands_processed`, those scripts call included), the bytes
received and sent (`total_net_input_bytes` / `total_net_output_bytes`), and the round trips:
`total_reads_processed`, the read events on client sockets (a request sent and answered before the
next is one read; a pipeline arriving in one segment is one too). Medians of the rounds with their
spread (min-max), and issue 36's ratios with their targets. Also each process's user and system
CPU time and context switches (every thread's, /proc/<pid>/task/*/status) per request: where a
round trip's cost lands (Redis's is mostly system time: a wake-up, a read, a write per round trip).

`python3 bench/redis_cost.py` runs it alone (BENCH_APPSHELL_BINARY: a release build to measure,
else it builds one; BENCH_ROUNDS, default 3 with BENCH_QUICK=1 else 5; BENCH_DURATION, default 2 s with
BENCH_QUICK=1 else 5 s; BENCH_WARMUP, BENCH_QUICK as run.py reads them; `--trace`: the commands
Redis gets for one read, one read of another session, a showList and a pop, from MONITOR); run.py runs it after (k), and alone with
BENCH_ONLY=l. Writes bench/out/redis_cost.json. Python 3 standard library and Debian's redis-server.
"""

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if __name__ == "__main__":
    sys.modules.setdefault("redis_cost", sys.modules[__name__])
import run  # noqa: E402  (the helpers of make bench: servers, logins, wrk, CPU time)
import streams  # noqa: E402  (events_request)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "scaleout"))
from topology import free_port, wait_for_port  # noqa: E402

SESSIONS = 16
DURATION = 5  # seconds per measurement unless BENCH_DURATION says
THREADS = 2  # AppShell's event loops (APPSHELL_THREADS), as in issue 36's figures
LOADS = {
    "read-one": "GET /api/state, one session",
    "read-many": f"GET /api/state, {SESSIONS} sessions in turn",
    "actions": f"POST /api/actions showList/pop, {SESSIONS} sessions",
    "actions-sse": f"the actions, an event stream open per session",
}
# Issue 36, point 1: Redis's CPU per action and per read of many sessions (µs, at most), and
# AppShell's CPU with Redis over its CPU with SQLite at the same load (at most).
TARGETS = {"redis_us_per_action": 15.0, "redis_us_per_read_many": 3.0, "appshell_redis_over_sqlite": 1.5}
STAT_FIELDS = ("total_commands_processed", "total_net_input_bytes", "total_net_output_bytes",
               "total_reads_processed", "total_writes_processed")

# Load (2), after run.THREAD_NUMBERING_LUA (joined at call time: run.py imports this file before
# it defines that): each wrk thread takes its slice of the cookies (thread k of n: k+1, k+1+n, …)
# and sends a read of each in turn.
READS_LUA = r"""
local cookies = {%(cookies)s}
local requests = {}
local sent = 0

function init(args)
  for i = 1, #cookies do
    if (i - 1) %% %(threads)d == tid then
      table.insert(requests, wrk.format("GET", "/api/state", {["Cookie"] = "%(cookie_name)s=" .. cookies[i]}))
    end
  end
end

function request()
  sent = sent + 1
  return requests[(sent %% #requests) + 1]
end
"""


# --- Redis: the server and its INFO -----------------------------------------------------------


class Redis:
    """Debian's redis-server on a free port of 127.0.0.1, no persistence, pinned to the server's
    cores; `info()` asks it on a connection of its own."""

    def __init__(self, bench, folder):
        self.port = free_port()
        self.process = subprocess.Popen(
            bench.machine.server_prefix()
            + ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", folder, "--logfile", os.path.join(folder, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.process)
        self.connection = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.buffer = b""

    @property
    def pid(self):
        return self.process.pid

    def command(self, *words):
        """One command and its answer (a bulk string as text, else the raw line)."""
        self.connection.sendall(b"*%d\r\n" % len(words) + b"".join(
            b"$%d\r\n%s\r\n" % (len(w.encode()), w.encode()) for w in words))
        line = self._line()
        if not line.startswith(b"$"):
            return line.decode()
        size = int(line[1:])
        while len(self.buffer) < size + 2:
            self._more()
        text, self.buffer = self.buffer[:size], self.buffer[size + 2 :]
        return text.decode()

    def _line(self):
        while b"\r\n" not in self.buffer:
            self._more()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _more(self):
        data = self.connection.recv(65536)
        if not data:
            raise run.BenchError("redis-server closed the connection")
        self.buffer += data

    def info(self):
        """INFO stats and commandstats: ({field: number}, {command: (calls, usec)})."""
        return parse_info(self.command("INFO", "stats")), parse_commandstats(self.command("INFO", "commandstats"))

    def stop(self):
        try:
            self.connection.close()
        except OSError:
            pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def parse_info(text):
    """INFO's `field:value` lines to {field: number} (the numeric ones)."""
    values = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        try:
            values[key] = float(value)
        except ValueError:
            pass
    return values


def parse_commandstats(text):
    """`cmdstat_evalsha:calls=3,usec=12,…` lines to {"evalsha": (calls, usec)}."""
    stats = {}
    for line in text.splitlines():
        if line.startswith("cmdstat_"):
            name, _, rest = line[len("cmdstat_") :].partition(":")
            fields = dict(item.split("=", 1) for item in rest.split(","))
            stats[name] = (int(fields["calls"]), int(fields["usec"]))
    return stats


def redis_delta(before, after, requests, own_infos=2):
    """Per request: each command's calls and µs, and STAT_FIELDS, with this script's own INFO calls
    taken out (`info()` sends INFO stats, then INFO commandstats: each delta counts two of them)."""
    (stats_before, commands_before), (stats_after, commands_after) = before, after
    commands = {}
    for name, (calls, usec) in commands_after.items():
        was_calls, was_usec = commands_before.get(name, (0, 0))
        if name == "info":
            calls -= own_infos
        if calls - was_calls > 0:
            commands[name] = {"calls": round((calls - was_calls) / requests, 3),
                              "us": round((usec - was_usec) / requests, 3)}
    stats = {field: (stats_after.get(field, 0) - stats_before.get(field, 0)) for field in STAT_FIELDS}
    # this script's own INFO commands: one read and one write each, and their commands
    stats["total_commands_processed"] -= own_infos
    stats["total_reads_processed"] -= own_infos
    stats["total_writes_processed"] -= own_infos
    return commands, {field: round(value / requests, 3) for field, value in stats.items()}


# --- a process's CPU time, split (run.proc_cpu_split), and its context switches -------------------


def context_switches(pid):
    """The voluntary and involuntary context switches of every thread of a process, added up."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/status") as status:
                for line in status:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        total += int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass  # a thread that ended meanwhile: its switches are gone with it
    return total


class ProcessMeter:
    """User and system CPU time and context switches of some processes, before and after."""

    def __init__(self, pids):
        self.pids = pids
        self.before = [(run.proc_cpu_split(pid), context_switches(pid)) for pid in pids]

    def per_request(self, requests):
        """Per process: user µs, system µs and context switches per request."""
        figures = []
        for pid, (cpu_before, switches_before) in zip(self.pids, self.before):
            cpu_after = run.proc_cpu_split(pid)
            if cpu_before is None or cpu_after is None or not requests:
                figures.append(None)
                continue
            figures.append({
                "user_us": round((cpu_after[0] - cpu_before[0]) * 1e6 / requests, 1),
                "system_us": round((cpu_after[1] - cpu_before[1]) * 1e6 / requests, 1),
                "switches": round((context_switches(pid) - switches_before) / requests, 2)})
        return figures


# --- the event streams of load (4) ---------------------------------------------------------------


class StreamReader:
    """One event stream per cookie, opened on `port` and read (and its `state` events counted) by a
    thread until stopped, so that the server never waits on a full socket."""

    def __init__(self, port, cookies):
        self.sockets = []
        for cookie in cookies:
            connection = socket.create_connection(("127.0.0.1", port), timeout=10)
            connection.sendall(streams.events_request(cookie))
            self.sockets.append(connection)
        # the header block of every stream, before the load starts
        for connection in self.sockets:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = connection.recv(65536)
                if not chunk:
                    raise run.BenchError("an event stream closed before its headers")
                head += chunk
            if not head.startswith(b"HTTP/1.1 200"):
                raise run.BenchError(f"GET /api/events answered {head[:60]!r}")
            connection.setblocking(False)
        self.events = 0
        self.closed = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            ready, _, _ = select.select(self.sockets, [], [], 0.1)
            for connection in ready:
                try:
                    data = connection.recv(262144)
                except BlockingIOError:
                    continue
                if not data:
                    self.sockets.remove(connection)
                    self.closed += 1
                    continue
                self.events += data.count(b"event: state")

    def stop(self):
        self.running = False
        self.thread.join()
        for connection in self.sockets:
            connection.close()


# --- one topology, its loads ---------------------------------------------------------------------


class Topology:
    """`store` ("sqlite", "redis" or "redis2": two instances on one Redis), fresh."""

    def __init__(self, bench, store):
        self.bench, self.store = bench, store
        self.folder = tempfile.mkdtemp(prefix="redis-cost-", dir=bench.tmp)
        self.redis = None
        self.instances = []
        extra = {"APPSHELL_THREADS": str(THREADS)}
        try:
            if store == "sqlite":
                self.instances.append(bench.appshell_server("sqlite", "AppShell (sqlite)", extra).start().wait_ready())
            else:
                self.redis = Redis(bench, self.folder)
                extra["APPSHELL_STORE_URL"] = f"redis://127.0.0.1:{self.redis.port}/0"
                for number in range(2 if store == "redis2" else 1):
                    server = bench.appshell_server("redis", f"AppShell (redis) {number + 1}", extra)
                    self.instances.append(server.start().wait_ready())
        except BaseException:
            self.stop()
            raise

    def stop(self):
        for server in self.instances:
            server.stop()
        if self.redis:
            self.redis.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def load_script(bench, load, cookies):
    """(path, headers, Lua script) of a load."""
    machine = bench.machine
    if load == "read-one":
        return "/api/state", [f"Cookie: {run.COOKIE}={cookies[0]}"], None
    if load == "read-many":
        return "/api/state", [], bench.lua("redis-cost-reads.lua", (run.THREAD_NUMBERING_LUA + READS_LUA) % {
            "cookies": ", ".join(json.dumps(c) for c in cookies), "cookie_name": run.COOKIE,
            "threads": machine.wrk_threads} + run.REPORT_LUA)
    return "/api/actions", [], bench.lua("redis-cost-actions.lua", run.ACTIONS_LUA % {
        "cookies": ", ".join(json.dumps(c) for c in cookies), "cookie_name": run.COOKIE,
        "threads": machine.wrk_threads} + run.REPORT_LUA)


def measure_load(bench, topology, load, cookies, round_number):
    """Warm-up, then the measured run of `load` on the first instance: wrk's figures, each
    process's CPU per request, Redis's INFO deltas per request."""
    port = topology.instances[0].port
    path, headers, script = load_script(bench, load, cookies)
    reader = None
    if load == "actions-sse":
        reader = StreamReader(topology.instances[-1].port, cookies)
    try:
        bench.wrk(port, path, bench.warmup, headers, script, connections=SESSIONS)
        pids = [server.pid for server in topology.instances]
        redis = topology.redis
        info_before = redis.info() if redis else None
        events_before = reader.events if reader else 0
        cpu_before = [run.proc_cpu_seconds(pid) for pid in pids]
        redis_before = run.proc_cpu_seconds(redis.pid) if redis else None
        meter = ProcessMeter(pids + ([redis.pid] if redis else []))
        result = bench.wrk(port, path, duration(bench), headers, script, connections=SESSIONS)
        cpu_after = [run.proc_cpu_seconds(pid) for pid in pids]
        redis_after = run.proc_cpu_seconds(redis.pid) if redis else None
        split = meter.per_request(result["requests"])
        info_after = redis.info() if redis else None
        if reader:
            time.sleep(0.2)  # the last events in flight
            result["events_per_request"] = round((reader.events - events_before) / result["requests"], 3)
            result["streams_closed"] = reader.closed
    finally:
        if reader:
            reader.stop()
    requests = result["requests"]
    result["appshell_us"] = [run.cpu_per_request(b, a, requests) for b, a in zip(cpu_before, cpu_after)]
    result["appshell_us_total"] = round(sum(u for u in result["appshell_us"] if u is not None), 1)
    # user and system µs, context switches per request: AppShell's instances, then Redis
    result["appshell_split"], result["redis_split"] = split[: len(pids)], (split[-1] if redis else None)
    if redis:
        result["redis_us"] = run.cpu_per_request(redis_before, redis_after, requests)
        result["redis_commands"], result["redis_stats"] = redis_delta(info_before, info_after, requests)
    result.update({"store": topology.store, "load": load, "round": round_number})
    run.log(f"  round {round_number} (l) {topology.store:6} {load:11}: {result['rps']:7.0f} req/s,"
            f" AppShell {result['appshell_us_total']:6.1f} us/req"
            + (f", Redis {result['redis_us']:5.1f} us/req, round trips"
               f" {result['redis_stats']['total_reads_processed']:.2f}" if redis else "")
            + f", errors {result['status_errors']}/{result['socket_errors']}")
    return result


def measure_round(bench, store, round_number):
    """Every load on a fresh topology of `store`."""
    topology = Topology(bench, store)
    try:
        cookies = [bench.login(topology.instances[0].port) for _ in range(SESSIONS)]
        return [measure_load(bench, topology, load, cookies, round_number) for load in LOADS]
    finally:
        topology.stop()


def stores():
    return ("sqlite", "redis", "redis2") if os.environ.get("BENCH_REDIS_RELAY", "") not in ("", "0") else (
        "sqlite", "redis")


def rounds(bench):
    """BENCH_ROUNDS, else 3 with BENCH_QUICK (medians need more than one round), else run.py's."""
    if os.environ.get("BENCH_ROUNDS", "").strip():
        return bench.rounds
    return 3 if bench.quick else bench.rounds


def duration(bench):
    """BENCH_DURATION, else at most DURATION seconds: a CPU time per request settles in a few
    seconds, and (l) has 8 to 12 measurements a round."""
    if os.environ.get("BENCH_DURATION", "").strip():
        return bench.duration
    return min(bench.duration, DURATION)


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": round(run.median(values), 2), "min": min(values), "max": max(values)}


def summarise(runs, store, load):
    """The medians (and min-max) of one store and load over the rounds."""
    mine = [r for r in runs if r["store"] == store and r["load"] == load]
    figures = {"rps": spread([r["rps"] for r in mine]), "appshell_us": spread([r["appshell_us_total"] for r in mine]),
               "errors": sum(r["status_errors"] + r["socket_errors"] for r in mine)}
    def added(r, key):
        parts = [p for p in r["appshell_split"] if p]
        return round(sum(p[key] for p in parts), 2) if parts else None

    figures["appshell_split"] = {key: run.median(added(r, key) for r in mine)
                                 for key in ("user_us", "system_us", "switches")}
    if mine and mine[0].get("redis_split"):
        figures["redis_split"] = {key: run.median(r["redis_split"][key] for r in mine if r["redis_split"])
                                  for key in ("user_us", "system_us", "switches")}
    if mine and "events_per_request" in mine[0]:
        figures["events_per_request"] = run.median(r["events_per_request"] for r in mine)
    if mine and "redis_us" in mine[0]:
        figures["redis_us"] = spread([r["redis_us"] for r in mine])
        figures["redis_stats"] = {field: run.median(r["redis_stats"][field] for r in mine) for field in STAT_FIELDS}
        names = sorted({name for r in mine for name in r["redis_commands"]})
        figures["redis_commands"] = {
            name: {key: run.median(r["redis_commands"].get(name, {}).get(key, 0) for r in mine) for key in ("calls", "us")}
            for name in names}
    return figures


def ratio(numerator, denominator):
    if not numerator or not denominator:
        return None
    return round(numerator["median"] / denominator["median"], 2)


def measure(bench):
    """The rounds, interleaved by store; the medians, ratios and targets."""
    if shutil.which("redis-server") is None:
        raise run.BenchError("(l) needs redis-server (make bench installs it)")
    count = rounds(bench)
    runs = []
    for round_number in range(1, count + 1):
        for store in stores():
            runs.extend(measure_round(bench, store, round_number))
    table = {store: {load: summarise(runs, store, load) for load in LOADS} for store in stores()}
    sqlite, redis = table["sqlite"], table["redis"]
    ratios = {
        "redis_us_per_action": (redis["actions"]["redis_us"] or {}).get("median"),
        "redis_us_per_read_many": (redis["read-many"]["redis_us"] or {}).get("median"),
        "appshell_redis_over_sqlite": {load: ratio(redis[load]["appshell_us"], sqlite[load]["appshell_us"])
                                       for load in LOADS},
    }
    return {"rounds": count, "duration_s": duration(bench), "warmup_s": bench.warmup, "sessions": SESSIONS,
            "threads": THREADS, "targets": TARGETS, "table": table, "ratios": ratios, "runs": runs}


def met(ok):
    return "met" if ok else "NOT MET"


def shown(f, digits=1):
    """A `spread` as the reports print it: `median (min-max)`, or `-` when there is none."""
    if not f:
        return "-"
    return f"{f['median']:.{digits}f} ({f['min']:.{digits}f}-{f['max']:.{digits}f})"


def render(l):
    """The (l) lines of the report."""
    fig = shown

    lines = [f"(l) CPU per request of AppShell ({l['threads']} threads) and redis-server, SQLite store against Redis,"
             f" {l['sessions']} sessions, medians of {l['rounds']} round(s) (min-max):"]
    for store, loads in l["table"].items():
        for load, f in loads.items():
            line = (f"  {store:6} {load:11} {fig(f['rps'], 0):>22} req/s  AppShell {fig(f['appshell_us']):>20} us"
                    f"  Redis {fig(f.get('redis_us')):>18} us")
            if "redis_stats" in f:
                s = f["redis_stats"]
                line += (f"  round trips {s['total_reads_processed']:.2f}, commands {s['total_commands_processed']:.2f},"
                         f" to Redis {s['total_net_input_bytes']:.0f} B, from Redis {s['total_net_output_bytes']:.0f} B")
            if "events_per_request" in f:
                line += f"  events {f['events_per_request']:.2f}"
            if f["errors"]:
                line += f"  errors {f['errors']}"
            lines.append(line)
    lines.append("  user + system CPU us and context switches per request (AppShell's instances added up; Redis):")
    for store, loads in l["table"].items():
        for load, f in loads.items():
            a, r = f["appshell_split"], f.get("redis_split")
            lines.append(f"    {store:6} {load:11} AppShell {a['user_us']:.1f} + {a['system_us']:.1f} us,"
                         f" {a['switches']:.2f} switches" + (
                             f"; Redis {r['user_us']:.1f} + {r['system_us']:.1f} us, {r['switches']:.2f} switches"
                             if r else ""))
    lines.append("  Redis's commands per request (calls, us; a script's us include the commands it calls):")
    for store, loads in l["table"].items():
        for load, f in loads.items():
            if f.get("redis_commands"):
                listed = sorted(f["redis_commands"].items(), key=lambda item: -item[1]["us"])
                lines.append(f"    {store:6} {load:11} " + ", ".join(
                    f"{name} {c['calls']:.2f} x {c['us']:.2f} us" for name, c in listed))
    r, t = l["ratios"], l["targets"]
    lines.append(f"  Redis CPU per action {r['redis_us_per_action']:.1f} us (target <= {t['redis_us_per_action']}:"
                 f" {met(r['redis_us_per_action'] <= t['redis_us_per_action'])}); per read of many sessions"
                 f" {r['redis_us_per_read_many']:.1f} us (target <= {t['redis_us_per_read_many']}:"
                 f" {met(r['redis_us_per_read_many'] <= t['redis_us_per_read_many'])})")
    limit = t["appshell_redis_over_sqlite"]
    lines.append("  AppShell with Redis / with SQLite: " + ", ".join(
        f"{load} {value:.2f}" + ("" if load == "actions-sse" else f" ({met(value <= limit)})")
        for load, value in r["appshell_redis_over_sqlite"].items() if value is not None)
        + f" (target <= {limit} for reads and actions)")
    return "\n".join(lines)


def main():
    return run.run_scenario_alone("redis_cost.json", measure, render)


# --- what Redis is sent, request by request (MONITOR) --------------------------------------------


def describe_monitor_line(line, limit=60):
    """A MONITOR line (`1733… [0 127.0.0.1:5555] "EVAL" "…" …`) shortened: each argument cut to
    `limit` characters, with its full length when longer."""
    head, _, rest = line.partition("] ")
    words, word, inside, escaped = [], [], False, False
    for char in rest:
        if inside:
            if escaped:
                word.append(char)
                escaped = False
            elif char == "\\":
                word.append(char)
                escaped = True
            elif char == '"':
                words.append("".join(word))
                word, inside = [], False
            else:
                word.append(char)
        elif char == '"':
            inside = True
    shown = [w if len(w) <= limit else f"{w[:limit]}…({len(w)} chars)" for w in words]
    return f"[{head.split('[', 1)[-1]}] " + " ".join(shown)


def trace(bench):
    """One read, one read of another session and a showList and a pop, each alone, on a fresh Redis
    topology: the commands Redis gets for each (MONITOR), printed."""
    topology = Topology(bench, "redis")
    try:
        port = topology.instances[0].port
        first, second = bench.login(port), bench.login(port)
        monitor = Redis.__new__(Redis)
        monitor.connection = socket.create_connection(("127.0.0.1", topology.redis.port), timeout=10)
        monitor.buffer = b""
        print(monitor.command("MONITOR"))
        steps = [
            ("GET /api/state (first session)", "GET", "/api/state", None, first),
            ("GET /api/state (first session, again)", "GET", "/api/state", None, first),
            ("GET /api/state (second session)", "GET", "/api/state", None, second),
            ("POST /api/actions showList (first session)", "POST", "/api/actions", '{"action":"showList"}', first),
            ("POST /api/actions pop (first session)", "POST", "/api/actions", '{"action":"pop"}', first),
        ]
        for title, method, path, body, cookie in steps:
            headers = {"Cookie": f"{run.COOKIE}={cookie}"}
            if body:
                headers["Content-Type"] = "application/json"
            status, _, answer = run.request(port, method, path, body=body, headers=headers)
            time.sleep(0.3)  # what follows the answer (the touch, the publish)
            print(f"--- {title}: {status}, {len(answer)} B")
            monitor.connection.settimeout(0.2)
            try:
                while True:
                    monitor._more()
            except (socket.timeout, TimeoutError):
                pass
            lines, monitor.buffer = monitor.buffer.split(b"\r\n"), b""
            for line in lines:
                if line.startswith(b"+"):
                    print("  " + describe_monitor_line(line[1:].decode(errors="replace")))
        monitor.connection.close()
    finally:
        topology.stop()


def self_test():
    """The INFO parsers and the deltas."""
    stats = parse_info("# Stats\r\ntotal_commands_processed:10\r\ntotal_reads_processed:7\r\nrole:x\r\n")
    assert stats == {"total_commands_processed": 10.0, "total_reads_processed": 7.0}, stats
    commands = parse_commandstats(
        "# Commandstats\r\ncmdstat_evalsha:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_info:calls=4,usec=8,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n")
    assert commands == {"evalsha": (3, 30), "info": (4, 8)}, commands
    before = ({"total_commands_processed": 10, "total_reads_processed": 7, "total_writes_processed": 7}, commands)
    after = ({"total_commands_processed": 32, "total_reads_processed": 19, "total_writes_processed": 19},
             {"evalsha": (13, 130), "info": (6, 12)})
    per, totals = redis_delta(before, after, 10)
    assert per == {"evalsha": {"calls": 1.0, "us": 10.0}}, per
    assert totals["total_commands_processed"] == 2.0 and totals["total_reads_processed"] == 1.0, totals
    print("redis_cost self-test: ok")


if __name__ == "__main__":
    if "--self-test" in sys.argv:
        self_test()
        sys.exit(0)
    if "--trace" in sys.argv:
        trace_bench = run.Bench()
        try:
            trace_bench.build()
            trace(trace_bench)
        finally:
            for trace_server in list(run.RUNNING):
                trace_server.stop()
            shutil.rmtree(trace_bench.tmp, ignore_errors=True)
        sys.exit(0)
    sys.exit(main())
