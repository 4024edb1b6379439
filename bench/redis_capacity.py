#!/usr/bin/env python3
"""Scenario (m) of `make bench`: the actions a Redis Cluster serves, one primary against three.

Issue 36, point 3: the Performance article gives, from (l)'s CPU per action, what one Redis core
serves; this checks it against a run. Per round, fresh topologies one after the other,
interleaved (one primary, three, one, three…): a Redis Cluster of PRIMARIES primaries and no
replica (tests/scaleout/topology.py's RedisCluster; one primary owns all 16384 slots), with no
persistence (`CONFIG SET appendonly no` once made: an fsync per write would set the pace, not
the CPU), and one AppShell release instance (THREADS event loops, pinned to the server's core as
run.py pins it) on it (`redis-cluster://…`). SESSIONS sessions (BENCH_REDIS_SESSIONS) are
logged in, as many on each primary (a login whose session lands on a primary already holding its
share is left idle). Then each primary gets the same small CPU share, a cgroup v1 of its own
(/sys/fs/cgroup/cpu: `cpu.cfs_quota_us` over `cpu.cfs_period_us`, QUOTA of a core unless
BENCH_REDIS_QUOTA says, in percent), so that Redis is the bottleneck and AppShell and wrk are
not, and wrk sends (e)'s actions (showList and pop alternating on each session, one keep-alive
connection per session: run.py's warm-up, then 5 seconds or BENCH_DURATION).

Figures per topology: actions a second (wrk's requests answered 2xx); each primary's CPU time
(its threads' time on a core, /proc/<pid>/task/*/schedstat; split into user and system by
/proc/<pid>/stat's ticks) per action, its CPU over its quota (near 1: saturated), the
share of its cgroup's periods it was throttled in, its commands and round trips per action
(INFO stats); AppShell's CPU per action and share of its core, wrk's share of its, and the cores
the machine's other processes used meanwhile (/proc/stat: on a shared machine, a round where they
took AppShell's core shows primaries under their quota). Two predictions of the actions a
second: from this run, QUOTA over the busiest primary's µs per action (all sessions move at one
pace, so the busiest primary bounds them; measured over it is that primary's CPU over its
quota); and from the article, ARTICLE_ACTIONS_PER_CORE times QUOTA times the primaries. Medians of the rounds with their spread (min-max), and the ratio three
primaries over one (ideal 3), also per round.

`python3 bench/redis_capacity.py` runs it alone (BENCH_APPSHELL_BINARY: a release build to
measure, else it builds one; BENCH_ROUNDS, default 3 with BENCH_QUICK=1 else 5; BENCH_DURATION,
default 2 s with BENCH_QUICK=1 else 5 s; BENCH_WARMUP, BENCH_QUICK as run.py reads them;
BENCH_REDIS_QUOTA; BENCH_REDIS_SESSIONS); run.py runs it with BENCH_ONLY=m (not in the
full run: it needs root and cgroup v1's cpu controller). Writes bench/out/redis_capacity.json.
Python 3 standard library, Debian's redis-server and redis-cli.
"""

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if __name__ == "__main__":
    sys.modules.setdefault("redis_capacity", sys.modules[__name__])
import run  # noqa: E402  (the helpers of make bench: servers, logins, wrk, CPU time)
import redis_cost  # noqa: E402  (parse_info, spread)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "scaleout"))
from topology import RedisCluster  # noqa: E402

PRIMARIES = (1, 3)
SESSIONS = 240  # logged in per topology (BENCH_REDIS_SESSIONS): a multiple of 3, so of PRIMARIES
THREADS = 2  # AppShell's event loops, as (l)
DURATION = 5  # seconds per measurement unless BENCH_DURATION says
QUOTA = 0.05  # of a core, per primary (BENCH_REDIS_QUOTA, in percent)
# The cgroups' period: short, so that a throttled primary waits tens of milliseconds, not a
# hundred (the quota is at least 1 ms: the kernel's least)
PERIOD_US = 20_000
# The Performance article's "one Redis core serves about 40 000 actions a second" ((l), 25 µs per
# action): what the run checks.
ARTICLE_ACTIONS_PER_CORE = 40_000
CGROUP_ROOT = "/sys/fs/cgroup/cpu"
SESSION_KEYS = "appshell:{*}"  # a session's record (the store's other keys name what they are)
INFO_FIELDS = ("total_commands_processed", "total_reads_processed")


