#!/usr/bin/env python3
"""Scenario (g) of `make bench`: live event streams at scale.

One AppShell instance (memory store, pinned as in (a)) holds STREAMS open `GET /api/events` streams,
each on a session of its own, opened from the loopback addresses 127.0.0.2 and up (ADDRESSES of
them: the ports of one address would not last, and the per-address limits stay on). Per round, on
a fresh server:

  1. (a) without streams: wrk on `GET /api/state` of one logged-in session, as run.py measures (a);
  2. RSS before, after the sessions are made (a cookieless `GET /api/state`, then one with the
     cookie, as a page's first two requests: the session then keeps its app), after the first
     5 000 streams and after all of them: RSS per open stream = (RSS with the streams - RSS with
     their sessions made) / streams, what a page's stream adds to a live session; what a session
     with its app costs is reported beside it;
  3. fan-out: PROBES logged-in sessions hold one stream each among the others; an action
     (showList, pop alternating) on one of them, and the time until its `state` event arrives on
     that session's stream (p50/p99 over every action of the round, PROBE_SECONDS at PROBE_RATE);
  4. (a) again with every stream open; then every stream is checked to be open still.

The server gets the limits that allow it (see SERVER_ENV): 20 000 connections (streams take at
most three quarters of them), 15 000 streams, 512 per address. This script raises its own
RLIMIT_NOFILE to the hard limit (the server inherits it): each side holds one descriptor per stream.

The streams are held with asyncio; once open they are not read (their transports are paused: the
server's heartbeats wait in the kernel's buffers), so that this script does not compete with the
probe and wrk for the load core. `python3 bench/streams.py` runs (g) alone (BENCH_APPSHELL_BINARY,
BENCH_ROUNDS, BENCH_DURATION, BENCH_QUICK, BENCH_STREAMS as run.py reads them); run.py runs it
after (a)-(f). Python 3 standard library only.
"""

import asyncio
import json
import math
import os
import re
import resource
import select
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if __name__ == "__main__":
    sys.modules.setdefault("streams", sys.modules[__name__])  # run.py imports this file as `streams`
import run  # noqa: E402  (the helpers of make bench: servers, wrk, login; read at call time only)

STREAMS = 15_000
ADDRESSES = 64  # 127.0.0.2 … 127.0.0.65: about 235 streams each
PROBES = 4
PROBE_SECONDS = 16  # longer than the 15 s heartbeat: one heartbeat round of every stream falls in it
PROBE_RATE = 50  # actions per second
OPENING = 256  # streams being opened at once
CHECKPOINT = 5_000  # RSS is also read after this many streams

TARGETS = {"bytes_per_stream": 16 * 1024, "fanout_p99_ms": 20.0, "a_ratio": 0.8}

SERVER_ENV = {
    "APPSHELL_MAX_CONNECTIONS": "20000",  # streams take at most three quarters: 15 000
    "APPSHELL_MAX_EVENT_STREAMS": str(STREAMS),
    "APPSHELL_MAX_CONNECTIONS_PER_IP": "1024",
    "APPSHELL_MAX_EVENT_STREAMS_PER_IP": "512",  # at most 3/4 of the connections per address
}

SESSION_REQUEST = b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def session_request(cookie):
    return f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {run.COOKIE}={cookie}\r\n\r\n".encode()


def events_request(cookie):
    return (f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
            f"Cookie: {run.COOKIE}={cookie}\r\n\r\n").encode()


def raise_open_files():
    """This process's (and its children's) soft limit on open files, raised to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def percentile(values, fraction):
    """The nearest-rank percentile of `values` (sorted here)."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def cookie_of(header_block):
    match = re.search(rb"(?im)^set-cookie: *" + run.COOKIE.encode() + rb"=([^;\r\n]*)", header_block)
    return match.group(1).decode() if match else None


def first_event_end(buffer):
    """Where the first `state` event of a chunked event stream ends in `buffer` (after the header
    block), or -1."""
    start = buffer.find(b"event: state\n")
    if start < 0:
        return -1
    end = buffer.find(b"\n\n", start)
    return -1 if end < 0 else end + 2


