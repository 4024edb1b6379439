#!/usr/bin/env python3
"""`make flood-test` / `make flood`: floods against the real `appshell` process, on loopback only.

Four scenarios, each against a server of its own (SQLite store in a temporary folder, port 0):

  cookieless  FLOOD_REQUESTS (default 1 000 000) cookieless requests across every route with wrk
              (tests/flood/flood.lua), while logged-in users keep acting and reading. Asserts: no
              5xx and no socket error, the sessions held in memory never exceed the cap, the RSS
              stays under its start plus the cap times 1 KiB (the Security article, limits), and every request of
              the logged-in users is answered 200 on their own, still logged-in session. Reports
              the flood's rate; the users' p50/p99 as they saw them (their threads at nice
              FLOOD_USERS_NICE, -10 as root: the Reliability article, floods) and the server's own time for their
              requests (the access log, by X-Request-ID); each server thread's CPU time and time
              spent waiting for a core; the load average.
  slowloris   FLOOD_SLOW (500) connections that send their request a byte a second (half in the
              header block, half in a body), from ten loopback addresses, for FLOOD_HOLD seconds,
              while others ask for pages. Asserts: every other request is answered 200, the slow
              connections were held open all along, and once they fall silent the server closes
              each within three idle timeouts. Reports the others' latency.
  streams     FLOOD_STREAMS (1000) event streams held open (from twenty loopback addresses, one
              session each) while logged-in users act with their own streams open. Asserts: every
              stream opens and stays open, every action is answered 200, and its state event
              reaches the user's stream. Reports the actions' latency and the events' delay.
  idle        Issue 31, finding 1, with the defaults (maxConnections 1024, maxConnectionsPerIP 256,
              keep-alive timeout 5 s): 256 clients on each of 16 loopback addresses (127.0.0.2…17,
              4096 against the limit), half sending one request and then holding their connection,
              half sending one every 2 s on theirs and opening a new one 2 s after the server
              closed it; from a process of its own (`run.py --idle-clients`), so that its Python
              does not take the measuring threads' turns. For FLOOD_IDLE_HOLD (15) seconds without
              them, then as long with them: the logged-in users act and read (as in cookieless) and
              a new client asks for /healthz every 0.5 s (a new connection from 127.0.0.100…).
              Asserts: the server was held at seven eighths of its limit, every probe answered 200
              within 1 s, every request of the users 200 (in every scenario, one that finds its
              kept-alive connection closed before any answer is sent again once on a new one, as
              browsers do; counted here), the users' p99 with the flood within twice the figure
              without it, and once the flood falls silent the server closes each of its
              connections within the keep-alive timeout + 2 s; /metrics counted waiting connections closed both for the
              keep-alive timeout and reclaimed. The two time bounds (1 s, 2x) are asserted by
              `make flood` (FLOOD_STRICT_TIMES=1) and reported by `make flood-test`. Against the noise of a shared 2-core machine (a
              neighbour's build takes the cores of one phase and not the other's), the server runs
              with the users and the probes at nice FLOOD_USERS_NICE (-10 as root), above the flood's
              process and the neighbours, and the p99s are compared as the medians of five rounds'
              p99s (a fifth of the hold each) rather than over the whole phases. Reports the probes'
              p50/p99/max, the users' figures of both phases (as they saw them, and in the server's
              own time from the access log), the flood's tally and the server's CPU.

Usage: run.py APPSHELL_BINARY [scenario ...]. Environment: FLOOD_REQUESTS, FLOOD_CAP (the
session cap for the cookieless flood, default 100 000), FLOOD_SLOW, FLOOD_HOLD (seconds, 10),
FLOOD_STREAMS, FLOOD_IDLE_HOLD (seconds, 15), FLOOD_WRK (wrk's path), FLOOD_USERS_NICE. Python 3
standard library and Debian's wrk. Every server it starts is stopped. Exits 1 when an assertion
fails; figures go to standard output, and as JSON to tests/flood/out/latest.json.
"""

import asyncio
import http.client
import json
import os
import re
import resource
import signal
import socket
import statistics
import shutil
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
COOKIE = "appshell_session"
LOGGED = "flood-user-"  # the start of the request ids the logged-in users send
FAILURES = []


def env_int(name, default):
    return int(os.environ.get(name, default))


def check(condition, message):
    print(("  ok    " if condition else "  FAIL  ") + message, flush=True)
    if not condition:
        FAILURES.append(message)


