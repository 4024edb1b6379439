#!/usr/bin/env python3
"""Instructions per logged-in `GET /main` (the HTML page of make bench's (c)), counted by callgrind.

Runs the given appshell binary (build it with `swift build -c release`) under
`valgrind --tool=callgrind` twice — 300 and 900 pages on one keep-alive connection after one
login, one epoll thread, memory store, no access log — and prints
(instructions of the 900-page run - those of the 300-page run) / 600 for the serving thread only
(as bench/callgrind_actions.py), in two ways:

- kept: `GET /main` again and again, as (c) asks for it — from the second request on, the page the
  live app keeps (`Shell.renderPage`) is served;
- rendered: `GET /main?r=0` and `GET /main?r=1` in turn — the URL differs from the last one, so the
  page is made every time (the screen's `body` read, its HTML written into the layout).

`--functions N` also prints the N functions with the most instructions per rendered page,
inclusive (as callgrind_actions.py's); `--keep DIRECTORY` copies the callgrind outputs there.
Needs Debian's valgrind.
Usage: python3 bench/callgrind_page.py [--functions N] [--keep DIRECTORY] .build/release/appshell
"""

import os
import shutil
import sys
import tempfile

from callgrind_actions import functions_between, logged_in_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def count(binary: str, pages: int, rendered: bool, directory: str) -> int:
    """The serving thread's instructions for `pages` pages (and the start, login, stop)."""

    def browse(request) -> None:
        for i in range(pages):
            path = f"/main?r={i % 2}" if rendered else "/main"
            if request("GET", path) != 200:
                sys.exit(f"GET {path} failed")

    out = os.path.join(directory, f"callgrind-{'rendered' if rendered else 'kept'}-{pages}")
    return logged_in_run(binary, out, directory, browse, get_headers={"Accept": "text/html"})


def main() -> None:
    arguments = sys.argv[1:]
    keep = None
    limit = 0
    while arguments[:1] in (["--keep"], ["--functions"]):
        if arguments[0] == "--keep":
            keep = arguments[1]
        else:
            limit = int(arguments[1])
        arguments = arguments[2:]
    binary = os.path.abspath(arguments[0] if arguments else os.path.join(ROOT, ".build/release/appshell"))
    figures = {}
    with tempfile.TemporaryDirectory() as directory:
        for rendered in (False, True):
            short = count(binary, 300, rendered, directory)
            long = count(binary, 900, rendered, directory)
            figures[rendered] = (long - short) / 600
        if keep:
            shutil.copytree(directory, keep, dirs_exist_ok=True)
        if limit:
            functions_between(os.path.join(directory, "callgrind-rendered-300"),
                              os.path.join(directory, "callgrind-rendered-900"), 600, limit)
    print(f"instructions per logged-in GET /main, kept page: {figures[False]:.0f}")
    print(f"instructions per logged-in GET /main, rendered page: {figures[True]:.0f}")


if __name__ == "__main__":
    main()