# --- a primary's CPU share: a cgroup v1 of its own ----------------------------------------------


class CpuShare:
    """A cgroup of the cpu controller holding `share` of a core (its quota over its period)."""

    def __init__(self, name, share):
        self.path = os.path.join(CGROUP_ROOT, name)
        self.period_us = period_us(share)
        os.mkdir(self.path)
        try:
            self._write("cpu.cfs_period_us", self.period_us)
            self._write("cpu.cfs_quota_us", int(share * self.period_us))
        except BaseException:
            self.remove()
            raise

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(f"{value}\n")

    def add(self, pid):
        """Moves the process (every thread of it) into the cgroup."""
        self._write("cgroup.procs", pid)

    def stat(self):
        """cpu.stat: nr_periods, nr_throttled, throttled_time (ns)."""
        with open(os.path.join(self.path, "cpu.stat")) as f:
            return {key: int(value) for key, value in (line.split() for line in f if line.strip())}

    def remove(self):
        """Moves any process left back to the root, then removes the cgroup."""
        try:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                pids = [line.strip() for line in f if line.strip()]
            for pid in pids:
                with open(os.path.join(CGROUP_ROOT, "cgroup.procs"), "w") as root:
                    root.write(pid + "\n")
            os.rmdir(self.path)
        except OSError:
            pass  # gone already, or a process still leaving: the cgroup stays, empty, harmless


def period_us(share):
    """PERIOD_US, or longer when `share` of it would be under 1 ms."""
    return max(PERIOD_US, int(1000 / share))


def sessions():
    """SESSIONS, or BENCH_REDIS_SESSIONS (a multiple of 3)."""
    count = int(run.env_number("BENCH_REDIS_SESSIONS", SESSIONS, int))
    if count % 3:
        raise run.BenchError(f"BENCH_REDIS_SESSIONS must be a multiple of 3, got {count}")
    return count


def cpu_ns(pid):
    """The CPU time of every thread of a process so far, in nanoseconds (/proc/<pid>/task/*/schedstat:
    exact, where /proc/<pid>/stat counts 10 ms ticks — a few dozen of them in a primary's run)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def machine_busy():
    """The machine's CPU time not idle so far, in seconds (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [int(value) for value in f.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def quota():
    """QUOTA, or BENCH_REDIS_QUOTA (percent of a core)."""
    return run.env_number("BENCH_REDIS_QUOTA", QUOTA * 100, float) / 100


# --- one topology: the cluster, AppShell, the sessions -------------------------------------------


class Cluster(RedisCluster):
    """tests/scaleout's RedisCluster with no replica; one primary owns every slot itself
    (`redis-cli --cluster create` wants three); no persistence once made."""

    def __init__(self, folder, primaries):
        # a throttled primary answers the cluster bus late: a long timeout keeps it out of FAIL
        super().__init__(folder, primaries=primaries, replicas=0, node_timeout_ms=15_000)

    def start(self):
        if self.count >= 3:
            super().start()
        else:
            for port in self.ports:
                self.start_node(port)
            answer = self.cli("-p", str(self.ports[0]), "cluster", "addslotsrange", "0", "16383")
            if "OK" not in answer:
                raise run.BenchError(f"CLUSTER ADDSLOTSRANGE: {answer}")
            self.wait_until_healthy()
        for port in self.ports:
            self.cli("-p", str(port), "config", "set", "appendonly", "no")
        return self

    def session_keys(self, port):
        return {line for line in self.cli("-p", str(port), "--scan", "--pattern", SESSION_KEYS).splitlines() if line}

    def info(self, port):
        return redis_cost.parse_info(self.cli("-p", str(port), "info", "stats"))