def bound(condition, message):
    """A time bound: asserted by `make flood` (FLOOD_STRICT_TIMES=1: a release build, the issue's
    figures), reported by `make flood-test`, which runs in `make test` on a shared machine whose
    noise moves latencies by more than the bound's margin (targets are the benchmarks')."""
    if os.environ.get("FLOOD_STRICT_TIMES") == "1":
        check(condition, message)
    else:
        print(("  ok    " if condition else "  over  ") + message + " (reported, not asserted)", flush=True)


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Server:
    """The appshell binary on a free loopback port, with its store in a temporary folder. With
    `access_log`, its standard output (the access log) goes to a file, read by `request_micros`."""

    def __init__(self, binary, access_log=False, nice=None, **settings):
        self.folder = tempfile.mkdtemp(prefix="appshell-flood-")
        environment = {k: v for k, v in os.environ.items() if not k.startswith("APPSHELL_")}
        environment.update({
            "APPSHELL_HOST": "127.0.0.1", "APPSHELL_PORT": "0",
            "APPSHELL_ACCESS_LOG": "true" if access_log else "false",
            "APPSHELL_STORE_PATH": os.path.join(self.folder, "store.sqlite"),
            "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
        })
        environment.update({"APPSHELL_" + k: str(v) for k, v in settings.items()})
        self.errors = open(os.path.join(self.folder, "stderr"), "w+")
        # Standard output goes to a file, never to a pipe that a Python thread would have to drain
        # (taking turns with the users' threads). With the access log, through grep, which keeps
        # the lines of requests whose id starts with `LOGGED` and the events: a million lines of
        # the flood are not written to the disk that the store syncs.
        self.log_path = os.path.join(self.folder, "stdout")
        output = open(self.log_path, "w")
        self.filter = None
        if access_log:
            self.filter = subprocess.Popen(
                ["grep", "--line-buffered", "-F", "-e", f'"requestID":"{LOGGED}', "-e", '"event":'],
                stdin=subprocess.PIPE, stdout=output)
            output = self.filter.stdin
        # With `nice`, the server runs at that nice value (its threads inherit it).
        prioritize = None if nice is None else (lambda: os.setpriority(os.PRIO_PROCESS, 0, nice))
        self.process = subprocess.Popen([binary], cwd=REPO, env=environment, stdout=output, stderr=self.errors,
                                        preexec_fn=prioritize)
        if self.filter:
            self.filter.stdin.close()
        self.port = None
        with open(self.log_path) as log:
            while self.port is None:
                line = log.readline()
                if not line.endswith("\n"):
                    if self.process.poll() is not None:
                        raise RuntimeError("the server exited before listening")
                    time.sleep(0.02)
                    log.seek(log.tell() - len(line))
                    continue
                event = json.loads(line)
                if event.get("event") == "listening":
                    self.port = event["port"]

    def request_micros(self):
        """{request id: micros} of the access log's requests whose id starts with `LOGGED` (once
        the server stopped): the server's own time, from reading the request line to the answer
        handed to the kernel in full."""
        found = {}
        marker = f'"requestID":"{LOGGED}'
        with open(self.log_path) as log:
            for line in log:
                if marker in line:
                    entry = json.loads(line)
                    found[entry["requestID"]] = entry["micros"]
        return found

    def scheduling(self):
        """{thread name: [CPU ms, ms spent runnable but waiting for a core]} from schedstat; threads
        of the same name (the epoll threads) apart, as `name#1`, `name#2`… in the order of their ids."""
        threads = {}
        for task in sorted(os.listdir(f"/proc/{self.process.pid}/task"), key=int):
            try:
                with open(f"/proc/{self.process.pid}/task/{task}/comm") as comm:
                    name = comm.read().strip()
                with open(f"/proc/{self.process.pid}/task/{task}/schedstat") as stat:
                    ran, waited = (int(v) / 1e6 for v in stat.read().split()[:2])
            except (FileNotFoundError, ProcessLookupError):
                continue
            key, index = name, 1
            while key in threads:
                index += 1
                key = f"{name}#{index}"
            threads[key] = [ran, waited]
        return threads

    def memory(self):
        """(VmRSS, VmHWM) in KiB."""
        with open(f"/proc/{self.process.pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status)
        return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])

    def metric(self, name):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
        connection.close()
        match = re.search(rf"^{re.escape(name)} (\d+)$", text, re.M)
        return int(match.group(1)) if match else None

    def stop(self):
        if getattr(self, "status", None) is not None:
            return self.status
        self.process.terminate()
        try:
            status = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
        if self.filter:
            self.filter.wait(timeout=30)
        self.errors.seek(0)
        errors = self.errors.read()
        check(status == 0, f"the server exited 0 after SIGTERM (got {status})")
        check("fatal" not in errors.lower(), "no fatal error on standard error")
        self.status = status
        return status

    def close(self):
        """Stops the server if it runs, then removes its folder (store, logs)."""
        self.stop()
        self.errors.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class User:
    """A logged-in session on a kept-alive connection."""

    def __init__(self, port, source="127.0.0.1", tag=None):
        self.port, self.source, self.tag = port, source, tag
        self.sent = 0
        self.connection = None
        self.cookie = None
        self.connects, self.reused = 0, False  # connections made; whether this one answered before
        # A request that finds its reused connection closed before any answer is sent again once on
        # a new one, as browsers do (the server closes a kept-alive connection that waits past its
        # keep-alive timeout, or near the connection limit), and counted here.
        self.retries = 0
        self.state("/api/state")
        status, state = self.act("login", username="demo", password="appshell")
        if status != 200:
            raise RuntimeError(f"login failed: {status} {state}")

    def send(self, method, path, body=None):
        if self.connection is None:
            self.connects += 1
            self.reused = False
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15,
                                                         source_address=(self.source, 0))
        headers = {"Cookie": f"{COOKIE}={self.cookie}"} if self.cookie else {}
        if self.tag:
            # The access log's line of this request carries it (the Reliability article, observability).
            self.sent += 1
            self.request_id = f"{self.tag}{self.sent}"
            headers["X-Request-ID"] = self.request_id
        if body is not None:
            headers["Content-Type"] = "application/json"
        response = None
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()
            self.connection = None
            if self.reused and response is None and isinstance(error, (ConnectionResetError, BrokenPipeError)):
                self.retries += 1
                return self.send(method, path, body)
            raise
        self.reused = True
        cookie = response.getheader("Set-Cookie")
        if cookie and cookie.startswith(COOKIE + "="):
            self.cookie = cookie.split(";", 1)[0].split("=", 1)[1]
        if response.getheader("Connection", "").lower() == "close":
            self.connection.close()
            self.connection = None
        return response.status, data

    def state(self, path="/api/state"):
        status, data = self.send("GET", path)
        return status, json.loads(data) if data.startswith(b"{") else None

    def act(self, action, **parameters):
        status, data = self.send("POST", "/api/actions", json.dumps({"action": action, **parameters}))
        return status, json.loads(data) if data.startswith(b"{") else None


