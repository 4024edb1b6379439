"""Runs schemathesis against a live app: the API contract test (`make contract-test`).

Starts the built binary of an AppShell app (the demo's `appshell`, or Notes' `notes`) on a free
port (port 0, read from its `listening` line) with the memory store and no splash, runs
`schemathesis run` with every check and every phase (examples, coverage, fuzzing, stateful)
against the document the server itself makes and serves at /api/openapi.json, and stops the
server. Exits with schemathesis's status.

Usage: run.py BINARY SCHEMATHESIS [--app-dir DIR] [--env NAME=VALUE ...] [extra schemathesis args]
(--app-dir: the app's directory, holding its config.json, the repository's root by default;
--env: a setting of the app's own for the run, e.g. its splash's length).
"""

import json
import os
import signal
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_EXAMPLES = os.environ.get("CONTRACT_MAX_EXAMPLES", "60")
MAX_SECONDS = os.environ.get("CONTRACT_SECONDS", "90")


def main() -> int:
    binary, schemathesis, *extra = sys.argv[1:]
    binary, schemathesis = os.path.abspath(binary), os.path.abspath(schemathesis)
    app_dir, settings = ROOT, {}
    while extra[:1] in (["--app-dir"], ["--env"]):
        if extra[0] == "--app-dir":
            app_dir = os.path.abspath(extra[1])
        else:
            name, _, value = extra[1].partition("=")
            settings[name] = value
        extra = extra[2:]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("APPSHELL_")}
    environment.update(
        {
            "APPSHELL_PORT": "0",
            "APPSHELL_STORE": "memory",

            "APPSHELL_ACCESS_LOG": "false",
            **settings,
        }
    )
    server = subprocess.Popen(
        [binary, "--config", "config.json"], cwd=app_dir, env=environment, stdout=subprocess.PIPE, text=True
    )
    try:
        port = None
        for line in server.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "listening":
                port = event["port"]
                break
        if port is None:
            print("contract test: the server exited before listening", file=sys.stderr)
            return 1
        # Keep reading the server's output so that it never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
        base = f"http://127.0.0.1:{port}"
        command = [
            schemathesis,
            "run",
            f"{base}/api/openapi.json",
            "--url",
            base,
            "--checks",
            "all",
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--max-examples",
            MAX_EXAMPLES,
            "--max-time",
            MAX_SECONDS,
            "--request-timeout",
            "10",
            "--seed",
            os.environ.get("CONTRACT_SEED", "15"),
            *extra,
        ]
        # Schemathesis's and Hypothesis's files (.hypothesis, reports) go under .build, not the tree,
        # a folder per app: make contract-test runs the demo's and Notes' at once.
        work = os.path.join(ROOT, ".build", "tools", "contract", os.path.basename(binary))
        os.makedirs(work, exist_ok=True)
        result = subprocess.run(command, cwd=work)
        if server.poll() is not None:
            print(f"contract test: the server died during the run (status {server.returncode})", file=sys.stderr)
            return 1
        return result.returncode
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    sys.exit(main())