class Holder:
    """The streams held open (asyncio), and the sessions they were opened with."""

    def __init__(self, port):
        self.port = port
        self.loop = asyncio.new_event_loop()
        self.cookies = []
        self.streams = []  # (reader, writer)
        self.refused = {}  # status line -> count

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    async def make_sessions(self, count, workers=16):
        """`count` sessions, each made by a cookieless `GET /api/state` and a second one with its
        cookie (which keeps the session's app), on `workers` keep-alive connections."""
        per_worker = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]

        async def worker(n):
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            try:
                for _ in range(n):
                    writer.write(SESSION_REQUEST)
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
                    await reader.readexactly(length)
                    if not head.startswith(b"HTTP/1.1 200"):
                        raise run.BenchError(f"GET /api/state answered {head[:40]!r}")
                    cookie = cookie_of(head)
                    if not cookie:
                        raise run.BenchError("GET /api/state without a cookie set no cookie")
                    # Back with the cookie, as a page's next request: the session keeps its app
                    # now (a new visitor's is not kept between its first two requests).
                    writer.write(session_request(cookie))
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
                    await reader.readexactly(length)
                    if not head.startswith(b"HTTP/1.1 200"):
                        raise run.BenchError(f"GET /api/state with a cookie answered {head[:40]!r}")
                    self.cookies.append(cookie)
            finally:
                writer.close()

        await asyncio.gather(*(worker(n) for n in per_worker))

    async def open_streams(self, cookies, offset):
        """One stream per cookie, each on its own connection from 127.0.0.<2 + (offset + i) % ADDRESSES>."""
        gate = asyncio.Semaphore(OPENING)

        async def one(index, cookie):
            async with gate:
                try:
                    await open_one(index, cookie)
                except OSError as error:  # counted: the round then fails with the tally
                    name = type(error).__name__
                    self.refused[name] = self.refused.get(name, 0) + 1

        async def open_one(index, cookie):
            source = f"127.0.0.{2 + (offset + index) % ADDRESSES}"
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(source, 0))
            writer.write(events_request(cookie))
            buffer = b""
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    status = buffer.split(b"\r\n", 1)[0].decode(errors="replace") or "closed"
                    self.refused[status] = self.refused.get(status, 0) + 1
                    writer.close()
                    return
                buffer += chunk
                head_end = buffer.find(b"\r\n\r\n")
                if head_end >= 0 and not buffer.startswith(b"HTTP/1.1 200"):
                    status = buffer.split(b"\r\n", 1)[0].decode(errors="replace")
                    self.refused[status] = self.refused.get(status, 0) + 1
                    writer.close()
                    return
                if head_end >= 0 and first_event_end(buffer[head_end:]) >= 0:
                    break
            # Not read any more: what the server sends waits in the kernel's buffers.
            writer.transport.pause_reading()
            self.streams.append((reader, writer))

        await asyncio.gather(*(one(i, c) for i, c in enumerate(cookies)))

    async def still_open(self, settle=1.0):
        """How many of the held streams the server has not closed (read what waits, then look)."""
        for _, writer in self.streams:
            writer.transport.resume_reading()
        await asyncio.sleep(settle)
        return sum(1 for reader, _ in self.streams if not reader.at_eof() and reader.exception() is None)

    def close(self):
        for _, writer in self.streams:
            writer.transport.abort()
        self.streams = []
        self.loop.run_until_complete(asyncio.sleep(0))
        self.loop.close()