def users_loop(users, stop, results, nice=None):
    """Each user reads its state and acts (showList / pop) until `stop`; records (ms, ok, problem,
    request id, is an action). With `nice`, each user's thread runs at that nice value."""

    def run(user):
        if nice is not None:
            try:
                os.setpriority(os.PRIO_PROCESS, 0, nice)  # Linux: 0 is the calling thread
            except OSError:
                pass
        step = 0
        while not stop.is_set():
            step += 1
            started = time.perf_counter()
            try:
                if step % 4 == 0:
                    status, state = user.act("showList" if step % 8 == 4 else "pop")
                else:
                    status, state = user.state()
                ok = status == 200 and state is not None and state.get("root") == "main"
            except (OSError, http.client.HTTPException) as error:
                ok, state = False, str(error)
            problem = None if ok else (status, state.get("error") if isinstance(state, dict) else state)
            results.append(((time.perf_counter() - started) * 1000, ok, problem,
                            getattr(user, "request_id", None), step % 4 == 0))

    threads = [threading.Thread(target=run, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    return threads


def cookieless(binary, figures):
    requests = env_int("FLOOD_REQUESTS", 1_000_000)
    cap = env_int("FLOOD_CAP", 100_000)
    print(f"cookieless: {requests} cookieless requests across every route, session cap {cap}", flush=True)
    server = Server(binary, access_log=True, MAX_SESSIONS_IN_MEMORY=cap)
    try:
        users = [User(server.port, tag=f"{LOGGED}{n}-") for n in range(4)]
        rss_start, _ = server.memory()
        stop, results = threading.Event(), []
        # The users' threads stand for browsers on other machines: raised above the flood's wrk
        # (where allowed: root), so that their figures are the server's latency rather than
        # their own turn for a core. The server's threads keep their priority.
        nice = env_int("FLOOD_USERS_NICE", -10 if os.geteuid() == 0 else 0)
        load_before = os.getloadavg()
        scheduling_before = server.scheduling()
        threads = users_loop(users, stop, results, nice=nice or None)
        connections, wrk_threads = 32, 2
        per_thread = -(-requests // wrk_threads)
        marker = os.path.join(server.folder, "wrk-done")
        started = time.time()
        wrk = subprocess.Popen(
            [os.environ.get("FLOOD_WRK", "wrk"), f"-t{wrk_threads}", f"-c{connections}", "-d3600s",
             "--timeout", "10s", "-s", os.path.join(HERE, "flood.lua"), f"http://127.0.0.1:{server.port}/",
             "--", str(per_thread), marker],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # wrk waits for its whole duration even when every thread stopped: interrupt it then.
        # The RSS is sampled meanwhile (VmHWM would count the logins' 64 MiB password checks).
        rss_samples = [rss_start]
        while wrk.poll() is None and not all(os.path.exists(f"{marker}.{n}") for n in range(1, wrk_threads + 1)):
            time.sleep(0.1)
            rss_samples.append(server.memory()[0])
        elapsed = time.time() - started
        load_after = os.getloadavg()
        scheduling = {name: [round(v - scheduling_before.get(name, [0, 0])[i]) for i, v in enumerate(values)]
                      for name, values in server.scheduling().items()}
        wrk.send_signal(signal.SIGINT)
        output, errors = wrk.communicate(timeout=60)
        stop.set()
        for thread in threads:
            thread.join()
        line = next((l for l in output.splitlines() if l.startswith("FLOOD ")), None)
        check(line is not None, "wrk ran the flood and reported")
        if line is None:
            print(output, errors)
            return
        flood = json.loads(line[6:])
        rss_end = server.memory()[0]
        rss_peak = max(rss_samples + [rss_end])
        in_memory = server.metric("appshell_sessions_in_memory")
        created = server.metric("appshell_sessions_created_total")
        bound = rss_start + cap + 16 * 1024  # KiB: start + cap x 1 KiB + 16 MiB of buffers
        check(flood["responses"] >= requests, f"{flood['responses']} answers (asked for {requests})")
        check(flood["s5xx"] == 0, f"no 5xx answer ({flood['s5xx']})")
        socket_errors = sum(flood[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts"))
        check(socket_errors == 0, f"no socket error or timeout ({socket_errors})")
        check(in_memory is not None and in_memory <= cap, f"sessions in memory {in_memory} <= cap {cap}")
        check(rss_peak <= bound,
              f"RSS during the flood at most {rss_peak / 1024:.1f} MiB <= start {rss_start / 1024:.1f} MiB + cap x 1 KiB + 16 MiB "
              f"= {bound / 1024:.1f} MiB")
        failed = [r for r in results if not r[1]]
        check(len(results) > 0 and not failed,
              f"logged-in users: {len(results)} requests, all 200 on their logged-in session "
              f"({len(failed)} failed{': ' + str(failed[:3]) if failed else ''})")
        latencies = [r[0] for r in results]
        actions = [r[0] for r in results if r[4]]
        reads = [r[0] for r in results if not r[4]]
        server.stop()
        own = server.request_micros()
        served = [own[r[3]] / 1000 for r in results if r[3] in own]
        served_actions = [own[r[3]] / 1000 for r in results if r[3] in own and r[4]]
        check(len(served) == len(results), f"the access log has each of the users' requests ({len(served)})")
        figures["cookieless"] = {
            "requests": flood["responses"], "seconds": round(elapsed, 1),
            "rate": round(flood["responses"] / flood["seconds"]), "flood_p50_ms": flood["p50_ms"],
            "flood_p99_ms": flood["p99_ms"], "status_classes": {k: flood[k] for k in ("s2xx", "s3xx", "s4xx")},
            "sessions_created": created, "sessions_in_memory": in_memory, "cap": cap,
            "rss_start_mib": round(rss_start / 1024, 1), "rss_end_mib": round(rss_end / 1024, 1),
            "rss_peak_mib": round(rss_peak / 1024, 1), "users_requests": len(results),
            "users_p50_ms": round(percentile(latencies, 0.50), 2),
            "users_p99_ms": round(percentile(latencies, 0.99), 2),
            "users_max_ms": round(max(latencies), 2) if latencies else None,
            "users_reads_p99_ms": round(percentile(reads, 0.99), 2),
            "users_actions_p50_ms": round(percentile(actions, 0.50), 2),
            "users_actions_p99_ms": round(percentile(actions, 0.99), 2),
            "users_nice": nice,
            "server_users_p50_ms": round(percentile(served, 0.50), 2),
            "server_users_p99_ms": round(percentile(served, 0.99), 2),
            "server_users_max_ms": round(max(served), 2) if served else None,
            "server_users_actions_p99_ms": round(percentile(served_actions, 0.99), 2),
            "server_threads_cpu_and_runnable_wait_ms": scheduling,
            "load_average_before_after": [round(load_before[0], 1), round(load_after[0], 1)],
        }
        print(f"  figures {json.dumps(figures['cookieless'])}", flush=True)
    finally:
        server.close()


async def slow_client(port, source, in_body, hold, state):
    """One slow-loris connection: its request a byte a second, for `hold` seconds."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    if in_body:
        # Within an action's body limit (maxActionBodyBytes, 16 KiB): a longer one is refused at once.
        head = ("POST /api/actions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                "Content-Length: 16000\r\n\r\n")
        writer.write(head.encode())
        drip = b" "
    else:
        writer.write(b"GET /api/state HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        drip = b"a"
    state["opened"] += 1
    deadline = time.monotonic() + hold
    try:
        while time.monotonic() < deadline:
            await asyncio.sleep(1)
            writer.write(drip)
            await writer.drain()
        # Still open? A closed connection reads its end at once.
        try:
            data = await asyncio.wait_for(reader.read(1), timeout=0.05)
            if data == b"":
                return "closed early"
        except asyncio.TimeoutError:
            pass
        state["held"] += 1
        # Silent from now on: the server must close it (idle timeout).
        silent = time.monotonic()
        try:
            while await asyncio.wait_for(reader.read(4096), timeout=state["close_wait"]):
                pass
            state["close_seconds"].append(time.monotonic() - silent)
            return "closed by the server"
        except asyncio.TimeoutError:
            return "never closed"
    except (ConnectionError, OSError):
        return "closed early"
    finally:
        writer.close()


def slowloris(binary, figures):
    count, hold, idle = env_int("FLOOD_SLOW", 500), env_int("FLOOD_HOLD", 10), 5
    print(f"slowloris: {count} connections sending a byte a second for {hold} s (idle timeout {idle} s)",
          flush=True)
    server = Server(binary, IDLE_TIMEOUT_SECONDS=idle)
    try:
        user = User(server.port)
        state = {"opened": 0, "held": 0, "close_seconds": [], "close_wait": 3 * idle}
        others = []
        stop = threading.Event()

        def other_traffic():
            while not stop.is_set():
                started = time.perf_counter()
                try:
                    fresh = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
                    fresh.request("GET", "/healthz")
                    healthy = fresh.getresponse()
                    healthy.read()
                    fresh.close()
                    status, page = user.state("/api/state")
                    ok = healthy.status == 200 and status == 200 and page.get("root") == "main"
                except (OSError, http.client.HTTPException):
                    ok = False
                others.append(((time.perf_counter() - started) * 1000, ok))
                time.sleep(0.05)

        async def main():
            sources = [f"127.0.0.{2 + i % 10}" for i in range(count)]
            tasks = [asyncio.create_task(slow_client(server.port, sources[i], i % 2 == 1, hold, state))
                     for i in range(count)]
            while state["opened"] < count and not all(t.done() for t in tasks):
                await asyncio.sleep(0.05)
            traffic = threading.Thread(target=other_traffic)
            traffic.start()
            await asyncio.sleep(hold)
            stop.set()
            traffic.join()
            return await asyncio.gather(*tasks, return_exceptions=True)

        outcomes = asyncio.run(main())
        tally = {}
        for outcome in outcomes:
            key = outcome if isinstance(outcome, str) else type(outcome).__name__
            tally[key] = tally.get(key, 0) + 1
        latencies = [o[0] for o in others]
        check(state["opened"] == count, f"{state['opened']} slow connections opened")
        check(state["held"] == count, f"{state['held']} held open for {hold} s while dripping")
        check(tally.get("closed by the server", 0) == count,
              f"each closed by the server once silent (within {3 * idle} s): {tally}")
        failed = [o for o in others if not o[1]]
        check(len(others) > 0 and not failed, f"other clients: {len(others)} rounds, all answered 200 "
              f"({len(failed)} failed)")
        figures["slowloris"] = {
            "connections": count, "hold_seconds": hold, "outcomes": tally, "others_rounds": len(others),
            "others_p50_ms": round(percentile(latencies, 0.50), 2),
            "others_p99_ms": round(percentile(latencies, 0.99), 2),
            "others_max_ms": round(max(latencies), 2) if latencies else None,
            "closed_after_silence_s": round(max(state["close_seconds"]), 1) if state["close_seconds"] else None,
        }
        print(f"  figures {json.dumps(figures['slowloris'])}", flush=True)
    finally:
        server.close()


async def open_stream(port, source, cookie, record):
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(f"GET /api/events HTTP/1.1\r\nHost: localhost\r\nCookie: {COOKIE}={cookie}\r\n\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
    if not head.startswith(b"HTTP/1.1 200"):
        writer.close()
        return None
    await asyncio.wait_for(reader.readuntil(b"\n\n"), timeout=30)
    return reader, writer


async def listen(reader, record):
    """Reads a stream until it ends; records each state event's version and arrival time."""
    buffer = b""
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            record["ended"] = True
            return
        buffer += chunk
        for match in re.finditer(rb'"version":(\d+)', buffer):
            record["versions"].setdefault(int(match.group(1)), time.perf_counter())
        buffer = buffer[-64:]


def streams(binary, figures):
    count = env_int("FLOOD_STREAMS", 1000)
    print(f"streams: {count} open event streams plus normal traffic", flush=True)
    server = Server(binary, MAX_EVENT_STREAMS=count + 8, MAX_CONNECTIONS=count + 400)
    try:
        # One new session per stream (a cookieless visit), as a thousand browsers would have.
        cookies = []
        visitor = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        for _ in range(count):
            visitor.request("GET", "/api/state")
            response = visitor.getresponse()
            response.read()
            cookies.append(response.getheader("Set-Cookie").split(";", 1)[0].split("=", 1)[1])
        visitor.close()
        users = [User(server.port) for _ in range(4)]
        records = [{"versions": {}, "ended": False} for _ in users]
        crowd = [{"versions": {}, "ended": False} for _ in range(count)]
        actions = []

        def act_loop():
            for round_ in range(25):
                for index, user in enumerate(users):
                    action = "showList" if round_ % 2 == 0 else "pop"
                    started = time.perf_counter()
                    status, state = user.act(action)
                    ended = time.perf_counter()
                    actions.append((index, status, state.get("version") if state else None, started, ended))
                    user.state("/api/state")
                fresh = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
                fresh.request("GET", "/healthz")
                actions.append((None, fresh.getresponse().status, None, 0, 0))
                fresh.close()

        async def main():
            opened = await asyncio.gather(*[
                open_stream(server.port, f"127.0.0.{2 + i % 20}", cookies[i], crowd[i]) for i in range(count)],
                return_exceptions=True)
            good = [o for o in opened if isinstance(o, tuple)]
            mine = [await open_stream(server.port, "127.0.0.1", user.cookie, record)
                    for user, record in zip(users, records)]
            listeners = [asyncio.create_task(listen(o[0], r)) for o, r in zip(good, crowd)]
            listeners += [asyncio.create_task(listen(m[0], r)) for m, r in zip(mine, records) if m]
            await asyncio.to_thread(act_loop)
            await asyncio.sleep(1)
            still_open = sum(1 for r in crowd if not r["ended"])
            for o in good + [m for m in mine if m]:
                o[1].close()
            for task in listeners:
                task.cancel()
            return len(good), sum(1 for m in mine if m), still_open

        opened, mine, still_open = asyncio.run(main())
        check(opened == count, f"{opened} of {count} streams opened")
        check(still_open == count, f"{still_open} of {count} still open after the traffic")
        check(mine == len(users), f"the {len(users)} users' own streams opened")
        failed = [a for a in actions if a[1] != 200]
        check(not failed, f"{len(actions)} actions and requests answered 200 ({len(failed)} failed)")
        delays, missing = [], 0
        for index, status, version, started, ended in actions:
            if index is None or version is None:
                continue
            arrived = records[index]["versions"].get(version)
            if arrived is None:
                missing += 1
            else:
                delays.append((arrived - started) * 1000)
        check(missing == 0, f"every action's state event reached its user's stream ({missing} missing)")
        latencies = [(a[4] - a[3]) * 1000 for a in actions if a[0] is not None]
        figures["streams"] = {
            "streams": count, "opened": opened, "still_open": still_open, "actions": len(latencies),
            "action_p50_ms": round(percentile(latencies, 0.50), 2),
            "action_p99_ms": round(percentile(latencies, 0.99), 2),
            "event_delay_p50_ms": round(percentile(delays, 0.50), 2),
            "event_delay_p99_ms": round(percentile(delays, 0.99), 2),
            "rss_mib": round(server.memory()[0] / 1024, 1),
        }
        print(f"  figures {json.dumps(figures['streams'])}", flush=True)
    finally:
        server.close()


IDLE_ROUNDS = 5  # the users' p99 is compared as the median of this many rounds' figures
IDLE_REQUEST = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"


async def idle_holder(port, source, refreshes, period, silence, tally):
    """One client of the idle flood, on `source`: connects, sends a request and reads its answer.
    A holder (`refreshes` false) then waits for the server to close the connection, and is done. A
    refresher sends its next request on the same connection every `period` seconds, and opens a
    new one `period` seconds after the server closed it (or refused it, or answered with
    `Connection: close`). From `silence` on, nobody sends anything: each waits for the server to
    close its connection (the caller ends the wait)."""

    async def pause(seconds):
        try:
            await asyncio.wait_for(silence.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            pass

    def ended(opened):
        tally["open"] -= 1
        tally["held_seconds"].append(time.monotonic() - opened)
        if silence.is_set():
            tally["closed_after_silence"].append(time.monotonic() - tally["silenced_at"])

    first = True
    while not silence.is_set():
        tally["attempts"] += 1
        try:
            connecting = asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            reader, writer = await asyncio.wait_for(connecting, timeout=30)
        except (OSError, asyncio.TimeoutError):
            tally["connect_failed"] += 1
            writer = None
        if first:
            first = False
            tally["first_attempts_done"] += 1
        if writer is not None and silence.is_set():
            writer.close()
            return
        if writer is None:
            if not refreshes:
                return
            await pause(period)
            continue
        tally["open"] += 1
        tally["open_peak"] = max(tally["open_peak"], tally["open"])
        opened, answered = time.monotonic(), 0
        try:
            while True:
                writer.write(IDLE_REQUEST)
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
                length = re.search(rb"content-length: *(\d+)", head, re.I)
                await asyncio.wait_for(reader.readexactly(int(length.group(1)) if length else 0), timeout=30)
                answered += 1
                status = head[9:12].decode(errors="replace")
                tally["statuses"][status] = tally["statuses"].get(status, 0) + 1
                if b"connection: close" in head.lower():
                    tally["told_to_close"] += 1
                    writer.close()
                    tally["open"] -= 1
                    break
                # Kept alive: waits for the server to close it, or until the next refresh.
                try:
                    if await asyncio.wait_for(reader.read(1), timeout=period if refreshes else None) == b"":
                        tally["closed_while_waiting"] += 1
                        ended(opened)
                        writer.close()
                        break
                    tally["unexpected_bytes"] += 1
                except asyncio.TimeoutError:
                    pass
                if silence.is_set():
                    if await reader.read(1) == b"":
                        ended(opened)
                    writer.close()
                    return
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError):
            # Closed before its answer: refused at once (a connection's first request), or a refresh
            # that crossed the server's closing of the connection.
            tally["refused" if answered == 0 else "lost"] += 1
            tally["open"] -= 1
            writer.close()
        if not refreshes:
            return
        await pause(period)


def idle_clients(port, addresses, per_address, period, close_wait):
    """The idle flood, in a process of its own (`run.py --idle-clients`): `per_address` clients on
    each of `addresses` loopback addresses (127.0.0.2…), half of them holders and half refreshers
    (`idle_holder`). Prints READY once every client's first attempt ended (or after 10 s); at
    SIGTERM falls silent, waits up to `close_wait` seconds for the server to close every connection
    still open, then prints its tally as JSON."""

    async def main():
        tally = {"attempts": 0, "connect_failed": 0, "first_attempts_done": 0, "open": 0, "open_peak": 0,
                 "statuses": {}, "told_to_close": 0, "closed_while_waiting": 0, "refused": 0, "lost": 0,
                 "unexpected_bytes": 0, "held_seconds": [], "closed_after_silence": []}
        silence = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, silence.set)
        count = addresses * per_address
        tasks = [asyncio.create_task(idle_holder(port, f"127.0.0.{2 + i // per_address}", i % 2 == 1, period,
                                                 silence, tally))
                 for i in range(count)]
        ramp = time.monotonic() + 10
        while tally["first_attempts_done"] < count and time.monotonic() < ramp:
            await asyncio.sleep(0.05)
        print(f"READY {tally['first_attempts_done']} {tally['open']}", flush=True)
        await silence.wait()
        tally["silenced_at"] = time.monotonic()
        open_at_silence = tally["open"]
        await asyncio.wait(tasks, timeout=close_wait)
        never_closed = tally["open"]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        held, after = tally.pop("held_seconds"), tally.pop("closed_after_silence")
        del tally["open"], tally["silenced_at"]
        tally.update({"open_at_silence": open_at_silence, "never_closed": never_closed,
                      "closed_after_silence_max_s": round(max(after), 2) if after else None,
                      "held_p50_s": round(percentile(held, 0.50), 2)})
        print("TALLY " + json.dumps(tally), flush=True)

    asyncio.run(main())


def idle(binary, figures):
    hold, addresses, per_address, period = env_int("FLOOD_IDLE_HOLD", 15), 16, 256, 2
    limit, keep_alive = 1024, 5
    close_wait = keep_alive + 2
    print(f"idle: {addresses} addresses x {per_address} connections ({addresses * per_address} against a limit of "
          f"{limit}), half held after one request, half refreshed every {period} s, for {hold} s, after {hold} s "
          "without them", flush=True)
    # The server, the users and the probes stand for a machine of their own, whose figures with
    # and without the flood are compared: all at nice FLOOD_USERS_NICE (-10 as root), above the
    # flood's process and the rest of this shared machine, which would otherwise take the cores of
    # one phase and not the other's. The flood is at the default priority, as wrk in cookieless.
    nice = env_int("FLOOD_USERS_NICE", -10 if os.geteuid() == 0 else 0)
    # The defaults, spelt out: the figures of the issue.
    server = Server(binary, access_log=True, nice=nice or None, MAX_CONNECTIONS=limit,
                    MAX_CONNECTIONS_PER_IP=per_address, IDLE_TIMEOUT_SECONDS=30, KEEP_ALIVE_TIMEOUT_SECONDS=keep_alive)
    flood = None
    try:
        users = [User(server.port, tag=f"{LOGGED}{n}-") for n in range(4)]

        def measure(seconds):
            """The users act and read, and a new client asks for /healthz every 0.5 s (a new
            connection from 127.0.0.100… each time), for `seconds`; returns (the users' results,
            the probes as (ms, status), the server's open connections sampled every second)."""
            stop, results, probes, open_samples = threading.Event(), [], [], []
            for user in users:
                # A new connection each (the last round's may have timed out since), on the main
                # screen (the last round may have stopped on the list).
                if user.connection is not None:
                    user.connection.close()
                    user.connection = None
                if (user.state()[1] or {}).get("stack"):
                    user.act("pop")

            def probe():
                if nice:
                    try:
                        os.setpriority(os.PRIO_PROCESS, 0, nice)
                    except OSError:
                        pass
                deadline, n = time.monotonic() + seconds, 0
                while time.monotonic() < deadline:
                    n += 1
                    started = time.perf_counter()
                    try:
                        fresh = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10,
                                                           source_address=(f"127.0.0.{100 + n % 100}", 0))
                        fresh.request("GET", "/healthz")
                        response = fresh.getresponse()
                        response.read()
                        status = response.status
                        fresh.close()
                    except (OSError, http.client.HTTPException) as error:
                        status = type(error).__name__
                    probes.append(((time.perf_counter() - started) * 1000, status))
                    if n % 2 == 0:
                        try:
                            open_samples.append(server.metric("appshell_http_connections_open"))
                        except (OSError, http.client.HTTPException):
                            pass
                    time.sleep(max(0.0, 0.5 - (time.perf_counter() - started)))

            threads = users_loop(users, stop, results, nice=nice or None)
            prober = threading.Thread(target=probe)
            prober.start()
            prober.join()
            stop.set()
            for thread in threads:
                thread.join()
            return results, probes, open_samples

        def phase():
            """`measure` in IDLE_ROUNDS rounds over `hold` seconds: (each round's users' results, the
            probes, the open connections), and the server's CPU meanwhile."""
            before, connects = server.scheduling(), sum(u.connects for u in users)
            rounds = [measure(hold / IDLE_ROUNDS) for _ in range(IDLE_ROUNDS)]
            after = server.scheduling()
            spent = [round(sum(v[i] - before.get(k, [0, 0])[i] for k, v in after.items())) for i in (0, 1)]
            return ([r[0] for r in rounds], [p for r in rounds for p in r[1]], [o for r in rounds for o in r[2]],
                    spent, sum(u.connects for u in users) - connects)

        def closed():
            return {reason: server.metric(f'appshell_http_idle_connections_closed_total{{reason="{reason}"}}')
                    for reason in ("keep_alive_timeout", "reclaimed")}

        quiet, quiet_probes, _, quiet_cpu, quiet_connects = phase()
        closed_before = closed()
        started = time.monotonic()
        flood = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--idle-clients", str(server.port),
                                  str(addresses), str(per_address), str(period), str(close_wait)],
                                 stdout=subprocess.PIPE, text=True)
        ready = flood.stdout.readline().split()
        ramp = time.monotonic() - started
        check(ready[:2] == ["READY", str(addresses * per_address)],
              f"the idle flood made its {addresses * per_address} first attempts in {ramp:.1f} s ({' '.join(ready)})")
        flooded, flood_probes, flood_open, flood_cpu, flood_connects = phase()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        flood.send_signal(signal.SIGTERM)  # falls silent: the server must close what it holds
        output, _ = flood.communicate(timeout=close_wait + 60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        flood_process_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        line = next((l for l in output.splitlines() if l.startswith("TALLY ")), None)
        check(line is not None, "the idle flood reported")
        tally = json.loads(line[6:]) if line else {}
        closed_after = closed()

        def users_figures(rounds):
            """(requests, p50, p99, max, each round's p99, their median) of the users' requests."""
            latencies = [r[0] for results in rounds for r in results]
            p99s = [percentile([r[0] for r in results], 0.99) for results in rounds]
            return (len(latencies), percentile(latencies, 0.50), percentile(latencies, 0.99),
                    max(latencies, default=float("nan")), p99s, statistics.median(p99s))

        quiet_n, quiet_p50, quiet_p99, quiet_max, quiet_p99s, quiet_median = users_figures(quiet)
        flood_n, flood_p50, flood_p99, flood_max, flood_p99s, flood_median = users_figures(flooded)
        quiet, flooded = [r for results in quiet for r in results], [r for results in flooded for r in results]
        probe_ms = [p[0] for p in flood_probes]
        slow = [(round(p[0]), p[1], n) for n, p in enumerate(flood_probes) if p[1] != 200 or p[0] > 1000]
        check(max(flood_open, default=0) >= limit * 7 // 8,
              f"the flood held the server at its limit: {max(flood_open, default=0)} connections open at most "
              f"(at least {limit * 7 // 8}, seven eighths of {limit}; {tally.get('attempts')} attempts)")
        unanswered = [(round(p[0]), p[1], n) for n, p in enumerate(flood_probes) if p[1] != 200]
        check(len(flood_probes) >= hold and not unanswered,
              f"new clients: {len(flood_probes)} probes, each answered 200 ({len(unanswered)} not"
              f"{': ' + str(unanswered[:3]) if unanswered else ''})")
        bound(not slow,
              f"new clients: {len(flood_probes)} probes, each answered 200 within 1 s (p50 "
              f"{percentile(probe_ms, 0.5):.1f} ms, p99 {percentile(probe_ms, 0.99):.1f} ms, max "
              f"{max(probe_ms, default=float('nan')):.1f} ms; {len(slow)} not{': ' + str(slow[:3]) if slow else ''})")
        failed = [r for r in quiet + flooded if not r[1]]
        check(flood_n > 0 and not failed,
              f"logged-in users: {quiet_n} requests without the flood, {flood_n} with it, all 200 on their "
              f"logged-in session ({len(failed)} failed{': ' + str(failed[:3]) if failed else ''})")
        bound(flood_median <= 2 * quiet_median,
              f"users' p99 with the flood {flood_median:.2f} ms <= 2 x without it {quiet_median:.2f} ms (medians of "
              f"{IDLE_ROUNDS} rounds: {', '.join(f'{v:.1f}' for v in flood_p99s)} against "
              f"{', '.join(f'{v:.1f}' for v in quiet_p99s)}; over each whole phase {flood_p99:.2f} and "
              f"{quiet_p99:.2f})")
        check(tally.get("open_at_silence", 0) > 0 and tally.get("never_closed") == 0,
              f"once the flood fell silent the server closed each of its {tally.get('open_at_silence')} connections "
              f"within {close_wait} s ({tally.get('never_closed')} left, the last after "
              f"{tally.get('closed_after_silence_max_s')} s)")
        for reason in ("keep_alive_timeout", "reclaimed"):
            check((closed_after[reason] or 0) > 0,
                  f"/metrics: {closed_after[reason]} waiting connections closed, reason {reason}")
        server.stop()
        own = server.request_micros()
        served_quiet = [own[r[3]] / 1000 for r in quiet if r[3] in own]
        served_flood = [own[r[3]] / 1000 for r in flooded if r[3] in own]
        figures["idle"] = {
            "addresses": addresses, "connections_per_address": per_address, "max_connections": limit,
            "keep_alive_timeout_seconds": keep_alive, "hold_seconds": hold, "refresh_seconds": period,
            "flood_ramp_seconds": round(ramp, 1), "flood": tally,
            "server_open_connections_p50": percentile(flood_open, 0.5),
            "server_open_connections_max": max(flood_open, default=None),
            "probes": len(flood_probes), "probe_p50_ms": round(percentile(probe_ms, 0.50), 2),
            "probe_p99_ms": round(percentile(probe_ms, 0.99), 2),
            "probe_max_ms": round(max(probe_ms), 2) if probe_ms else None,
            "probe_p99_ms_quiet": round(percentile([p[0] for p in quiet_probes], 0.99), 2),
            "users_requests_quiet": quiet_n, "users_requests_flood": flood_n,
            "users_p50_ms_quiet": round(quiet_p50, 2), "users_p99_ms_quiet": round(quiet_p99, 2),
            "users_max_ms_quiet": round(quiet_max, 2),
            "users_p50_ms_flood": round(flood_p50, 2), "users_p99_ms_flood": round(flood_p99, 2),
            "users_max_ms_flood": round(flood_max, 2),
            "users_round_p99s_ms_quiet": [round(v, 2) for v in quiet_p99s],
            "users_round_p99s_ms_flood": [round(v, 2) for v in flood_p99s],
            "users_p99_median_ms_quiet": round(quiet_median, 2), "users_p99_median_ms_flood": round(flood_median, 2),
            "users_connections_quiet": quiet_connects, "users_connections_flood": flood_connects,
            "users_sent_again": sum(u.retries for u in users), "users_nice": nice,
            "server_users_p99_ms_quiet": round(percentile(served_quiet, 0.99), 2),
            "server_users_p99_ms_flood": round(percentile(served_flood, 0.99), 2),
            "server_cpu_and_runnable_wait_ms_quiet": quiet_cpu, "server_cpu_and_runnable_wait_ms_flood": flood_cpu,
            "flood_process_cpu_s": round(flood_process_cpu, 1),
            "idle_closed_before_flood": closed_before, "idle_closed": closed_after,
            "load_average": round(os.getloadavg()[0], 1),
        }
        print(f"  figures {json.dumps(figures['idle'])}", flush=True)
    finally:
        if flood is not None and flood.poll() is None:
            flood.kill()
            flood.wait()
        server.close()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if sys.argv[1] == "--idle-clients":
        idle_clients(*(int(v) for v in sys.argv[2:7]))
        return 0
    binary = os.path.abspath(sys.argv[1])
    chosen = sys.argv[2:] or ["cookieless", "slowloris", "streams", "idle"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    figures = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cores": os.cpu_count()}
    scenarios = {"cookieless": cookieless, "slowloris": slowloris, "streams": streams, "idle": idle}
    for name in chosen:
        started = time.time()
        try:
            scenarios[name](binary, figures)
        except Exception as error:  # a scenario that could not run is a failure, not a crash
            check(False, f"{name} ran ({type(error).__name__}: {error})")
        print(f"  {name} took {time.time() - started:.1f} s", flush=True)
    os.makedirs(os.path.join(HERE, "out"), exist_ok=True)
    with open(os.path.join(HERE, "out", "latest.json"), "w") as out:
        json.dump(figures, out, indent=2)
    if FAILURES:
        print(f"flood: {len(FAILURES)} failed: " + "; ".join(FAILURES))
        return 1
    print("flood: every assertion held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
