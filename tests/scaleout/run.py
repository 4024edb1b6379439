#!/usr/bin/env python3
"""`make test-scaleout`: two `appshell` instances on one Redis, behind nginx, on loopback only.

Starts Debian's redis-server (append-only file, synced at every write: `appendfsync always`), two
instances of the given binary with `store: "redis"`, and nginx round-robin between them (one
worker, upstream keep-alive; each request goes to the next instance), all on free loopback
ports in a temporary folder, and stops them all at the end. Then, through nginx only:

  flow      the demo's whole flow through the JSON API (splash, login, the list and back, the
            second screen as a modal, a launch from a notification, logout, login again), every
            request on the other instance than the one before (checked with the instances' access
            logs): each answer shows the state the one before left, one version further, and the
            cookie rotates at login and logout.
  events    a page's event stream, held by one instance, gets the state of every action made
            through either, in version order, each once; a logout through either ends it.
  kill      an instance is killed (SIGKILL) in the middle of a user's actions: nginx sends the
            next requests to the other, which continues the session where it was; the killed one
            is started again and serves the same session.
  reminder  a page's stream held by one instance gets, exactly once, the notification "Remind
            me" scheduled through the other — also when that one is killed before it is due (every
            instance is told of it, and delivers it if it is still undelivered a moment after).
  streams   a session's cap on open event streams (8) holds over both instances: four open at
            each, a ninth is refused (429) at either; one that ends frees its place for the other.
  everywhere  log out everywhere through one instance (the account screen) ends the user's other
            session and its page's stream held by the other instance, through the relay: that
            session's next requests, through nginx, are a visitor's.
  redis     Redis is killed and started again in the middle: meanwhile requests are answered 503
            with a JSON message saying the store is unavailable; afterwards the session is as last
            answered (nothing acknowledged lost) and goes on.
  race      two clients act on one session at once through both instances (showList and pop as
            fast as they can): every answer is 200, or 409 or 503 saying why, and no version is answered with
            two different states (two transitions made from one state, or one lost, would).

Usage: run.py APPSHELL_BINARY. Python 3 standard library, Debian's redis-server and nginx. Exits 1
when a check fails.
"""

import http.client
import json
import os
import subprocess
import socket
import sys
import tempfile
import threading
import time

from topology import free_port, start_nginx, wait_for_port

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COOKIE = "appshell_session"
# "Remind me" in the instances: the notification is due this long after it is asked for.
REMINDER_MILLISECONDS = 1000
FAILURES = []


def check(condition, message):
    print(("  ok    " if condition else "  FAIL  ") + message, flush=True)
    if not condition:
        FAILURES.append(message)
    return condition


