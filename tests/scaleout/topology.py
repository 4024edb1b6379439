"""What the scale-out tests share: free loopback ports, and nginx round-robin in front of instances.

Used by tests/scaleout/run.py and, with BROWSER_SCALEOUT=1, by the browser tests' fixture
(tests/browser/conftest.py). Python 3 standard library and Debian's nginx.
"""

import os
import socket
import subprocess
import time


def free_port():
    """A TCP port of 127.0.0.1 free now."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def wait_for_port(port, process, seconds=30):
    """Returns once something listens on `port`; raises when `process` exits first or time is up."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {seconds} s")


def start_nginx(folder, upstream_ports, prefix=(), keepalive=16, sticky_cookie=None):
    """nginx on a free port of 127.0.0.1, round-robin over `upstream_ports` (one worker; each
    request goes to the next instance, a refused connection to the other; no buffering, so event
    streams flow), its files in `folder`, its command line after `prefix` (`taskset -c …`).
    `keepalive` idle connections to the instances are kept (upstream keep-alive, as the Deploying
    article's example does: no new connection per request); 0 keeps none. With `sticky_cookie`
    (a cookie's name) a session's requests all go to one instance, chosen by its cookie (`hash
    ... consistent`, as the Deploying article suggests for leases), not round-robin. Returns
    (process, port)."""
    temp = os.path.join(folder, "nginx")
    os.makedirs(temp, exist_ok=True)
    port = free_port()
    servers = "\n".join(f"    server 127.0.0.1:{upstream} max_fails=0;" for upstream in upstream_ports)
    if sticky_cookie:
        servers += f"\n    hash $cookie_{sticky_cookie} consistent;"
    if keepalive:
        servers += f"\n    keepalive {keepalive};"
    config = f"""
worker_processes 1;
daemon off;
master_process off;
pid {temp}/nginx.pid;
error_log {temp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {temp}/body;
  proxy_temp_path {temp}/proxy;
  fastcgi_temp_path {temp}/fastcgi;
  uwsgi_temp_path {temp}/uwsgi;
  scgi_temp_path {temp}/scgi;
  upstream appshell {{
{servers}
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://appshell;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_next_upstream error timeout;
      proxy_read_timeout 300s;
    }}
  }}
}}
"""
    path = os.path.join(temp, "nginx.conf")
    with open(path, "w") as file:
        file.write(config)
    process = subprocess.Popen(
        list(prefix) + ["nginx", "-c", path, "-p", temp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    wait_for_port(port, process)
    return process, port


class RedisCluster:
    """A Redis Cluster on loopback ports: `primaries` primaries and `replicas` replicas of each,
    each redis-server in a folder of its own under `folder` (nodes.conf, its append-only file
    synced at every write, its log), made a cluster by `redis-cli --cluster create`. The short
    `cluster-node-timeout` (1000 ms) makes a replica take over a killed primary in 2-3 seconds.
    `url` is what APPSHELL_STORE_URL takes; `kill(port)` crashes a node, `start_node(port)` starts
    it again (it rejoins as a replica of whoever took over), `stop()` ends them all."""

    def __init__(self, folder, primaries=3, replicas=1, node_timeout_ms=1000, prefix=()):
        self.folder = folder
        self.count = primaries * (replicas + 1)
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.prefix = list(prefix)
        self.ports = [free_port() for _ in range(self.count)]
        self.bus_ports = [free_port() for _ in range(self.count)]
        self.processes = {}

    @property
    def url(self):
        """The cluster's URL, naming every node as a seed."""
        return "redis-cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)

    def start(self):
        """Starts every node and makes the cluster; returns once it is healthy. A node whose port
        (or bus port), free when picked, was taken before it bound it (other tests run beside)
        starts again on others, up to 5 times."""
        for index in range(self.count):
            for attempt in range(5):
                try:
                    self.start_node(self.ports[index])
                    break
                except RuntimeError:
                    if attempt == 4:
                        raise
                    self.ports[index], self.bus_ports[index] = free_port(), free_port()
        nodes = [f"127.0.0.1:{port}" for port in self.ports]
        created = self.cli("--cluster", "create", *nodes, "--cluster-replicas", str(self.replicas), "--cluster-yes")
        if "[OK] All 16384 slots covered" not in created:
            raise RuntimeError(f"redis-cli --cluster create: {created}")
        self.wait_until_healthy()
        return self

    def start_node(self, port):
        """Starts (again) the node of `port`; returns once it listens."""
        index = self.ports.index(port)
        node_folder = os.path.join(self.folder, f"redis-{port}")
        os.makedirs(node_folder, exist_ok=True)
        self.processes[port] = subprocess.Popen(
            self.prefix + [
                "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", node_folder,
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-port", str(self.bus_ports[index]), "--cluster-node-timeout", str(self.node_timeout_ms),
                "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--repl-diskless-sync-delay", "0",
                "--logfile", os.path.join(node_folder, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for_port(port, self.processes[port])

    def wait_until_healthy(self, seconds=20):
        """Returns once every running node says cluster_state:ok and each primary has its replicas
        in sync; raises when `seconds` pass first."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if all(self.healthy(port) for port, process in self.processes.items() if process.poll() is None):
                return
            time.sleep(0.02)
        raise RuntimeError(f"the Redis Cluster is not healthy after {seconds} s")

    def healthy(self, port):
        """Whether the node of `port` says the cluster is ok and its replication is up."""
        info = self.cli("-p", str(port), "cluster", "info")
        if "cluster_state:ok" not in info:
            return False
        replication = self.cli("-p", str(port), "info", "replication")
        if "role:slave" in replication:
            return "master_link_status:up" in replication
        return f"connected_slaves:{self.replicas}" in replication

    def primary_port(self, slot):
        """The port of the primary serving `slot`, as a running node says."""
        asked = next(port for port, process in self.processes.items() if process.poll() is None)
        for line in self.cli("-p", str(asked), "cluster", "nodes").splitlines():
            fields = line.split()
            if len(fields) < 9 or "master" not in fields[2] or "fail" in fields[2]:
                continue
            for served in fields[8:]:
                bounds = served.split("-")
                if bounds[0].isdigit() and int(bounds[0]) <= slot <= int(bounds[-1]):
                    return int(fields[1].split("@")[0].rsplit(":", 1)[1])
        raise RuntimeError(f"no primary serves slot {slot}")

    def slot(self, key):
        """The slot of `key`, as the cluster computes it."""
        return int(self.cli("-p", str(self.ports[0]), "cluster", "keyslot", key).strip())

    def kill(self, port):
        """Kills the node of `port` at once (SIGKILL: a crash)."""
        self.processes[port].kill()
        self.processes[port].wait()

    def stop(self):
        """Kills every node."""
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()

    @staticmethod
    def cli(*arguments):
        """What redis-cli prints for `arguments`."""
        done = subprocess.run(["redis-cli", *arguments], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        return done.stdout + done.stderr