class Probe:
    """A logged-in session with its stream (a blocking socket) and a keep-alive connection for actions."""

    def __init__(self, port, cookie):
        self.cookie = cookie
        self.stream = socket.create_connection(("127.0.0.1", port))
        self.stream.sendall(events_request(cookie))
        self.buffer = b""
        self.poller = select.poll()  # select() stops at descriptor 1023
        self.poller.register(self.stream, select.POLLIN)
        self.read_event(timeout=10)  # the current state
        self.actions = socket.create_connection(("127.0.0.1", port))
        self.actions.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pushed = False

    def read_event(self, timeout):
        """The next `state` event's id on the stream (heartbeats skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            end = first_event_end(self.buffer)
            if end >= 0:
                event = self.buffer[:end]
                self.buffer = self.buffer[end:]
                match = re.search(rb"(?m)^id: *(\S+)", event)
                return match.group(1).decode() if match else None
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.poller.poll(remaining * 1000):
                raise run.BenchError("no state event on a probe's stream in time")
            chunk = self.stream.recv(65536)
            if not chunk:
                raise run.BenchError("a probe's stream was closed")
            self.buffer += chunk

    def act(self):
        """One action; the seconds from sending it to its state event on the stream."""
        action = "pop" if self.pushed else "showList"
        body = json.dumps({"action": action}).encode()
        message = (f"POST /api/actions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   f"Cookie: {run.COOKIE}={self.cookie}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        started = time.perf_counter()
        self.actions.sendall(message)
        event_id = self.read_event(timeout=10)
        delivered = time.perf_counter() - started
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += self.actions.recv(65536)
        head, _, rest = answer.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
        while len(rest) < length:
            rest += self.actions.recv(65536)
        if not head.startswith(b"HTTP/1.1 200"):
            raise run.BenchError(f"a probe's {action} answered {head[:40]!r}")
        version = json.loads(rest[:length])["version"]
        if event_id is None or not event_id.endswith("." + str(version)):
            raise run.BenchError(f"a probe's stream sent {event_id} after the action that made version {version}")
        self.pushed = not self.pushed
        return delivered

    def close(self):
        self.stream.close()
        self.actions.close()


def fan_out(probes, seconds, rate):
    """Actions on the probes in turn at `rate` per second for `seconds`: delivery times in ms."""
    times = []
    interval = 1.0 / rate
    started = time.monotonic()
    next_at = started
    while time.monotonic() - started < seconds:
        probe = probes[len(times) % len(probes)]
        times.append(probe.act() * 1000)
        next_at += interval
        pause = next_at - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    return times


def wait_rss_settled(server, seconds=1.0):
    time.sleep(seconds)
    return server.rss_kib()


def run_round(bench, round_number, streams, log):
    """One round of (g) on a fresh server: figures as a dict."""
    server = bench.appshell_server("memory", "AppShell (memory, streams)", extra=SERVER_ENV).start().wait_ready()
    holder = None
    probes = []
    try:
        port = server.port
        cookie = bench.login(port)
        headers = [f"Cookie: {run.COOKIE}={cookie}"]
        alone = bench.measure(server, port, "/api/state", headers)
        log(f"  round {round_number} (a) without streams: {alone['rps']:.0f} req/s, p99 {alone['p99_ms']:.2f} ms")
        rss_start = wait_rss_settled(server)
        holder = Holder(port)
        anonymous = streams - PROBES
        started = time.monotonic()
        holder.run(holder.make_sessions(anonymous))
        rss_sessions = wait_rss_settled(server)
        log(f"  {anonymous} sessions made (each with its app) in {time.monotonic() - started:.1f} s:"
            f" RSS {run.mib(rss_start)} -> {run.mib(rss_sessions)} MiB")
        started = time.monotonic()
        first = min(CHECKPOINT, anonymous)
        holder.run(holder.open_streams(holder.cookies[:first], 0))
        rss_checkpoint = wait_rss_settled(server)
        holder.run(holder.open_streams(holder.cookies[first:], first))
        probes = [Probe(port, bench.login(port)) for _ in range(PROBES)]
        opening_seconds = time.monotonic() - started
        rss_streams = wait_rss_settled(server)
        opened = len(holder.streams) + len(probes)
        if holder.refused or opened != streams:
            raise run.BenchError(f"{opened} of {streams} streams opened; refused: {holder.refused}")
        per_stream = (rss_streams - rss_sessions) * 1024 / opened
        per_stream_5k = (rss_checkpoint - rss_sessions) * 1024 / first
        marginal = (rss_streams - rss_checkpoint) * 1024 / (opened - first) if opened > first else None
        log(f"  {opened} streams open in {opening_seconds:.1f} s: RSS {run.mib(rss_streams)} MiB,"
            f" {per_stream / 1024:.1f} KiB per stream ({per_stream_5k / 1024:.1f} KiB at {first})")
        times = fan_out(probes, PROBE_SECONDS if not bench.quick else 4, PROBE_RATE)
        fanout = {"actions": len(times), "p50_ms": round(statistics.median(times), 3),
                  "p99_ms": round(percentile(times, 0.99), 3), "max_ms": round(max(times), 3)}
        log(f"  fan-out: {fanout['actions']} actions, delivery p50 {fanout['p50_ms']:.2f} ms"
            f" p99 {fanout['p99_ms']:.2f} ms max {fanout['max_ms']:.2f} ms")
        loaded = bench.measure(server, port, "/api/state", headers)
        ratio = loaded["rps"] / alone["rps"] if alone["rps"] else None
        log(f"  (a) with {opened} streams: {loaded['rps']:.0f} req/s (x{ratio:.2f}), p99 {loaded['p99_ms']:.2f} ms")
        still = holder.run(holder.still_open()) + len(probes)
        if still != opened:
            raise run.BenchError(f"only {still} of {opened} streams still open at the end of the round")
        return {
            "round": round_number, "streams": opened, "still_open": still,
            "rss_start_kib": rss_start, "rss_sessions_kib": rss_sessions,
            "rss_checkpoint_kib": rss_checkpoint, "checkpoint_streams": first, "rss_streams_kib": rss_streams,
            "bytes_per_stream": round(per_stream), "bytes_per_stream_checkpoint": round(per_stream_5k),
            "bytes_per_stream_marginal": round(marginal) if marginal else None,
            "bytes_per_stream_with_session": round((rss_streams - rss_start) * 1024 / opened),
            "bytes_per_session": round((rss_sessions - rss_start) * 1024 / anonymous),
            "opening_seconds": round(opening_seconds, 1), "fanout": fanout,
            "fanout_rounds_ms": [round(t, 3) for t in times],
            "a_alone": {k: alone[k] for k in ("rps", "p50_ms", "p99_ms", "status_errors", "socket_errors")},
            "a_with_streams": {k: loaded[k] for k in ("rps", "p50_ms", "p99_ms", "status_errors", "socket_errors")},
            "a_ratio": round(ratio, 3) if ratio else None, "hwm_kib": server.hwm_kib(),
        }
    finally:
        for probe in probes:
            probe.close()
        if holder is not None:
            holder.close()
        server.stop()


def measure(bench, log=None):
    """Scenario (g), `bench.rounds` rounds: the summary with every round's figures."""
    log = log or run.log
    limit = raise_open_files()
    streams = int(run.env_number("BENCH_STREAMS", STREAMS, int))
    if streams + 200 > limit:
        raise run.BenchError(f"(g) needs {streams + 200} open files and the hard limit is {limit}")
    rounds = []
    for round_number in range(1, bench.rounds + 1):
        rounds.append(run_round(bench, round_number, streams, log))
    med = run.median
    summary = {
        "streams": streams, "rounds": len(rounds), "server_env": SERVER_ENV, "probes": PROBES,
        "addresses": ADDRESSES, "targets": TARGETS,
        "bytes_per_stream": round(med(r["bytes_per_stream"] for r in rounds)),
        "bytes_per_stream_checkpoint": round(med(r["bytes_per_stream_checkpoint"] for r in rounds)),
        "checkpoint_streams": rounds[0]["checkpoint_streams"],
        "bytes_per_stream_with_session": round(med(r["bytes_per_stream_with_session"] for r in rounds)),
        "bytes_per_session": round(med(r["bytes_per_session"] for r in rounds)),
        "fanout_p50_ms": round(med(r["fanout"]["p50_ms"] for r in rounds), 3),
        "fanout_p99_ms": round(med(r["fanout"]["p99_ms"] for r in rounds), 3),
        "fanout_actions": sum(r["fanout"]["actions"] for r in rounds),
        "a_alone_rps": round(med(r["a_alone"]["rps"] for r in rounds), 1),
        "a_with_streams_rps": round(med(r["a_with_streams"]["rps"] for r in rounds), 1),
        "a_with_streams_p99_ms": round(med(r["a_with_streams"]["p99_ms"] for r in rounds), 3),
        "a_ratio": round(med(r["a_ratio"] for r in rounds), 3),
        "rounds_detail": [{k: v for k, v in r.items() if k != "fanout_rounds_ms"} for r in rounds],
    }
    return summary