class Topology:
    """Redis, two instances and nginx in one temporary folder."""

    def __init__(self, binary):
        self.binary = binary
        self.folder = tempfile.mkdtemp(prefix="appshell-scaleout-")
        self.redis_port = free_port()
        self.instance_ports = [free_port(), free_port()]
        self.nginx_port = None
        self.redis = None
        self.instances = [None, None]
        self.logs = [os.path.join(self.folder, f"instance-{n}.log") for n in (0, 1)]
        self.nginx = None

    def store_url(self):
        """What the instances' APPSHELL_STORE_URL is (tests/scaleout/cluster.py: a cluster's)."""
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def start_redis(self):
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--dir", self.folder,
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--logfile",
             os.path.join(self.folder, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for_port(self.redis_port, self.redis)

    def kill_redis(self):
        self.redis.kill()
        self.redis.wait()

    def start_instance(self, number):
        env = {name: value for name, value in os.environ.items() if not name.startswith("APPSHELL_")}
        env.update({
            "APPSHELL_PORT": str(self.instance_ports[number]), "APPSHELL_STORE": "redis",
            "APPSHELL_STORE_URL": self.store_url(),
            "APPSHELL_SPLASH_DELAY_MILLISECONDS": "300", "APPSHELL_SHUTDOWN_TIMEOUT_SECONDS": "2",
            "APPSHELL_REMINDER_DELAY_MILLISECONDS": str(REMINDER_MILLISECONDS),
            "APPSHELL_CONFIG": os.path.join(REPO, "config.json"),
            "APPSHELL_PUBLIC_DIRECTORY": os.path.join(REPO, "Public"),
        })
        log = open(self.logs[number], "a")
        self.instances[number] = subprocess.Popen(
            [self.binary], env=env, cwd=self.folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        wait_for_port(self.instance_ports[number], self.instances[number])

    def kill_instance(self, number):
        self.instances[number].kill()
        self.instances[number].wait()

    def start_nginx(self):
        self.nginx, self.nginx_port = start_nginx(self.folder, self.instance_ports)

    def requests_served(self, number):
        """The request lines of an instance's access log (one JSON object each)."""
        served = []
        with open(self.logs[number]) as log:
            for line in log:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if "path" in entry and "requestID" in entry:
                    served.append(entry)
        return served

    def stop(self):
        for process in [self.nginx, *self.instances, self.redis]:
            if process and process.poll() is None:
                process.kill()
                process.wait()
        subprocess.run(["rm", "-rf", self.folder], check=False)


class Client:
    """One browser's worth of HTTP through nginx: a cookie jar of one cookie."""

    def __init__(self, port):
        self.port = port
        self.cookie = None
        self.sent = 0

    def request(self, method, path, body=None):
        self.sent += 1
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"X-Request-ID": f"scaleout-{id(self) % 100000}-{self.sent}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.cookie:
            headers["Cookie"] = f"{COOKIE}={self.cookie}"
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        data = response.read()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie" and value.startswith(COOKIE + "="):
                self.cookie = value.split(";", 1)[0].split("=", 1)[1]
        connection.close()
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = None
        return response.status, parsed, headers["X-Request-ID"]

    def state(self):
        return self.request("GET", "/api/state")

    def act(self, action, **fields):
        return self.request("POST", "/api/actions", {"action": action, **fields})


def wait_for_screen(client, screen, seconds=10):
    deadline = time.time() + seconds
    while True:
        status, state, _ = client.state()
        if status == 200 and state and state.get("screen") == screen:
            return state
        if time.time() > deadline:
            return state
        time.sleep(0.05)


def logged_in(topology):
    """A new client through nginx, logged in as the demo user (the splash waited out), and the
    login's answer."""
    client = Client(topology.nginx_port)
    wait_for_screen(client, "login")
    status, answer, _ = client.act("login", username="demo", password="appshell")
    check(status == 200, f"login answered {status}")
    return client, answer


def scenario_flow(topology):
    print("flow: the JSON API through nginx, every request on the other instance", flush=True)
    client = Client(topology.nginx_port)
    ids = []
    state = wait_for_screen(client, "login")
    check(state and state.get("screen") == "login", "the splash routes to the login screen")
    before = client.cookie
    steps = [
        ("login", {"username": "demo", "password": "appshell"}, "main", ["main"]),
        ("showList", {}, "list", ["main", "list"]),
        ("pop", {}, "main", ["main"]),
        ("presentSecond", {}, "second", ["main"]),
        ("dismiss", {}, "main", ["main"]),
        ("launch", {"source": "notification"}, "list", ["main", "list"]),
        ("pop", {}, "main", ["main"]),
        ("logout", {}, "login", []),
        ("login", {"username": "demo", "password": "appshell"}, "main", ["main"]),
    ]
    version = state.get("version", 0) if state else 0
    for action, fields, screen, stack in steps:
        status, answer, request_id = client.act(action, **fields)
        ids.append(request_id)
        ok = check(status == 200 and answer is not None, f"{action}: answered {status}")
        if not ok:
            continue
        check(answer.get("version", -1) > version, f"{action}: version {answer.get('version')} after {version}")
        version = answer.get("version", version)
        if screen:
            check(answer.get("screen") == screen, f"{action}: screen {answer.get('screen')}, expected {screen}")
        if stack is not None:
            check(answer.get("stack") == stack, f"{action}: stack {answer.get('stack')}, expected {stack}")
        # The other instance reads what this one answered.
        status, read, request_id = client.state()
        ids.append(request_id)
        check(status == 200 and read and read.get("version") == version and read.get("screen") == answer.get("screen"),
              f"{action}: the next read shows version {version} ({read.get('version') if read else None})")
        if action in ("login", "logout"):
            check(client.cookie != before, f"{action}: the session id rotated")
            before = client.cookie
    # Which instance served each request: they alternate. (A request's access-log line is written
    # once it completed, a moment after its answer: the last ones may need that moment.)
    deadline = time.time() + 5
    while True:
        served = [None] * len(ids)
        for number in (0, 1):
            for entry in topology.requests_served(number):
                if entry["requestID"] in ids:
                    served[ids.index(entry["requestID"])] = number
        if None not in served or time.time() > deadline:
            break
        time.sleep(0.05)
    check(None not in served, f"every request was served by one of the two ({served.count(None)} not found)")
    alternations = sum(1 for a, b in zip(served, served[1:]) if a is not None and a != b)
    check(alternations == len(served) - 1, f"each request went to the other instance ({alternations} of {len(served) - 1})")
    return client


class EventReader:
    """A page's event stream (`GET /api/events`) through nginx, read on a thread of its own."""

    def __init__(self, port, cookie):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        # Direct to an instance too (not only through nginx): which one holds it then is known.
        self.connection.request("GET", "/api/events", headers={
            "Cookie": f"{COOKIE}={cookie}", "Accept": "text/event-stream"})
        # A stream's answer says `Connection: close`, so http.client hands the socket to the
        # response and `connection.close()` alone would leave it open: `close` shuts it down, as a
        # browser closing its EventSource does.
        self.socket = self.connection.sock
        self.response = self.connection.getresponse()
        self.events = []
        self.ended = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        if self.response.status == 200:
            self.thread.start()
        else:
            # A refusal's body is left for the caller to read.
            self.ended = True

    def read(self):
        event = {}
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if not line:
                    if "event" in event:
                        with self.lock:
                            self.events.append(event)
                    event = {}
                elif not line.startswith(":") and ":" in line:
                    name, value = line.split(":", 1)
                    value = value[1:] if value.startswith(" ") else value
                    # Data of several lines is one value, its lines joined (the SSE format).
                    event[name] = event[name] + "\n" + value if name in event else value
        except (OSError, AttributeError, ValueError):
            # Closed under the reader (`close`), or cut off: the stream ended.
            pass
        with self.lock:
            self.ended = True

    def versions(self):
        with self.lock:
            states = [event for event in self.events if event.get("event") == "state"]
        versions = []
        for event in states:
            try:
                versions.append(json.loads(event["data"])["version"])
            except (ValueError, KeyError):
                check(False, f"a state event holds no state: {len(event['data'])} bytes, ends {event['data'][-300:]!r}")
                versions.append(None)
        return versions

    def notifications(self):
        with self.lock:
            return [event for event in self.events if event.get("event") == "notification"]

    def wait_for(self, condition, seconds=10):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if condition():
                return True
            time.sleep(0.02)
        return condition()

    def close(self):
        try:
            self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()


def scenario_events(topology):
    print("events: a page's stream on one instance hears the changes made through the other", flush=True)
    client, answer = logged_in(topology)
    stream = EventReader(topology.nginx_port, client.cookie)
    check(stream.response.status == 200, f"the stream opened ({stream.response.status})")
    check(stream.wait_for(lambda: stream.versions()[-1:] == [answer["version"]]),
          f"it starts with the current state (version {answer['version']}: {stream.versions()})")
    answered = []
    for action in ["showList", "pop", "showList", "pop", "presentSecond", "dismiss"]:
        status, answer, _ = client.act(action)
        if check(status == 200, f"{action} answered {status}"):
            answered.append(answer["version"])
        # Each action's state reaches the stream, whichever instance made it.
        check(stream.wait_for(lambda: answered[-1] in stream.versions()),
              f"{action}: version {answered[-1]} reached the stream ({stream.versions()[-3:]})")
    versions = stream.versions()
    check(versions == sorted(versions) and len(set(versions)) == len(versions),
          f"in version order, each once: {versions}")
    # Logout rotates the id: the stream opened with the old one ends, wherever it is held.
    status, _, _ = client.act("logout")
    check(status == 200, f"logout answered {status}")
    check(stream.wait_for(lambda: stream.ended), "the stream of the old id ended")
    stream.close()


def scenario_kill(topology):
    print("kill: an instance killed mid-flow; the other continues the session", flush=True)
    client, answer = logged_in(topology)
    status, answer, _ = client.act("showList")
    check(status == 200 and answer["stack"] == ["main", "list"], "the list is open")
    version = answer["version"]
    topology.kill_instance(0)
    answers = [client.state() for _ in range(4)]
    check(all(status == 200 for status, _, _ in answers), f"reads after the kill: {[s for s, _, _ in answers]}")
    check(all(state["version"] == version and state["stack"] == ["main", "list"] for _, state, _ in answers),
          "the other instance shows the session as last answered")
    status, answer, _ = client.act("pop")
    check(status == 200 and answer["stack"] == ["main"] and answer["version"] > version, "and acts on it")
    version = answer["version"]
    topology.start_instance(0)
    answers = [client.state() for _ in range(4)]
    check(all(status == 200 and state["version"] == version for status, state, _ in answers),
          "once started again, both serve it as last answered")


def scenario_reminder(topology):
    print("reminder: a notification scheduled through one instance reaches a page held by the other, once,"
          " even when the one that scheduled it is killed before it is due", flush=True)
    for kill in (False, True):
        client, _ = logged_in(topology)
        # The page's stream on instance 1, the reminder asked for through instance 0.
        stream = EventReader(topology.instance_ports[1], client.cookie)
        check(stream.wait_for(lambda: len(stream.versions()) > 0), "the stream on instance 1 opened")
        direct = Client(topology.instance_ports[0])
        direct.cookie = client.cookie
        status, answer, _ = direct.act("remind")
        check(status == 200, f"remind through instance 0 answered {status}")
        if kill:
            # The others are told after the commit, on the relay's thread: a kill within that
            # moment leaves the reminder to the session's next request (the Deploying article, "Scale out on Redis").
            time.sleep(0.3)
            topology.kill_instance(0)
        heard = stream.wait_for(lambda: len(stream.notifications()) > 0, seconds=10)
        what = "instance 0 killed: the other instance delivers it" if kill else "delivered"
        check(heard and "Your reminder" in stream.notifications()[0].get("data", ""),
              f"{what} ({stream.notifications()})")
        # The other instances' takeover, two seconds after it was due, finds it delivered.
        time.sleep(3)
        check(len(stream.notifications()) == 1, f"exactly once ({len(stream.notifications())} heard)")
        stream.close()
        if kill:
            topology.start_instance(0)


def scenario_stream_cap(topology):
    print("streams: a session's cap on open streams (8) holds over both instances", flush=True)
    client, _ = logged_in(topology)
    streams = []
    for number in range(8):
        stream = EventReader(topology.instance_ports[number % 2], client.cookie)
        streams.append(stream)
        check(stream.response.status == 200, f"stream {number + 1} on instance {number % 2} opened ({stream.response.status})")
    for number in (0, 1):
        over = EventReader(topology.instance_ports[number], client.cookie)
        body = over.response.read().decode() if over.response.status != 200 else ""
        check(over.response.status == 429 and "8 event streams open already" in body,
              f"a ninth, on instance {number}: {over.response.status} {body.strip()}")
        over.close()
    # One ends at instance 0: its place comes back, and a stream at instance 1 gets it.
    streams[0].close()
    deadline = time.time() + 10
    while True:
        again = EventReader(topology.instance_ports[1], client.cookie)
        if again.response.status == 200 or time.time() > deadline:
            break
        again.close()
        time.sleep(0.2)
    check(again.response.status == 200, f"after one ended, one more opens at the other instance ({again.response.status})")
    for stream in [*streams[1:], again]:
        stream.close()


def scenario_redis(topology):
    print("redis: Redis killed and started again mid-flow", flush=True)
    client, answer = logged_in(topology)
    status, answer, _ = client.act("showList")
    check(status == 200, f"showList answered {status}")
    acknowledged = answer
    topology.kill_redis()
    for name, (status, body, _) in [("an action", client.act("pop")), ("a read", client.state())]:
        check(status == 503 and body and "unavailable" in body.get("error", ""),
              f"{name} while Redis is away: {status} {body}")
    topology.start_redis()
    status, state, _ = client.state()
    check(status == 200 and state["version"] == acknowledged["version"] and state["stack"] == acknowledged["stack"],
          f"after Redis's restart the session is as last answered (version {state.get('version') if state else None})")
    status, answer, _ = client.act("pop")
    check(status == 200 and answer["stack"] == ["main"], f"and goes on ({status})")
    # A write to a connection Redis closed fails with EPIPE: it never ends the process (SIGPIPE).
    for number, process in enumerate(topology.instances):
        check(process.poll() is None and ignores_sigpipe(process.pid), f"instance {number} runs on, SIGPIPE ignored")


def ignores_sigpipe(pid):
    """Whether the process `pid` ignores SIGPIPE (signal 13: bit 12 of SigIgn)."""
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("SigIgn:"))
    return int(line.split()[1], 16) & (1 << 12) != 0


def scenario_everywhere(topology):
    print("everywhere: log out everywhere through one instance ends the user's session held by the other",
          flush=True)
    phone, _ = logged_in(topology)
    laptop, _ = logged_in(topology)
    # The phone's page stream on instance 1; the laptop logs out everywhere through instance 0.
    stream = EventReader(topology.instance_ports[1], phone.cookie)
    check(stream.wait_for(lambda: len(stream.versions()) > 0), "the phone's stream on instance 1 opened")
    direct = Client(topology.instance_ports[0])
    direct.cookie = laptop.cookie
    status, answer, _ = direct.act("account")
    check(status == 200 and answer.get("presented") == "account", f"account through instance 0 answered {status}")
    status, answer, _ = direct.act("logOutEverywhere")
    check(status == 200 and answer.get("screen") == "login",
          f"logOutEverywhere through instance 0 answered {status}, {answer and answer.get('screen')}")
    check(stream.wait_for(lambda: stream.ended), "the phone's stream on instance 1 ended")
    stream.close()
    # The phone's next requests, through nginx (so on both instances): a visitor's.
    for _ in range(2):
        status, state, _ = phone.state()
        check(status == 200 and state["screen"] in ("splash", "login") and state["defaults"] == {},
              f"the phone is a visitor now ({status}, {state and state.get('screen')}, {state and state.get('defaults')})")


def scenario_race(topology):
    print("race: two clients on one session through both instances at once", flush=True)
    first, _ = logged_in(topology)
    second = Client(topology.nginx_port)
    second.cookie = first.cookie
    results = []
    lock = threading.Lock()

    def run(client, count):
        for index in range(count):
            action = "showList" if index % 2 == 0 else "pop"
            status, answer, _ = client.act(action)
            with lock:
                results.append((status, answer))

    threads = [threading.Thread(target=run, args=(client, 40)) for client in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted({status for status, _ in results})
    # 409: the other client's action came first (showList with the list open, pop on main).
    check(all(status in (200, 409, 503) for status, _ in results), f"every answer is 200, 409 or 503: {statuses}")
    refused = [answer for status, answer in results if status != 200]
    check(all(answer and "error" in answer for answer in refused), f"every refusal says why ({len(refused)} refused)")
    versions = [answer["version"] for status, answer in results if status == 200 and "version" in answer]
    check(len(versions) > 0, f"{len(versions)} actions answered")
    # Two answers with the same version show the same state (the API's promise): two transitions
    # made from one state, or one lost, would answer one version with two states.
    states = {}
    for status, answer in results:
        if status == 200 and "version" in answer:
            states.setdefault(answer["version"], set()).add(json.dumps(answer["stack"]))
    mixed = {version: stacks for version, stacks in states.items() if len(stacks) > 1}
    check(not mixed, f"each version answered shows one state ({len(states)} versions; mixed: {mixed})")
    status, state, _ = first.state()
    check(status == 200 and state["version"] >= max(versions, default=0),
          f"the session ends at version {state['version'] if state else None}, the highest answered {max(versions, default=0)}")


def run_on(topology, scenarios):
    """Starts `topology` (its Redis, both instances, nginx), runs `scenarios` on it in turn and
    stops it, also when one raised; returns the checks that failed."""
    try:
        topology.start_redis()
        topology.start_instance(0)
        topology.start_instance(1)
        topology.start_nginx()
        for scenario in scenarios:
            scenario(topology)
    finally:
        topology.stop()
    return FAILURES


def main(make_topology, scenarios, usage):
    """A script's `__main__` (this one's, cluster.py's): `scenarios` on `make_topology(binary)`,
    the binary its one argument; exits 1 when a check failed."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: {usage} APPSHELL_BINARY")
    if run_on(make_topology(os.path.abspath(sys.argv[1])), scenarios):
        print(f"{len(FAILURES)} check(s) failed", flush=True)
        sys.exit(1)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    main(Topology, [scenario_flow, scenario_events, scenario_kill, scenario_reminder, scenario_stream_cap,
                    scenario_everywhere, scenario_redis, scenario_race], "run.py")
