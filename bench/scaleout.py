#!/usr/bin/env python3
"""Scenario (h) of `make bench`: two instances on Redis behind nginx, against one.

Per round, two topologies one after the other, each fresh: Debian's redis-server (no
persistence), AppShell with `store: "redis"` — one instance, then two — and nginx round-robin in
front (one worker, 32 idle connections kept to the instances: tests/scaleout/topology.py), all pinned to the server's
cores as (a) pins the server, wrk on the others. Through nginx, as run.py measures them:

  (a) GET /api/state of one logged-in session (64 connections);
  (e) POST /api/actions, showList and pop alternating on 64 logged-in sessions.

Reports req/s and p99 of each, medians of the rounds, and two instances / one (on two cores the
point is the overhead of sharing sessions — a Redis round trip per request to check the session's
version, the relay of its events — not a speed-up; goal >= 0.8). `python3 bench/scaleout.py` runs
it alone (BENCH_APPSHELL_BINARY, BENCH_ROUNDS, BENCH_DURATION, BENCH_QUICK as run.py reads them);
run.py runs it after (g), and alone with BENCH_ONLY=h. Python 3 standard library, Debian's
redis-server and nginx.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "scaleout"))
from topology import free_port, start_nginx, wait_for_port  # noqa: E402

#: Two instances / one, the goal of issue 17 for (a) and (e).
TARGET_RATIO = 0.8


class Topology:
    """Redis, `count` AppShell instances and nginx, pinned to the server's cores."""

    def __init__(self, bench, count):
        self.bench = bench
        self.folder = tempfile.mkdtemp(prefix="scaleout-", dir=bench.tmp)
        self.redis = None
        self.instances = []
        self.nginx = None
        try:
            redis_port = free_port()
            self.redis = subprocess.Popen(
                bench.machine.server_prefix()
                + ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                   "no", "--dir", self.folder, "--logfile", os.path.join(self.folder, "redis.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_port(redis_port, self.redis)
            for number in range(count):
                server = bench.appshell_server("redis", f"AppShell (redis) {number + 1} of {count}", {
                    "APPSHELL_STORE_URL": f"redis://127.0.0.1:{redis_port}/0"})
                self.instances.append(server.start().wait_ready())
            self.nginx, self.port = start_nginx(
                self.folder, [server.port for server in self.instances], prefix=bench.machine.server_prefix(),
                keepalive=32)
        except BaseException:
            self.stop()
            raise

    def stop(self):
        if self.nginx and self.nginx.poll() is None:
            self.nginx.kill()
            self.nginx.wait()
        for server in self.instances:
            server.stop()
        if self.redis and self.redis.poll() is None:
            self.redis.kill()
            self.redis.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def measure_one(bench, count, scenario, round_number):
    """(a) or (e) through nginx in front of `count` instances: wrk's figures."""
    topology = Topology(bench, count)
    try:
        port = topology.port
        if scenario == "a":
            cookie = bench.login(port)
            headers, path, script = [f"Cookie: {run.COOKIE}={cookie}"], "/api/state", None
        else:
            cookies = [bench.login(port) for _ in range(run.ACTION_SESSIONS)]
            headers, path = [], "/api/actions"
            script = bench.lua("actions.lua", run.ACTIONS_LUA % {
                "cookies": ", ".join(json.dumps(c) for c in cookies),
                "cookie_name": run.COOKIE, "threads": bench.machine.wrk_threads} + run.REPORT_LUA)
        bench.wrk(port, path, bench.warmup, headers, script)
        result = bench.wrk(port, path, bench.duration, headers, script)
    finally:
        topology.stop()
    result.update({"instances": count, "scenario": scenario, "round": round_number})
    run.log(f"  round {round_number} (h) {scenario} through nginx, {count} instance(s): {result['rps']:.0f} req/s"
            f"  p99 {result['p99_ms']:.2f} ms  errors {result['status_errors']}/{result['socket_errors']}")
    return result


def measure(bench):
    """Every round: (a) and (e) with one instance, then with two. Returns the medians and ratios."""
    if shutil.which("redis-server") is None or shutil.which("nginx") is None:
        raise run.BenchError("(h) needs redis-server and nginx (make bench installs them)")
    runs = []
    for round_number in range(1, bench.rounds + 1):
        for scenario in ("a", "e"):
            for count in (1, 2):
                runs.append(measure_one(bench, count, scenario, round_number))
    figures = {"rounds": bench.rounds, "target_ratio": TARGET_RATIO, "runs": runs}
    for scenario in ("a", "e"):
        for count in (1, 2):
            mine = [r for r in runs if r["scenario"] == scenario and r["instances"] == count]
            figures[f"{scenario}{count}"] = {
                "rps": run.median(r["rps"] for r in mine), "p99_ms": run.median(r["p99_ms"] for r in mine),
                "rps_range": [min(r["rps"] for r in mine), max(r["rps"] for r in mine)],
                "errors": sum(r["status_errors"] + r["socket_errors"] for r in mine)}
        figures[f"{scenario}_ratio"] = round(figures[f"{scenario}2"]["rps"] / figures[f"{scenario}1"]["rps"], 3)
    return figures


def render(h):
    """The (h) lines of the report."""
    lines = [f"(h) through nginx, Redis store, one instance against two (medians of {h['rounds']} round(s)):"]
    for scenario, name in (("a", "(a) GET /api/state, logged in"), ("e", "(e) POST /api/actions")):
        one, two, ratio = h[f"{scenario}1"], h[f"{scenario}2"], h[f"{scenario}_ratio"]
        lines.append(
            f"  {name}: one {one['rps']:.0f} req/s ({one['rps_range'][0]:.0f}-{one['rps_range'][1]:.0f}),"
            f" p99 {one['p99_ms']:.2f} ms; two {two['rps']:.0f} req/s ({two['rps_range'][0]:.0f}-"
            f"{two['rps_range'][1]:.0f}), p99 {two['p99_ms']:.2f} ms; two / one {ratio:.2f}"
            f" (target >= {h['target_ratio']}: {'met' if ratio >= h['target_ratio'] else 'NOT MET'});"
            f" errors {one['errors']}/{two['errors']}")
    return "\n".join(lines)


if __name__ == "__main__":
    bench = run.Bench()
    try:
        bench.build()
        bench.report_lua = bench.lua("report.lua", run.REPORT_LUA)
        print(render(measure(bench)))
    finally:
        shutil.rmtree(bench.tmp, ignore_errors=True)
