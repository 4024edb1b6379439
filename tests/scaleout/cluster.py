#!/usr/bin/env python3
"""Two `appshell` instances behind nginx on a Redis Cluster of three primaries and a replica each
(tests/scaleout/topology.py's RedisCluster), on loopback only; the second half of `make
test-scaleout` (or alone: cluster.py APPSHELL_BINARY, which exits 1 when a check fails). run.py's
scenarios, in order, then one of its own:

  flow      run.py's JSON flow through nginx, every request on the other instance, the store on
            the cluster (a login writes the session's slot and the user's).
  events    run.py's: a page's stream held by one instance hears the actions made through the
            other, its session's channel sharded (SSUBSCRIBE at its slot's primary).
  reminder  run.py's: a "Remind me" asked for through one instance reaches the page held by the
            other once, also when the one that scheduled it is killed before it is due.
  streams   run.py's: a session's cap on open event streams holds over both instances.
  everywhere  run.py's: log out everywhere through one instance ends the user's session and the
            stream the other holds (the users' channel, sharded too).
  race      run.py's: two clients acting on one session at once through both instances never get
            one version answered with two states.
  primary   the primary holding a logged-in session is killed (SIGKILL) mid-flow, once its
            replica has every write: meanwhile the session's actions answer 503 saying the store
            is unavailable, then the replica takes over and the next action runs on the session
            as last answered (nothing acknowledged lost); a logout goes through. Last: the
            cluster runs on without that primary.

run.py's kill (an instance killed) is not repeated here, and its redis (the one server killed)
is primary's counterpart.
"""

import time

import run
from run import (Topology, check, logged_in, scenario_events, scenario_everywhere, scenario_flow, scenario_race,
                 scenario_reminder, scenario_stream_cap)
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


if __name__ == "__main__":
    run.main(ClusterTopology, [scenario_flow, scenario_events, scenario_reminder, scenario_stream_cap,
                               scenario_everywhere, scenario_race, scenario_primary], "cluster.py")