def render(g):
    """The (g) lines of the report."""
    def met(ok):
        return "met" if ok else "NOT MET"

    per, p99, ratio = g["bytes_per_stream"], g["fanout_p99_ms"], g["a_ratio"]
    return "\n".join([
        f"(g) {g['streams']} live event streams, each on its own session (memory store, medians of {g['rounds']} round(s)):",
        f"  RSS per open stream: {per / 1024:.1f} KiB ((RSS with the streams - with their sessions live) / streams;"
        f" {g['bytes_per_stream_checkpoint'] / 1024:.1f} KiB at {g['checkpoint_streams']};"
        f" target <= {TARGETS['bytes_per_stream'] // 1024} KiB: {met(per <= TARGETS['bytes_per_stream'])})",
        f"    a session with its app {g['bytes_per_session'] / 1024:.1f} KiB more; session and stream together"
        f" {g['bytes_per_stream_with_session'] / 1024:.1f} KiB",
        f"  action -> its session's stream: p50 {g['fanout_p50_ms']:.2f} ms, p99 {p99:.2f} ms"
        f" ({g['fanout_actions']} actions; target p99 <= {TARGETS['fanout_p99_ms']:.0f} ms: {met(p99 <= TARGETS['fanout_p99_ms'])})",
        f"  (a) with the streams open: {g['a_with_streams_rps']:.0f} req/s (p99 {g['a_with_streams_p99_ms']:.2f} ms)"
        f" against {g['a_alone_rps']:.0f} without: x{ratio:.2f} (target >= {TARGETS['a_ratio']}: {met(ratio >= TARGETS['a_ratio'])})",
    ])