class Topology:
    """A cluster of `primaries`, one AppShell on it, SESSIONS sessions logged in as many on each
    primary, and each primary in a CpuShare of `share`."""

    def __init__(self, bench, primaries, share):
        self.bench, self.primaries, self.sessions = bench, primaries, sessions()
        self.folder = tempfile.mkdtemp(prefix="redis-capacity-", dir=bench.tmp)
        self.cluster = Cluster(self.folder, primaries)
        self.shares = []
        self.server = None
        try:
            self.cluster.start()
            self.server = bench.appshell_server("redis", f"AppShell on {primaries} primaries", {
                "APPSHELL_THREADS": str(THREADS), "APPSHELL_STORE_URL": self.cluster.url}).start().wait_ready()
            self.cookies, self.logins = self.log_in()
            for port in self.cluster.ports:
                share_group = CpuShare(f"appshell-bench-{os.getpid()}-{port}", share)
                self.shares.append(share_group)
                share_group.add(self.cluster.processes[port].pid)
        except BaseException:
            self.stop()
            raise

    def log_in(self):
        """`sessions` cookies, as many on each primary (where the login's new record is written);
        returns them and the logins it took."""
        wanted = self.sessions // self.primaries
        keys = {port: self.cluster.session_keys(port) for port in self.cluster.ports}
        chosen = {port: [] for port in self.cluster.ports}
        logins = 0
        while sum(len(c) for c in chosen.values()) < self.sessions:
            if logins > 4 * self.sessions:
                raise run.BenchError(f"{logins} logins did not spread {self.sessions} sessions over the primaries")
            cookie = self.bench.login(self.server.port)
            logins += 1
            landed = []
            for port in self.cluster.ports:
                now = self.cluster.session_keys(port)
                if now - keys[port]:
                    landed.append(port)
                keys[port] = now
            if len(landed) == 1 and len(chosen[landed[0]]) < wanted:
                chosen[landed[0]].append(cookie)
        # interleaved, so that wrk's round of the sessions goes from primary to primary
        cookies = [c for group in zip(*chosen.values()) for c in group]
        return cookies, logins

    def stop(self):
        if self.server:
            self.server.stop()
        self.cluster.stop()
        for share_group in self.shares:
            share_group.remove()
        shutil.rmtree(self.folder, ignore_errors=True)


# --- a measurement -------------------------------------------------------------------------------


