#!/usr/bin/env bash
# make test-container: builds the project's Dockerfile, unchanged, with rootful podman and runs the
# image the way an operator would, checking what the Deploying article promises about it.
#
# Official images cannot be pulled everywhere, so the base images are stand-ins built here when
# missing (kept in podman's image store, so later runs reuse them):
#   localhost/appshell-stand-in/debian:bookworm-slim   debootstrap --variant=minbase, imported
#   localhost/appshell-stand-in/swift:<version>-bookworm  the above + the Swift toolchain on PATH
# Set APPSHELL_REBUILD_STAND_INS=1 to build them again (say, for a newer Debian point release), or
# BUILDER_IMAGE / RUNTIME_IMAGE to build against other images (the official ones:
# docker.io/library/swift:6.3-bookworm, docker.io/library/debian:bookworm-slim) instead. The image
# is tagged localhost/appshell:container-test (APPSHELL_TEST_IMAGE), its builder stage the same
# with -builder; both stay, as the next run's layer cache.
#
# Needs root (rootful podman), podman, runc, iptables, debootstrap, curl, python3 and redis-server
# (two containers on one Redis, on the host's network): the Makefile's
# test-container target installs what is missing, then runs this script. Every container, volume
# and temporary directory it makes is removed at exit, also when a step fails.
set -Eeuo pipefail
cd "$(dirname "$0")/../.."

readonly RUN_ID="appshell-ctest-$$"
readonly IMAGE="${APPSHELL_TEST_IMAGE:-localhost/appshell:container-test}"
readonly STAND_IN_SLIM="localhost/appshell-stand-in/debian:bookworm-slim"
readonly RECIPE_LABEL="org.appshell.stand-in.recipe"
# The most the runtime image may weigh (it is about 95 MB: bookworm-slim, the libraries, a 15 MB
# binary). Over it, something of the build was left in the image, or the binary links Foundation
# (and with it ICU's data, about 45 MB) again.
readonly SIZE_LIMIT_MB="${APPSHELL_IMAGE_SIZE_LIMIT_MB:-120}"
# What docker stop and podman stop wait by default: the image's shutdown timeout fits within it.
readonly STOP_GRACE_SECONDS=10
# runc, not crun: crun fails here on the rlimits and on hybrid cgroups. The limits are set
# explicitly for the same reason (and are sane for a server that holds a connection per client).
readonly ULIMITS=(--ulimit nofile=20000:20000 --ulimit nproc=20000:20000)
podman() { command podman --runtime runc "$@"; }
run_image() { podman run "${ULIMITS[@]}" "$@"; }
# Podman runs HEALTHCHECKs on a timer only through systemd, which this machine lacks: no timer
# (which would fail with an error on every start and removal); the test runs the image's check
# itself with `podman healthcheck run`.
export DISABLE_HC_SYSTEMD=true

STEP="start"
STARTED=$SECONDS
WORK=""
CONTAINERS=()
VOLUMES=()
EVENT_STREAM_PID=""
REDIS_PID=""

step() {
    STEP="$*"
    printf '\n== [%3ds] %s\n' "$((SECONDS - STARTED))" "$*"
}

fail() {
    printf '\ntest-container FAILED in step "%s": %s\n' "$STEP" "$*" >&2
    exit 1
}

on_error() {
    printf '\ntest-container FAILED in step "%s": command `%s` (line %s) exited %s\n' \
        "$STEP" "$2" "$1" "$3" >&2
}

