#!/usr/bin/env python3
"""Whether a piece of machinery earns its place: variants of the server measured side by side, on
a realistic deployment (every core, nothing pinned: the server, wrk and the login clients share
the machine's cores as they would a container's), round after round in turns (A B A B …), with
the medians and the spread of the rounds.

  python3 bench/machinery.py logins VARIANT...
      (a) reads of one logged-in session, then (e) actions on 64 sessions, on one server while
      4 clients log in with the right password on fresh sessions one after another (scenario f);
      per variant: the reads' and the actions' requests/s, p50 and p99, the logins per second
      and a login's median time. Each round starts with (a) and (e) without logins on the first
      variant (the baseline).
  python3 bench/machinery.py actions VARIANT...
      (e) with the SQLite store (where the allocator's cache mattered): requests/s, p50, p99 and
      the server's CPU time per action.

A VARIANT is LABEL=BINARY[,NAME=VALUE…]: an appshell binary (a release build) and variables set
for the server only (APPSHELL_* settings, GLIBC_TUNABLES). BENCH_DURATION, BENCH_WARMUP and
BENCH_ROUNDS as for bench/run.py. Prints one line per measurement and the summary, and writes
the runs as JSON to bench/out/machinery-<command>.json. The load average before and after is
printed: the machine's other work is part of what was measured.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (bench/run.py: the servers, wrk, the logins)


class UnpinnedMachine(run.Machine):
    """Every core for everyone: the server, wrk and the clients, as the kernel places them."""

    def __init__(self):
        super().__init__()
        self.server_cpus = self.load_cpus = self.cpus
        self.pinned = False
        self.wrk_threads = len(self.cpus)
        self.note = f"not pinned: server, wrk and clients share {len(self.cpus)} cores"


class MachineryBench(run.Bench):
    """run.Bench with the variant's binary and variables on every AppShell it starts."""

    def __init__(self):
        super().__init__()
        self.machine = UnpinnedMachine()
        self.server_env = {}

    def appshell_server(self, store, label, extra=None, tls=False):
        return super().appshell_server(store, label, {**self.server_env, **(extra or {})}, tls)


def parse_variant(text):
    label, _, rest = text.partition("=")
    binary, *pairs = rest.split(",")
    if not label or not os.access(binary, os.X_OK):
        raise run.BenchError(f"{text!r} is not LABEL=BINARY[,NAME=VALUE…] with an executable binary")
    return label, binary, dict(pair.split("=", 1) for pair in pairs)