def measure_topology(bench, primaries, share, round_number):
    """Fresh topology of `primaries`, warmed up, then wrk's actions measured."""
    topology = Topology(bench, primaries, share)
    try:
        port = topology.server.port
        script = bench.lua("redis-capacity-actions.lua", run.ACTIONS_LUA % {
            "cookies": ", ".join(json.dumps(c) for c in topology.cookies), "cookie_name": run.COOKIE,
            "threads": bench.machine.wrk_threads} + run.REPORT_LUA)
        bench.wrk(port, "/api/actions", bench.warmup, [], script, connections=topology.sessions)
        nodes = [(p, topology.cluster.processes[p].pid, s) for p, s in zip(topology.cluster.ports, topology.shares)]
        before = [(cpu_ns(pid), run.proc_cpu_split(pid), s.stat(), topology.cluster.info(p)) for p, pid, s in nodes]
        appshell_before, busy_before = run.proc_cpu_seconds(topology.server.pid), machine_busy()
        result = bench.wrk(port, "/api/actions", duration(bench), [], script, connections=topology.sessions)
        appshell_after, busy_after = run.proc_cpu_seconds(topology.server.pid), machine_busy()
        after = [(cpu_ns(pid), run.proc_cpu_split(pid), s.stat(), topology.cluster.info(p)) for p, pid, s in nodes]
    finally:
        topology.stop()
    seconds = result["seconds"]
    actions = result["requests"] - result["status_errors"]
    figures = {"primaries": primaries, "round": round_number, "logins": topology.logins, "quota": share,
               "actions_per_s": round(actions / seconds, 1), "status_errors": result["status_errors"],
               "socket_errors": result["socket_errors"], "p99_ms": result["p99_ms"],
               "wrk_cpu_share": result.get("wrk_cpu_share"),
               "appshell_us": run.cpu_per_request(appshell_before, appshell_after, actions),
               "appshell_share": round((appshell_after - appshell_before) / seconds, 3), "nodes": []}
    for (ns0, cpu0, stat0, info0), (ns1, cpu1, stat1, info1) in zip(before, after):
        cpu = (ns1 - ns0) / 1e9
        periods = stat1["nr_periods"] - stat0["nr_periods"]
        figures["nodes"].append({
            "us_per_action": round(cpu * 1e6 / actions, 2),
            # user and system from /proc/<pid>/stat's ticks: approximate
            "user_us": round((cpu1[0] - cpu0[0]) * 1e6 / actions, 2),
            "system_us": round((cpu1[1] - cpu0[1]) * 1e6 / actions, 2),
            "over_quota": round(cpu / seconds / share, 3),
            "throttled": round((stat1["nr_throttled"] - stat0["nr_throttled"]) / periods, 3) if periods else None,
            # this script's own INFO (one command, one read) taken out
            "commands_per_action": round((info1["total_commands_processed"] - info0["total_commands_processed"] - 1)
                                         / actions, 3),
            "round_trips_per_action": round((info1["total_reads_processed"] - info0["total_reads_processed"] - 1)
                                            / actions, 3)})
    # the cores everything else on the machine used meanwhile (other builds: a shared machine)
    ours = (figures["appshell_share"] + sum(node["over_quota"] * share for node in figures["nodes"])
            + (figures["wrk_cpu_share"] or 0) * len(bench.machine.load_cpus))
    figures["other_cores"] = round((busy_after - busy_before) / seconds - ours, 2)
    busiest = max(node["us_per_action"] for node in figures["nodes"])
    figures["predicted_run"] = round(share * 1e6 / busiest, 1)
    figures["predicted_article"] = round(ARTICLE_ACTIONS_PER_CORE * share * primaries, 1)
    run.log(f"  round {round_number} (m) {primaries} primar{'y' if primaries == 1 else 'ies'}:"
            f" {figures['actions_per_s']:7.0f} actions/s (predicted {figures['predicted_run']:.0f} from this run's"
            f" {busiest:.1f} us, {figures['predicted_article']:.0f} from the article); Redis over quota "
            + ", ".join(f"{n['over_quota']:.2f}" for n in figures["nodes"])
            + ", us/action " + ", ".join(f"{n['us_per_action']:.1f}" for n in figures["nodes"])
            + f"; AppShell {figures['appshell_us']:.1f} us, {figures['appshell_share']:.2f} of a core;"
            f" wrk {figures['wrk_cpu_share']}; others {figures['other_cores']:.2f} cores;"
            f" non-2xx {result['status_errors']}, socket errors {result['socket_errors']}")
    return figures


def rounds(bench):
    """BENCH_ROUNDS, else 3 with BENCH_QUICK (medians need more than one round), else run.py's."""
    if os.environ.get("BENCH_ROUNDS", "").strip():
        return bench.rounds
    return 3 if bench.quick else bench.rounds


def duration(bench):
    """BENCH_DURATION, else at most DURATION seconds (hundreds of the cgroups' periods)."""
    if os.environ.get("BENCH_DURATION", "").strip():
        return bench.duration
    return min(bench.duration, DURATION)


def summarise(runs, primaries):
    """Medians (min-max) of one topology over the rounds."""
    mine = [r for r in runs if r["primaries"] == primaries]
    nodes = [n for r in mine for n in r["nodes"]]
    return {
        "actions_per_s": redis_cost.spread([r["actions_per_s"] for r in mine]),
        "predicted_run": redis_cost.spread([r["predicted_run"] for r in mine]),
        "predicted_article": mine[0]["predicted_article"],
        # per primary and round, all primaries together
        "redis_us_per_action": redis_cost.spread([n["us_per_action"] for n in nodes]),
        "redis_us_all_primaries": redis_cost.spread([round(sum(n["us_per_action"] for n in r["nodes"]), 2)
                                                      for r in mine]),
        "redis_user_us": run.median(n["user_us"] for n in nodes),
        "redis_system_us": run.median(n["system_us"] for n in nodes),
        "over_quota": redis_cost.spread([n["over_quota"] for n in nodes]),
        "throttled": redis_cost.spread([n["throttled"] for n in nodes]),
        "commands_per_action": run.median(sum(n["commands_per_action"] for n in r["nodes"]) for r in mine),
        "round_trips_per_action": run.median(sum(n["round_trips_per_action"] for n in r["nodes"]) for r in mine),
        "appshell_us": redis_cost.spread([r["appshell_us"] for r in mine]),
        "appshell_share": redis_cost.spread([r["appshell_share"] for r in mine]),
        "wrk_cpu_share": redis_cost.spread([r["wrk_cpu_share"] for r in mine]),
        "other_cores": redis_cost.spread([r["other_cores"] for r in mine]),
        "p99_ms": run.median(r["p99_ms"] for r in mine),
        "errors": sum(r["status_errors"] + r["socket_errors"] for r in mine),
    }


