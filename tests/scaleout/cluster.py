#!/usr/bin/env python3
"""Two `appshell` instances behind nginx on a Redis Cluster of three primaries and a replica each
(tests/scaleout/topology.py's RedisCluster), on loopback only: `run_cluster(binary)`, which the
lead can add to `make test-scaleout` (or run alone: cluster.py APPSHELL_BINARY).

  flow      run.py's JSON flow through nginx, every request on the other instance, the store on
            the cluster (a login writes the session's slot and the user's).
  primary   the primary holding a logged-in session is killed (SIGKILL) mid-flow, once its
            replica has every write: meanwhile the session's actions answer 503 saying the store
            is unavailable, then the replica takes over and the next action runs on the session
            as last answered (nothing acknowledged lost); a logout goes through.

  events    run.py's: a page's stream held by one instance hears the actions made through the
            other, its session's channel sharded (SSUBSCRIBE at its slot's primary).
  everywhere  run.py's: log out everywhere through one instance ends the user's session and the
            stream the other holds (the users' channel, sharded too).
"""

import os
import sys
import time

import run
from run import Topology, check, logged_in, scenario_events, scenario_everywhere, scenario_flow
from topology import RedisCluster


class ClusterTopology(Topology):
    """run.py's topology with a Redis Cluster in place of the one Redis server."""

    def __init__(self, binary):
        super().__init__(binary)
        self.cluster = RedisCluster(self.folder)

    def store_url(self):
        return self.cluster.url

    def start_redis(self):
        self.cluster.start()

    def stop(self):
        self.cluster.stop()
        super().stop()

    def session_keys(self):
        """The sessions' keys in the cluster now, from every running primary."""
        keys = set()
        for port, process in self.cluster.processes.items():
            if process.poll() is None and "role:master" in RedisCluster.cli("-p", str(port), "info", "replication"):
                found = RedisCluster.cli("-p", str(port), "--scan", "--pattern", "appshell:{*}")
                keys.update(line for line in found.splitlines() if line)
        return keys

    def wait_for_replica(self, port, seconds=5):
        """Returns once the primary at `port` says its replica has all it wrote."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            info = RedisCluster.cli("-p", str(port), "info", "replication")
            fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
            offset = fields.get("master_repl_offset")
            if offset and f"offset={offset.strip()}," in fields.get("slave0", ""):
                return True
            time.sleep(0.02)
        return False


def scenario_primary(topology):
    print("primary: the primary holding a session killed mid-flow", flush=True)
    before = topology.session_keys()
    client, answer = logged_in(topology)
    status, answer, _ = client.act("showList")
    check(status == 200 and answer["stack"] == ["main", "list"], f"the list is open ({status})")
    acknowledged = answer
    new = topology.session_keys() - before
    check(len(new) == 1, f"the logged-in session is one new key ({len(new)})")
    if len(new) != 1:
        return
    key = new.pop()
    victim = topology.cluster.primary_port(topology.cluster.slot(key))
    check(topology.wait_for_replica(victim), "its primary's replica has every write")
    topology.cluster.kill(victim)
    # An action (a write: reads may be served from the instance's copy) until one is answered.
    statuses = []
    deadline = time.time() + 30
    while time.time() < deadline:
        status, answer, _ = client.act("pop")
        statuses.append(status)
        if status == 200:
            break
        check(status == 503 and answer and "unavailable" in answer.get("error", ""),
              f"an action while the primary is away: {status} {answer}")
        time.sleep(0.1)
    check(statuses[-1] == 200 and statuses.count(503) > 0,
          f"the replica took over ({statuses.count(503)} action(s) answered 503 meanwhile)")
    check(answer and answer.get("stack") == ["main"] and answer.get("version") == acknowledged["version"] + 1,
          f"the action ran on the session as last answered (version {answer.get('version') if answer else None})")
    status, state, _ = client.state()
    check(status == 200 and state["version"] == answer["version"], f"and a read shows it ({status}, version {state.get('version') if state else None} for {answer['version']})")
    status, answer, _ = client.act("logout")
    check(status == 200 and answer.get("screen") == "login", f"a logout on the cluster after the failover ({status})")


def run_cluster(binary):
    """The scenarios above on a new topology; returns the checks that failed."""
    topology = ClusterTopology(os.path.abspath(binary))
    try:
        topology.start_redis()
        topology.start_instance(0)
        topology.start_instance(1)
        topology.start_nginx()
        scenario_flow(topology)
        scenario_events(topology)
        scenario_everywhere(topology)
        scenario_primary(topology)
    finally:
        topology.stop()
    return run.FAILURES


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: cluster.py APPSHELL_BINARY")
    failures = run_cluster(sys.argv[1])
    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        sys.exit(1)
    print("all checks passed", flush=True)