def use(bench, variant):
    _, bench.appshell, bench.server_env = variant


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def reads_and_actions_beside_logins(bench, round_number, label):
    """(a), then (e), on one server while LOGIN_CLIENTS clients log in."""
    server = bench.appshell_server("memory", f"AppShell ({label}, logins)").start().wait_ready()
    load = None
    figures = {"variant": label, "round": round_number, "load_before": load_average()}
    try:
        port = server.port
        cookie = bench.login(port)
        cookies = [bench.login(port) for _ in range(run.ACTION_SESSIONS)]
        script = bench.lua("actions-machinery.lua", run.ACTIONS_LUA % {
            "cookies": ", ".join(json.dumps(c) for c in cookies),
            "cookie_name": run.COOKIE, "threads": bench.machine.wrk_threads} + run.REPORT_LUA)
        load = run.LoginLoad(bench, port, run.LOGIN_CLIENTS).start()
        for kind, path, headers, lua in (("reads", "/api/state", [f"Cookie: {run.COOKIE}={cookie}"], None),
                                         ("actions", "/api/actions", [], script)):
            bench.wrk(port, path, bench.warmup, headers, lua)
            before = load.snapshot()
            result = bench.wrk(port, path, bench.duration, headers, lua)
            after = load.snapshot()
            logins = after["logins"] - before["logins"]
            latencies = sorted(after["latencies_ms"][len(before["latencies_ms"]):])
            figures[kind] = {
                "rps": result["rps"], "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
                "errors": result["status_errors"] + result["socket_errors"],
                "logins_per_s": round(logins / result["seconds"], 2),
                "login_p50_ms": round(latencies[len(latencies) // 2], 1) if latencies else None,
                "login_failures": after["failures"] - before["failures"],
            }
    finally:
        if load is not None:
            load.stop()
        server.stop()
    figures["load_after"] = load_average()
    say(figures)
    return figures


def alone(bench, round_number, label):
    """(a) and (e) without logins: the baseline the figures beside logins compare with."""
    figures = {"variant": label, "round": round_number, "load_before": load_average()}
    for kind, scenario in (("reads", "a"), ("actions", "e")):
        result = bench.run_appshell(scenario, "memory", round_number)
        figures[kind] = {"rps": result["rps"], "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
                         "errors": result["status_errors"] + result["socket_errors"]}
    figures["load_after"] = load_average()
    say(figures)
    return figures


def say(figures):
    parts = []
    for kind in ("reads", "actions"):
        f = figures[kind]
        text = f"{kind} {f['rps']:.0f}/s p50 {f['p50_ms']:.2f} p99 {f['p99_ms']:.2f} ms"
        if "logins_per_s" in f:
            text += f" logins {f['logins_per_s']}/s ({f['login_p50_ms']} ms)"
        parts.append(text)
    run.log(f"  round {figures['round']} {figures['variant']:<16} " + "; ".join(parts)
            + f"  [load {figures['load_before']} -> {figures['load_after']}]")


def actions_sqlite(bench, round_number, label):
    result = bench.run_appshell("e", "sqlite", round_number)
    return {"variant": label, "round": round_number, "rps": result["rps"], "p50_ms": result["p50_ms"],
            "p99_ms": result["p99_ms"], "cpu_us_per_request": result["cpu_us_per_request"],
            "load": load_average()}


def spread(values):
    values = [v for v in values if v is not None]
    return f"{run.median(values):.2f} ({min(values):.2f}-{max(values):.2f})" if values else "-"


def summarize(command, runs, variants):
    lines = []
    for label, _, env in variants:
        mine = [r for r in runs if r["variant"] == label and not r.get("baseline")]
        if command == "logins":
            for kind in ("reads", "actions"):
                rows = [r[kind] for r in mine]
                lines.append(f"{label:<16} {kind:<8} req/s {spread([r['rps'] for r in rows])}"
                             f"  p50 {spread([r['p50_ms'] for r in rows])} ms  p99 {spread([r['p99_ms'] for r in rows])} ms"
                             f"  logins/s {spread([r['logins_per_s'] for r in rows])}"
                             f"  login p50 {spread([r['login_p50_ms'] for r in rows])} ms")
        else:
            lines.append(f"{label:<16} (e) sqlite req/s {spread([r['rps'] for r in mine])}"
                         f"  p50 {spread([r['p50_ms'] for r in mine])} ms  p99 {spread([r['p99_ms'] for r in mine])} ms"
                         f"  CPU {spread([r['cpu_us_per_request'] for r in mine])} us/action")
    if command == "logins":
        base = [r for r in runs if r.get("baseline")]
        for kind in ("reads", "actions"):
            rows = [r[kind] for r in base]
            lines.append(f"{'no logins':<16} {kind:<8} req/s {spread([r['rps'] for r in rows])}"
                         f"  p50 {spread([r['p50_ms'] for r in rows])} ms  p99 {spread([r['p99_ms'] for r in rows])} ms")
    return "\n".join(lines)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("logins", "actions"):
        print(__doc__, file=sys.stderr)
        return 2
    command = sys.argv[1]
    bench = None
    try:
        variants = [parse_variant(text) for text in sys.argv[2:]]
        bench = MachineryBench()
        os.makedirs(run.LOGS, exist_ok=True)
        bench.report_lua = bench.lua("report.lua", run.REPORT_LUA)
        run.log(f"{bench.rounds} round(s) of {bench.warmup} s warm-up + {bench.duration} s;"
                f" {bench.machine.note}; load average {load_average()}")
        runs = []
        for round_number in range(1, bench.rounds + 1):
            run.log(f"round {round_number} of {bench.rounds}")
            if command == "logins":
                use(bench, variants[0])
                runs.append({**alone(bench, round_number, "no logins"), "baseline": True})
            # the variants' order turns each round, so none always follows the baseline
            shift = (round_number - 1) % len(variants)
            for variant in variants[shift:] + variants[:shift]:
                use(bench, variant)
                if command == "logins":
                    runs.append(reads_and_actions_beside_logins(bench, round_number, variant[0]))
                else:
                    runs.append(actions_sqlite(bench, round_number, variant[0]))
        text = summarize(command, runs, variants)
        print(text)
        with open(os.path.join(run.OUT, f"machinery-{command}.json"), "w") as f:
            json.dump({"machine": bench.machine.describe(), "variants": [[v[0], v[1], v[2]] for v in variants],
                       "runs": runs, "summary": text}, f, indent=2)
        return 0
    except KeyboardInterrupt:
        return 130
    except run.BenchError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        for server in list(run.RUNNING):
            server.stop()
        if bench is not None:
            run.shutil.rmtree(bench.tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