cleanup() {
    local status=$?
    trap - ERR
    set +e
    if [ -n "$EVENT_STREAM_PID" ]; then kill "$EVENT_STREAM_PID" 2>/dev/null; fi
    if [ -n "$REDIS_PID" ]; then kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; fi
    if [ "$status" -ne 0 ]; then
        for container in "${CONTAINERS[@]}"; do
            if podman container exists "$container"; then
                printf '\n-- log of %s (last 30 lines):\n' "$container" >&2
                podman logs --tail 30 "$container" >&2 2>&1
            fi
        done
    fi
    for container in "${CONTAINERS[@]}"; do
        podman rm --force --volumes --time 0 "$container" >/dev/null 2>&1
    done
    for volume in "${VOLUMES[@]}"; do
        podman volume rm --force "$volume" >/dev/null 2>&1
    done
    if [ -n "$WORK" ]; then rm -rf "$WORK"; fi
    if [ "$status" -eq 0 ]; then
        printf '\ntest-container passed in %ds\n' "$((SECONDS - STARTED))"
    fi
    exit "$status"
}

trap 'on_error "$LINENO" "$BASH_COMMAND" "$?"' ERR
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- helpers ---------------------------------------------------------------------------------

# A JSON field of stdin by a Python expression over `j` (the parsed document), printed compactly.
json() {
    python3 -c '
import json, sys
j = json.load(sys.stdin)
value = eval(sys.argv[1], {"j": j})
print(value if isinstance(value, str) else json.dumps(value, sort_keys=True))' "$1"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Polls a command until it succeeds, for at most $1 seconds.
wait_for() {
    local limit=$1 description=$2
    shift 2
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then fail "$description: not within ${limit}s"; fi
        sleep 0.5
    done
}

# The Debian mirror this machine's apt uses for bookworm (and its security mirror).
apt_mirror() {
    apt-get indextargets --format '$(REPO_URI) $(RELEASE)' \
        | awk -v suite="$1" '$2 == suite { print $1; exit }'
}

# --- stand-in base images ---------------------------------------------------------------------

build_stand_in_slim() {
    local mirror security rootfs
    mirror=$(apt_mirror bookworm)
    security=$(apt_mirror bookworm-security)
    mirror=${mirror:-http://deb.debian.org/debian/}
    security=${security:-http://deb.debian.org/debian-security/}
    rootfs="$WORK/rootfs"
    echo "debootstrap --variant=minbase bookworm from $mirror"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -20 "$WORK/debootstrap.log" >&2; fail "debootstrap failed"; }
    # What debian:bookworm-slim changes over a minbase root: no documentation, manuals or
    # translations from later installs, no kept package files, the three bookworm suites.
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
    cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    printf 'Acquire::Languages "none";\n' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
    rm -f "$rootfs/etc/apt/sources.list"
    cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    rm -rf "$rootfs"/usr/share/{man,info,locale,lintian}/* "$rootfs"/var/lib/apt/lists/* \
        "$rootfs"/var/cache/apt/* "$rootfs"/var/log/* "$rootfs"/tmp/* \
        "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"
    tar -C "$rootfs" --numeric-owner -cf - . | podman import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["bash"]' \
        --change "LABEL $RECIPE_LABEL=$1" \
        --message 'AppShell stand-in for debian:bookworm-slim (debootstrap minbase)' \
        - "$STAND_IN_SLIM" >/dev/null
    rm -rf "$rootfs"
}

build_stand_in_swift() {
    local image=$1 prefix=$2 recipe=$3
    podman build --format docker --pull=never "${ULIMITS[@]}" --label "$RECIPE_LABEL=$recipe" \
        --volume "$prefix:/toolchain:ro" \
        --build-arg BASE_IMAGE="$STAND_IN_SLIM" \
        --file tests/container/swift-builder.Containerfile \
        --tag "$image" "$WORK/empty-context"
}

# --- the test ---------------------------------------------------------------------------------

[ "$(id -u)" = 0 ] || fail "needs root (rootful podman): run it through make test-container"
# One run at a time on a machine: runs share the image tags and the stand-ins they build.
exec 9>/run/lock/appshell-test-container.lock
if ! flock --nonblock 9; then
    echo "waiting for another make test-container on this machine to finish"
    flock 9
fi
WORK=$(mktemp -d /tmp/appshell-container-test.XXXXXX)
mkdir "$WORK/empty-context"

step "base images"
# A stand-in is built when missing, or when its recipe (the function or Containerfile that makes it,
# and what it is made from) changed: the recipe's hash is a label of the image.
slim_recipe=$(declare -f build_stand_in_slim | sha256sum | cut -c1-16)
stand_in_current() {
    [ -z "${APPSHELL_REBUILD_STAND_INS:-}" ] \
        && [ "$(podman image inspect --format "{{index .Labels \"$RECIPE_LABEL\"}}" "$1" 2>/dev/null)" = "$2" ]
}
ensure_stand_in_slim() {
    if stand_in_current "$STAND_IN_SLIM" "$slim_recipe"; then
        echo "$STAND_IN_SLIM: present"
    else
        echo "$STAND_IN_SLIM: missing or out of date, building it (about a minute)"
        build_stand_in_slim "$slim_recipe"
    fi
}
if [ -n "${RUNTIME_IMAGE:-}" ]; then
    runtime_image=$RUNTIME_IMAGE
else
    ensure_stand_in_slim
    runtime_image=$STAND_IN_SLIM
fi
if [ -n "${BUILDER_IMAGE:-}" ]; then
    builder_image=$BUILDER_IMAGE
else
    swift_binary=$(readlink -f "$(command -v "${SWIFT:-swift}")") \
        || fail "no swift on PATH: the builder stand-in copies the toolchain of the swift on PATH"
    swift_prefix=$(dirname "$(dirname "$swift_binary")")
    swift_version=$("$swift_prefix/bin/swift" --version 2>/dev/null \
        | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/\1/p' | head -1)
    [ -n "$swift_version" ] || fail "cannot tell the version of the toolchain in $swift_prefix"
    builder_image="localhost/appshell-stand-in/swift:${swift_version}-bookworm"
    swift_recipe=$( (cat tests/container/swift-builder.Containerfile; echo "$swift_prefix $slim_recipe") \
        | sha256sum | cut -c1-16)
    if [ -n "${RUNTIME_IMAGE:-}" ]; then ensure_stand_in_slim; fi
    if stand_in_current "$builder_image" "$swift_recipe"; then
        echo "$builder_image: present"
    else
        echo "$builder_image: missing or out of date, building it from $swift_prefix (a few minutes)"
        build_stand_in_swift "$builder_image" "$swift_prefix" "$swift_recipe"
    fi
fi
echo "builder: $builder_image; runtime: $runtime_image"

step "build the Dockerfile"
# The builder stage is built (and tagged) first, then the whole file, which reuses it: the tag
# keeps the builder's layers, the layer cache of the next build, from counting as dangling. When
# a build replaces an image a tag named, the old one goes, with the layers only it used (old
# sources' builds, base images a stand-in rebuild replaced).
builder_tag="$IMAGE-builder"
previous_images=$(podman image inspect --format '{{.Id}}' "$IMAGE" "$builder_tag" 2>/dev/null || true)
build_args=(--build-arg BUILDER_IMAGE="$builder_image" --build-arg RUNTIME_IMAGE="$runtime_image")
# --format docker: the OCI image format has no HEALTHCHECK; podman would drop it. --pull=missing:
# the stand-ins are local; images given by name are pulled when not there yet.
podman build --format docker --layers --pull=missing "${ULIMITS[@]}" "${build_args[@]}" \
    --target builder --tag "$builder_tag" .
podman build --format docker --layers --pull=missing "${ULIMITS[@]}" "${build_args[@]}" \
    --tag "$IMAGE" .
current_images=$(podman image inspect --format '{{.Id}}' "$IMAGE" "$builder_tag")
for image in $previous_images; do
    case "$current_images" in *"$image"*) ;; *) podman rmi "$image" >/dev/null 2>&1 || true ;; esac
done

step "image size and contents"
size_bytes=$(podman image inspect --format '{{.Size}}' "$IMAGE")
size_mb=$(((size_bytes + 500000) / 1000000))
echo "runtime image $IMAGE: $size_mb MB ($size_bytes bytes); limit: $SIZE_LIMIT_MB MB"
podman history --format '  {{.Size}}\t{{.CreatedBy}}' "$IMAGE" | grep -v '^  0 B' | cut -c1-110
[ "$size_mb" -le "$SIZE_LIMIT_MB" ] \
    || fail "the image is $size_mb MB, over the limit of $SIZE_LIMIT_MB MB: something of the build was left in it, or a module the binary links imports Foundation (make foundation-check)"
[ "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")" = "10001:10001" ] \
    || fail "the image does not run as user 10001:10001"
[ "$(podman image inspect --format '{{.Config.StopSignal}}' "$IMAGE")" = SIGTERM ] \
    || fail "the image's stop signal is not SIGTERM"
health_test=$(podman image inspect --format '{{.Config.Healthcheck}}' "$IMAGE")
case "$health_test" in *"/usr/local/bin/appshell health"*) ;; *) fail "the image's HEALTHCHECK is not appshell health: $health_test" ;; esac
run_image --rm --read-only --entrypoint /bin/sh "$IMAGE" -c '
    set -e
    echo "linked libraries:"; ldd /usr/local/bin/appshell | sed "s/^/  /"
    if ldd /usr/local/bin/appshell | grep -q "not found"; then echo "a library is missing"; exit 1; fi
    if ldd /usr/local/bin/appshell | grep -q "libswift\|libFoundation\|libdispatch"; then
        echo "the Swift runtime is linked dynamically, not statically"; exit 1
    fi
    for leftover in /src /usr/bin/swift /usr/include/sqlite3.h /var/lib/apt/lists/*_Packages; do
        if [ -e "$leftover" ]; then echo "left over from the build: $leftover"; exit 1; fi
    done' || fail "the image's binary or contents are not what they should be"

step "the demo account on 0.0.0.0 (the image as it is): exit 2 and one line; a user of its own instead"
# config.json ships demo/appshell, which anyone can read; the server refuses to serve it on a
# non-loopback host unless APPSHELL_ALLOW_DEMO_ACCOUNT=true. The image sets no such allowance: the
# containers below get a user of their own (the Deploying article).
demo="$RUN_ID-demo"
CONTAINERS+=("$demo")
run_image --detach --name "$demo" --read-only "$IMAGE" >/dev/null
demo_exit=$(podman wait "$demo")
podman logs "$demo" >"$WORK/demo.out" 2>"$WORK/demo.err"
cat "$WORK/demo.err"
[ "$demo_exit" = 2 ] || fail "exit status $demo_exit with the demo account on 0.0.0.0, not 2"
[ "$(wc -l <"$WORK/demo.err")" = 1 ] || fail "not exactly one line on standard error"
grep -q '^appshell: configuration error: the demo account.*APPSHELL_ALLOW_DEMO_ACCOUNT' "$WORK/demo.err" \
    || fail "the error line does not name the demo account and APPSHELL_ALLOW_DEMO_ACCOUNT"
readonly USER_NAME=ctest USER_PASSWORD="container test passphrase"
user_hash=$(printf '%s' "$USER_PASSWORD" | run_image --rm -i --read-only --network none "$IMAGE" hash-password)
case "$user_hash" in '$argon2id$'*) ;; *) fail "hash-password printed: $user_hash" ;; esac
readonly USERS_JSON="[{\"username\":\"$USER_NAME\",\"passwordHash\":\"$user_hash\"}]"
login_action="{\"action\":\"login\",\"username\":\"$USER_NAME\",\"password\":\"$USER_PASSWORD\"}"

volume="$RUN_ID-data"
podman volume create "$volume" >/dev/null
VOLUMES+=("$volume")
port=$(free_port)
base="http://127.0.0.1:$port"
jar="$WORK/cookies"

# Runs the image as production should: read-only root (no tmpfs either: only /data is writable),
# no capabilities, no privilege gain, published on loopback only.
start_container() {
    local name=$1
    CONTAINERS+=("$name")
    run_image --detach --name "$name" \
        --read-only --read-only-tmpfs=false --cap-drop=all --security-opt=no-new-privileges \
        --publish "127.0.0.1:$port:8080" --volume "$volume:/data" \
        --env APPSHELL_ALLOWED_HOSTS=app.example.test --env APPSHELL_USERS="$USERS_JSON" \
        "$IMAGE" >/dev/null
}

healthy() {
    local name=$1
    # No timer runs the check (see run_image): run the image's own check here, then read the
    # status podman records from it.
    podman healthcheck run "$name" >/dev/null 2>&1 || return 1
    [ "$(podman inspect --format '{{.State.Health.Status}}' "$name")" = healthy ]
}

wait_healthy() {
    local name=$1 deadline=$((SECONDS + 60))
    until healthy "$name"; do
        [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ] \
            || fail "$name exited before it became healthy"
        [ "$SECONDS" -lt "$deadline" ] || fail "$name not healthy within 60s"
        sleep 0.5
    done
    echo "$name: healthy ($(podman inspect --format '{{.State.Health.Status}}' "$name"))"
}

api() { curl --silent --show-error --max-time 10 -c "$jar" -b "$jar" "$@"; }
act() {
    api --fail-with-body -H 'Content-Type: application/json' -d "$1" "$base/api/actions"
}
stream_ended() { ! kill -0 "$EVENT_STREAM_PID" 2>/dev/null; }
screen_is() { [ "$(api "$base/api/state" | json 'j["screen"]')" = "$1" ]; }
# What must survive a restart: the screens and the session's defaults.
session_summary() {
    api --fail "$base/api/state" \
        | json '{k: j[k] for k in ("screen", "root", "stack", "presented", "defaults")}'
}

step "run the image (read-only root, no capabilities, 127.0.0.1:$port only) and wait until healthy"
first="$RUN_ID-first"
start_container "$first"
published=$(podman port "$first" 8080/tcp)
[ "$published" = "127.0.0.1:$port" ] || fail "published on $published, not on 127.0.0.1:$port only"
wait_healthy "$first"

step "the process runs as a non-root user on a read-only root file system"
podman exec "$first" sh -c '
    set -e
    grep "^Uid:" /proc/1/status
    uids=$(awk "/^Uid:/ { print \$2, \$3, \$4, \$5 }" /proc/1/status)
    [ "$uids" = "10001 10001 10001 10001" ] || { echo "process 1 runs as $uids"; exit 1; }
    for path in /app/probe /usr/local/bin/probe /tmp/probe /etc/probe; do
        if (: >"$path") 2>/dev/null; then echo "$path is writable"; exit 1; fi
    done
    echo "not writable: /app /usr/local/bin /tmp /etc"
    : >/data/probe && rm /data/probe && echo "writable: /data"' \
    || fail "user or file system permissions are wrong"

step "logs: one JSON object per line on standard output"
podman logs "$first" 2>/dev/null >"$WORK/first.out"
python3 - "$WORK/first.out" <<'EOF' || fail "standard output is not JSON lines with a listening event"
import json, sys
lines = [line for line in open(sys.argv[1]) if line.strip()]
events = [json.loads(line) for line in lines]
assert all(isinstance(event, dict) for event in events), "a line that is not an object"
assert any(event.get("event") == "listening" for event in events), "no listening event"
print(f"{len(events)} lines, each a JSON object; first: {lines[0].strip()}")
EOF

step "the page, allowed hosts and the login flow through the JSON API"
page_status=$(api -o "$WORK/page.html" -w '%{http_code} %{content_type}' "$base/")
case "$page_status" in "200 text/html"*) ;; *) fail "GET / answered $page_status" ;; esac
grep -qi '<html' "$WORK/page.html" || fail "GET / is not an HTML page"
echo "GET / -> $page_status"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: app.example.test' "$base/healthz")" = 200 ] \
    || fail "a listed host (APPSHELL_ALLOWED_HOSTS) is not served"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: rebound.example' "$base/healthz")" = 421 ] \
    || fail "an unlisted host is served"
echo "Host app.example.test -> 200, Host rebound.example -> 421"
wait_for 30 "the splash did not route to login" screen_is login
echo "splash -> login"
act "$login_action" | json 'j["screen"]' | grep -qx main || fail "login did not lead to main"
act '{"action":"showList"}' | json 'j["stack"]' | grep -qx '\["main", "list"\]' \
    || fail "showList did not push list"
before=$(session_summary)
echo "session before the restart: $before"
case "$before" in *'"isLogin": true'*"\"username\": \"$USER_NAME\""*) ;; *) fail "login stored no defaults" ;; esac

step "SIGTERM (podman stop, ${STOP_GRACE_SECONDS}s grace) with an event stream open: exit 0 in time"
curl --silent --no-buffer --max-time 60 -b "$jar" "$base/api/events" >"$WORK/events" 2>&1 &
EVENT_STREAM_PID=$!
wait_for 10 "the event stream did not deliver the state" grep -q 'data:' "$WORK/events"
stop_started=$SECONDS
podman stop --time "$STOP_GRACE_SECONDS" "$first" >/dev/null
stop_seconds=$((SECONDS - stop_started))
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$first")
[ "$exit_code" = 0 ] || fail "exit status $exit_code after SIGTERM (137 is SIGKILL: the grace ran out)"
[ "$stop_seconds" -lt "$STOP_GRACE_SECONDS" ] || fail "the stop took ${stop_seconds}s"
podman logs "$first" 2>/dev/null | tail -1 | grep -q '"event":"stopped"' \
    || fail "the log does not end with the stopped event"
wait_for 5 "the event stream was not ended by the stop" stream_ended
EVENT_STREAM_PID=""
echo "exit 0 after ${stop_seconds}s; the open event stream was ended"

step "a new container on the same /data volume finds the session where it was"
second="$RUN_ID-second"
start_container "$second"
wait_healthy "$second"
after=$(session_summary)
echo "session after the restart:  $after"
[ "$after" = "$before" ] || fail "the session changed across the restart"
podman stop --time "$STOP_GRACE_SECONDS" "$second" >/dev/null
[ "$(podman inspect --format '{{.State.ExitCode}}' "$second")" = 0 ] || fail "second stop not exit 0"
run_image --rm --volume "$volume:/data" --entrypoint /bin/ls "$IMAGE" -ln /data

step "a bad APPSHELL_* value: exit 2 and one line naming it"
bad="$RUN_ID-bad"
CONTAINERS+=("$bad")
run_image --detach --name "$bad" --read-only --env APPSHELL_PORT=70000 "$IMAGE" >/dev/null
bad_exit=$(podman wait "$bad")
podman logs "$bad" >"$WORK/bad.out" 2>"$WORK/bad.err"
cat "$WORK/bad.err"
[ "$bad_exit" = 2 ] || fail "exit status $bad_exit, not 2"
[ "$(wc -l <"$WORK/bad.err")" = 1 ] || fail "not exactly one line on standard error"
grep -q '^appshell: configuration error: .*APPSHELL_PORT' "$WORK/bad.err" \
    || fail "the error line does not name APPSHELL_PORT"

step "a store from a newer AppShell (a downgrade): exit 1, the file left as it was"
store=$(podman volume inspect --format '{{.Mountpoint}}' "$volume")/appshell.sqlite
python3 - "$store" <<'EOF'
import os, sqlite3, sys
path = sys.argv[1]
owner = os.stat(path)
db = sqlite3.connect(path)
version = db.execute("PRAGMA user_version").fetchone()[0]
db.execute(f"PRAGMA user_version = {version + 1000}")
db.commit()
db.close()
for name in os.listdir(os.path.dirname(path)):
    os.chown(os.path.join(os.path.dirname(path), name), owner.st_uid, owner.st_gid)
print(f"schema version {version} -> {version + 1000}")
EOF
checksum=$(sha256sum <"$store")
newer="$RUN_ID-newer"
CONTAINERS+=("$newer")
run_image --detach --name "$newer" --read-only --read-only-tmpfs=false --volume "$volume:/data" \
    --env APPSHELL_USERS="$USERS_JSON" "$IMAGE" >/dev/null
newer_exit=$(podman wait "$newer")
podman logs "$newer" 2>&1 >/dev/null | tee "$WORK/newer.err"
[ "$newer_exit" = 1 ] || fail "exit status $newer_exit, not 1"
grep -q '^appshell: cannot start: ' "$WORK/newer.err" || fail "no 'appshell: cannot start:' line"
[ "$(sha256sum <"$store")" = "$checksum" ] || fail "the store was changed"

step "two containers on one Redis (the Deploying article, Redis): a session moves between them"
redis_port=$(free_port)
mkdir -p "$WORK/redis"
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$WORK/redis" --appendonly yes \
    --appendfsync always --save '' --logfile "$WORK/redis/redis.log" &
REDIS_PID=$!
wait_for 10 "redis-server did not answer" redis-cli -p "$redis_port" ping
store_url="redis://127.0.0.1:$redis_port/0"
redis_ports=()
for number in 1 2; do
    redis_ports+=("$(free_port)")
    name="$RUN_ID-redis-$number"
    CONTAINERS+=("$name")
    # The host's network: Redis listens on the host's loopback only. On loopback the demo account
    # is served without an allowance (the login below uses it).
    run_image --detach --name "$name" --network host \
        --read-only --read-only-tmpfs=false --cap-drop=all --security-opt=no-new-privileges \
        --env APPSHELL_HOST=127.0.0.1 --env APPSHELL_PORT="${redis_ports[-1]}" \
        --env APPSHELL_STORE=redis --env APPSHELL_STORE_URL="$store_url" "$IMAGE" >/dev/null
done
for number in 1 2; do wait_healthy "$RUN_ID-redis-$number"; done
podman logs "$RUN_ID-redis-1" 2>/dev/null | grep '"event":"listening"' | tee "$WORK/redis-listening"
grep -q "\"storeURL\":\"$store_url\"" "$WORK/redis-listening" || fail "the listening line does not name the store"
jar="$WORK/redis-cookies"
base="http://127.0.0.1:${redis_ports[0]}"
wait_for 30 "the splash did not route to login (instance 1)" screen_is login
act '{"action":"login","username":"demo","password":"appshell"}' | json 'j["screen"]' | grep -qx main \
    || fail "login through instance 1 did not lead to main"
base="http://127.0.0.1:${redis_ports[1]}"
through_second=$(session_summary)
echo "instance 2 after the login through instance 1: $through_second"
case "$through_second" in *'"isLogin": true'*'"screen": "main"'*) ;; *) fail "instance 2 does not see the login" ;; esac
act '{"action":"showList"}' | json 'j["stack"]' | grep -qx '\["main", "list"\]' \
    || fail "showList through instance 2 did not push list"
base="http://127.0.0.1:${redis_ports[0]}"
api --fail "$base/api/state" | json 'j["stack"]' | grep -qx '\["main", "list"\]' \
    || fail "instance 1 does not show the list pushed through instance 2"
echo "instance 1 shows the list pushed through instance 2"
for number in 1 2; do
    podman stop --time "$STOP_GRACE_SECONDS" "$RUN_ID-redis-$number" >/dev/null
    [ "$(podman inspect --format '{{.State.ExitCode}}' "$RUN_ID-redis-$number")" = 0 ] \
        || fail "instance $number on Redis: stop not exit 0"
done
kill "$REDIS_PID"
wait "$REDIS_PID" || true
REDIS_PID=""

step "HTTPS without a proxy: a certificate on a volume, healthy over TLS, curl --cacert, SIGHUP reload"
# A self-signed pair for 127.0.0.1 and localhost (its own CA), readable by the image's user.
certs="$WORK/certs"
mkdir -p "$certs"
make_pair() {
    openssl req -x509 -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -days 2 -subj "/CN=AppShell container test" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$certs/$1.key" -out "$certs/$1.pem" 2>/dev/null
}
make_pair first
make_pair second
cp "$certs/first.pem" "$certs/server.pem"
cp "$certs/first.key" "$certs/server.key"
chmod 0755 "$certs"
chmod 0644 "$certs"/*
tls="$RUN_ID-tls"
tls_port=$(free_port)
CONTAINERS+=("$tls")
run_image --detach --name "$tls" \
    --read-only --read-only-tmpfs=false --cap-drop=all --security-opt=no-new-privileges \
    --publish "127.0.0.1:$tls_port:8443" --volume "$certs:/certs:ro" --env APPSHELL_STORE=memory \
    --env APPSHELL_PORT=8443 --env APPSHELL_ALLOWED_HOSTS=app.example.test --env APPSHELL_USERS="$USERS_JSON" \
    --env APPSHELL_TLS_CERTIFICATE_PATH=/certs/server.pem --env APPSHELL_TLS_KEY_PATH=/certs/server.key \
    "$IMAGE" >/dev/null
# The image's own HEALTHCHECK (`appshell health`) asks over TLS.
wait_healthy "$tls"
tls_base="https://127.0.0.1:$tls_port"
headers=$(curl --silent --show-error --max-time 10 --cacert "$certs/first.pem" -D - -o /dev/null "$tls_base/api/state")
echo "$headers" | grep -qi '^strict-transport-security: max-age=63072000' || fail "no HSTS over HTTPS: $headers"
echo "$headers" | grep -qi '^set-cookie: __Host-appshell_session=.*; Secure' || fail "the cookie is not __Host- and Secure: $headers"
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$tls_port/healthz")" != 200 ] \
    || fail "plain HTTP was answered on the HTTPS port"
serial() {
    openssl s_client -connect "127.0.0.1:$tls_port" </dev/null 2>/dev/null | openssl x509 -noout -serial
}
[ "$(serial)" = "$(openssl x509 -in "$certs/first.pem" -noout -serial)" ] || fail "not the first certificate"
# Renewed on the volume, then SIGHUP (podman kill --signal HUP, as the Deploying article's deploy hook does).
cp "$certs/second.pem" "$certs/server.pem"
cp "$certs/second.key" "$certs/server.key"
podman kill --signal HUP "$tls" >/dev/null
want=$(openssl x509 -in "$certs/second.pem" -noout -serial)
wait_for 10 "after SIGHUP, the new certificate for new connections" \
    bash -c "[ \"\$(openssl s_client -connect 127.0.0.1:$tls_port </dev/null 2>/dev/null | openssl x509 -noout -serial)\" = '$want' ]"
podman logs "$tls" 2>/dev/null | grep -q '"event":"certificate"' || fail "no certificate event in the log"
echo "$tls: HTTPS with HSTS and a __Host- cookie; reloaded on SIGHUP ($want)"
podman stop --time "$STOP_GRACE_SECONDS" "$tls" >/dev/null

step "hash-password in the image (how the Accounts article says to make a user)"
hash=$(printf 'a long passphrase' | run_image --rm -i --read-only --network none "$IMAGE" hash-password)
case "$hash" in '$argon2id$'*) echo "$hash" ;; *) fail "hash-password printed: $hash" ;; esac

printf '\nimage %s: %s MB; stop after SIGTERM: %ss\n' "$IMAGE" "$size_mb" "$stop_seconds"