def main():
    run.os.makedirs(run.LOGS, exist_ok=True)
    bench = run.Bench()
    try:
        if not bench.appshell:
            swift = os.environ.get("SWIFT", "swift")
            subprocess.run([swift, "build", "-c", "release", "--product", "appshell"], cwd=run.REPO, check=True)
            bin_path = subprocess.run([swift, "build", "-c", "release", "--show-bin-path"], cwd=run.REPO,
                                      check=True, capture_output=True, text=True).stdout.strip()
            bench.appshell = os.path.join(bin_path, "appshell")
        if bench.machine.pinned:
            os.sched_setaffinity(0, bench.machine.load_cpus)
        bench.report_lua = bench.lua("report.lua", run.REPORT_LUA)
        g = measure(bench)
        print()
        print(render(g))
        with open(os.path.join(run.OUT, "streams.json"), "w") as f:
            json.dump(g, f, indent=2)
            f.write("\n")
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
    """The parsers on fixed input: run by `make bench-check`, starts nothing."""
    assert percentile([5, 1, 4, 2, 3], 0.5) == 3 and percentile(list(range(1, 101)), 0.99) == 99
    assert percentile([], 0.99) is None
    head = b"HTTP/1.1 200 OK\r\nSet-Cookie: " + run.COOKIE.encode() + b"=ab_-1; Path=/; HttpOnly\r\n\r\n"
    assert cookie_of(head) == "ab_-1" and cookie_of(b"HTTP/1.1 200 OK\r\n\r\n") is None
    body = b"4f\r\nevent: state\nid: c.3\ndata: {}\n\n\r\n"
    assert first_event_end(body) == body.index(b"\n\n") + 2 and first_event_end(b"d\r\n: heartbeat\n\n") == -1
    g = {"streams": 10, "rounds": 1, "bytes_per_stream": 15000, "bytes_per_stream_checkpoint": 15100,
         "checkpoint_streams": 5, "bytes_per_session": 6000, "bytes_per_stream_with_session": 21000,
         "fanout_p50_ms": 1.0, "fanout_p99_ms": 5.0, "fanout_actions": 100, "a_with_streams_rps": 90.0,
         "a_with_streams_p99_ms": 1.0, "a_alone_rps": 100.0, "a_ratio": 0.9}
    assert render(g).count("NOT MET") == 0 and "14.6 KiB" in render(g)
    print("streams self-test: 4 passed, 0 failed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    sys.exit(main())
