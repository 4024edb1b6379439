#!/usr/bin/env python3
"""Scenario (h) of `make bench`: two instances on Redis behind nginx, against one.

Per round, two topologies one after the other, each fresh: Debian's redis-server (no
persistence), AppShell with `store: "redis"` — one instance, then two — and nginx round-robin in
front (one worker, 32 idle connections kept to the instances: tests/scaleout/topology.py), all pinned to the server's
cores as (a) pins the server, wrk on the others. Through nginx, as run.py measures them:

  (a) GET /api/state of one logged-in session (64 connections);
  (e) POST /api/actions, showList and pop alternating on 64 logged-in sessions.

Two instances are measured twice: round-robin (each request to the next instance), and with a
session's requests routed to one instance by its cookie (`hash $cookie_… consistent`, as the
Deploying article suggests: the instance then holds the session's lease, and its requests need no
round trip to Redis, as one instance's do). Reports req/s and p99 of each, medians of the rounds,
and two instances / one (on two cores the point is the overhead of sharing sessions, not a
speed-up; goal >= 0.8 routed by session; round-robin pays a round trip per request that one
instance does not, shown beside it). `python3 bench/scaleout.py` runs
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

    def __init__(self, bench, count, sticky=False):
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
                keepalive=32, sticky_cookie=run.COOKIE if sticky else None)
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


#: The topologies of a round: instances, and whether a session's requests go to one of them.
VARIANTS = {"1": (1, False), "2": (2, False), "2s": (2, True)}
NAMES = {"1": "one", "2": "two round-robin", "2s": "two by session"}


def measure_one(bench, variant, scenario, round_number):
    """(a) or (e) through nginx in front of the instances of `variant`: wrk's figures."""
    count, sticky = VARIANTS[variant]
    topology = Topology(bench, count, sticky)
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
    result.update({"instances": count, "variant": variant, "scenario": scenario, "round": round_number})
    run.log(f"  round {round_number} (h) {scenario} through nginx, {NAMES[variant]}: {result['rps']:.0f} req/s"
            f"  p99 {result['p99_ms']:.2f} ms  errors {result['status_errors']}/{result['socket_errors']}")
    return result


def measure(bench):
    """Every round: (a) and (e) with one instance, then two round-robin, then two by session.
    Returns the medians and ratios."""
    if shutil.which("redis-server") is None or shutil.which("nginx") is None:
        raise run.BenchError("(h) needs redis-server and nginx (make bench installs them)")
    runs = []
    for round_number in range(1, bench.rounds + 1):
        for scenario in ("a", "e"):
            for variant in VARIANTS:
                runs.append(measure_one(bench, variant, scenario, round_number))
    figures = {"rounds": bench.rounds, "target_ratio": TARGET_RATIO, "runs": runs}
    for scenario in ("a", "e"):
        for variant in VARIANTS:
            mine = [r for r in runs if r["scenario"] == scenario and r["variant"] == variant]
            figures[f"{scenario}{variant}"] = {
                "rps": run.median(r["rps"] for r in mine), "p99_ms": run.median(r["p99_ms"] for r in mine),
                "rps_range": [min(r["rps"] for r in mine), max(r["rps"] for r in mine)],
                "errors": sum(r["status_errors"] + r["socket_errors"] for r in mine)}
        one = figures[f"{scenario}1"]["rps"]
        figures[f"{scenario}_ratio"] = round(figures[f"{scenario}2s"]["rps"] / one, 3)
        figures[f"{scenario}_ratio_round_robin"] = round(figures[f"{scenario}2"]["rps"] / one, 3)
    return figures


def render(h):
    """The (h) lines of the report."""
    lines = [f"(h) through nginx, Redis store, one instance against two (medians of {h['rounds']} round(s)):"]
    for scenario, name in (("a", "(a) GET /api/state, logged in"), ("e", "(e) POST /api/actions")):
        parts = []
        for variant in VARIANTS:
            f = h[f"{scenario}{variant}"]
            parts.append(f"{NAMES[variant]} {f['rps']:.0f} req/s ({f['rps_range'][0]:.0f}-{f['rps_range'][1]:.0f}),"
                         f" p99 {f['p99_ms']:.2f} ms")
        ratio = h[f"{scenario}_ratio"]
        lines.append(
            f"  {name}: " + "; ".join(parts) + f"; by session / one {ratio:.2f}"
            f" (target >= {h['target_ratio']}: {'met' if ratio >= h['target_ratio'] else 'NOT MET'}),"
            f" round-robin / one {h[f'{scenario}_ratio_round_robin']:.2f};"
            f" errors {sum(h[f'{scenario}{v}']['errors'] for v in VARIANTS)}")
    return "\n".join(lines)


if __name__ == "__main__":
    bench = run.Bench()
    try:
        bench.build()
        bench.report_lua = bench.lua("report.lua", run.REPORT_LUA)
        print(render(measure(bench)))
    finally:
        shutil.rmtree(bench.tmp, ignore_errors=True)