def measure(bench):
    """The rounds, interleaved by primaries; the medians and the ratio three over one."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        raise run.BenchError("(m) needs redis-server and redis-cli (make bench installs them)")
    if not os.access(os.path.join(CGROUP_ROOT, "cgroup.procs"), os.W_OK):
        raise run.BenchError(f"(m) needs cgroup v1's cpu controller at {CGROUP_ROOT}, writable (root)")
    count, share = rounds(bench), quota()
    runs = []
    for round_number in range(1, count + 1):
        for primaries in PRIMARIES:
            runs.append(measure_topology(bench, primaries, share, round_number))
    table = {primaries: summarise(runs, primaries) for primaries in PRIMARIES}
    one, three = PRIMARIES[0], PRIMARIES[-1]
    per_round = [round(b["actions_per_s"] / a["actions_per_s"], 2) for a, b in zip(
        [r for r in runs if r["primaries"] == one], [r for r in runs if r["primaries"] == three])]
    ratio = {"of_medians": round(table[three]["actions_per_s"]["median"] / table[one]["actions_per_s"]["median"], 2),
             "per_round": redis_cost.spread(per_round), "ideal": three / one}
    return {"rounds": count, "duration_s": duration(bench), "warmup_s": bench.warmup, "sessions": sessions(),
            "threads": THREADS, "quota": share, "period_us": period_us(share), "table": table, "ratio": ratio,
            "runs": runs}


def render(m):
    """The (m) lines of the report."""
    def fig(f, digits=0):
        return redis_cost.shown(f, digits)

    lines = [f"(m) actions/s on a Redis Cluster, each primary held to {m['quota'] * 100:.0f} % of a core"
             f" (period {m['period_us'] // 1000} ms), {m['sessions']} sessions as many on each primary, AppShell"
             f" {m['threads']} threads; medians of {m['rounds']} round(s) (min-max):"]
    for primaries, f in m["table"].items():
        lines.append(
            f"  {primaries} primar{'y' if primaries == 1 else 'ies'}: {fig(f['actions_per_s'])} actions/s;"
            f" predicted {fig(f['predicted_run'])} (quota / busiest primary's us per action),"
            f" {f['predicted_article']:.0f} (the article's {ARTICLE_ACTIONS_PER_CORE} per core)")
        lines.append(
            f"    Redis per primary: {fig(f['redis_us_per_action'], 1)} us/action"
            f" ({f['redis_user_us']:.1f} user + {f['redis_system_us']:.1f} system), all primaries"
            f" {fig(f['redis_us_all_primaries'], 1)} us; CPU over quota {fig(f['over_quota'], 2)},"
            f" throttled in {fig(f['throttled'], 2)} of periods; {f['commands_per_action']:.2f} commands,"
            f" {f['round_trips_per_action']:.2f} round trips per action")
        lines.append(
            f"    AppShell {fig(f['appshell_us'], 1)} us/action, {fig(f['appshell_share'], 2)} of its core;"
            f" wrk {fig(f['wrk_cpu_share'], 2)} of its core; the machine's other processes"
            f" {fig(f['other_cores'], 2)} cores; p99 {f['p99_ms']:.1f} ms;"
            f" non-2xx answers and socket errors {f['errors']} in all")
    r = m["ratio"]
    lines.append(f"  three primaries / one: {r['of_medians']:.2f} (medians), per round {fig(r['per_round'], 2)};"
                 f" ideal {r['ideal']:.0f}")
    return "\n".join(lines)


def main():
    return run.run_scenario_alone("redis_capacity.json", measure, render)


if __name__ == "__main__":
    sys.exit(main())
