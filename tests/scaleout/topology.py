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


def start_nginx(folder, upstream_ports, prefix=(), keepalive=16):
    """nginx on a free port of 127.0.0.1, round-robin over `upstream_ports` (one worker; each
    request goes to the next instance, a refused connection to the other; no buffering, so event
    streams flow), its files in `folder`, its command line after `prefix` (`taskset -c …`).
    `keepalive` idle connections to the instances are kept (upstream keep-alive, as the Deploying
    article's example does: no new connection per request); 0 keeps none. Returns (process,
    port)."""
    temp = os.path.join(folder, "nginx")
    os.makedirs(temp, exist_ok=True)
    port = free_port()
    servers = "\n".join(f"    server 127.0.0.1:{upstream} max_fails=0;" for upstream in upstream_ports)
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
