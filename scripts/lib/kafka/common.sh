# scripts/lib/kafka/common.sh: sourced by scripts/kafka. What every job of it uses: messages
# and exit codes (say, die, bad), the settings' checks, whether a pid is our broker (is_ours,
# running_pid), a port in use, kafka-ping, the java version, kafka.info, the lock, and
# stopping a pid (stop_pid, reaped). The settings themselves (PORT, STATE, …) are read in
# scripts/kafka.
# shellcheck shell=bash

# A reader gone (down | head -1) must not stop 'down' half-way: say ignores write errors.
say() { printf '%s: %s\n' "$PROG" "$*" 2>/dev/null || true; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
bad() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 2; }   # bad settings or usage
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------- checks

check_env() {
    local n
    [[ $PORT =~ ^[1-9][0-9]{0,4}$ && $PORT -le 65535 ]] || bad "KGAP_KAFKA_PORT=$PORT is not a port"
    [[ $CONTROLLER_PORT =~ ^[1-9][0-9]{0,4}$ && $CONTROLLER_PORT -le 65535 ]] ||
        bad "KGAP_KAFKA_CONTROLLER_PORT=$CONTROLLER_PORT is not a port"
    [[ $PORT != "$CONTROLLER_PORT" ]] || bad "broker and controller ports are both $PORT"
    # A test broker: it must never be reachable from outside this machine.
    [[ $HOST =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
        bad "KGAP_KAFKA_HOST=$HOST: only loopback addresses (127.x.y.z) are allowed"
    [[ $HEAP =~ ^[0-9]+[kKmMgG]?$ ]] || bad "KGAP_KAFKA_HEAP=$HEAP is not a JVM size (e.g. 1g, 1536m)"
    for n in "$NETWORK_THREADS" "$IO_THREADS" "$START_WAIT" "$STOP_WAIT"; do
        [[ $n =~ ^[1-9][0-9]{0,5}$ ]] || bad "'$n' in KGAP_KAFKA_* settings is not a positive integer"
    done
}

# Is $1 our broker: alive, not a zombie, and running kafka.Kafka with our state dir, and
# node $2's id (-Dkgap.kafka.node) for a cluster's node, none for the single broker?
is_ours() {
    local pid=$1 node=${2:-} args
    [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
    args=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline") || return 1
    grep -qFx 'kafka.Kafka' <<<"$args" && grep -qFx -- "-Dkgap.kafka.state=$STATE" <<<"$args" ||
        return 1
    if [[ -n $node ]]; then grep -qFx -- "-Dkgap.kafka.node=$node" <<<"$args"
    else ! grep -q -- '^-Dkgap\.kafka\.node=' <<<"$args"; fi
}

# Prints the pid of our running broker, or fails.
running_pid() {
    local pid
    [[ -s $PID_FILE ]] || return 1
    pid=$(<"$PID_FILE")
    is_ours "$pid" || return 1
    printf '%s\n' "$pid"
}

port_busy() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# kafka-ping speaks plain TCP: with a secured client listener it asks the internal one.
ping_port() { local p; p=$(info_get ping_port 2>/dev/null || true); printf '%s' "${p:-$PORT}"; }
ping_broker() { "$PYTHON" "$PING" --bootstrap "$HOST:$(ping_port)" --expect-node 1 "$@"; }

java_major() {
    local v
    v=$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9.]*\).*/\1/p' | head -n1)
    v=${v#1.}
    printf '%s\n' "${v%%.*}"
}

info_get() { [[ -r $INFO ]] && sed -n "s/^$1=//p" "$INFO" | head -n1; }

lock() {
    mkdir -p "$STATE"
    exec 9>"$STATE/lock"
    if command -v flock >/dev/null; then
        flock -w 120 9 || die "another scripts/kafka is busy with $STATE (lock held 120 s)"
    fi
}

# SIGTERM, wait up to STOP_WAIT s, then SIGKILL. Only for a pid is_ours() vouched for.
stop_pid() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < STOP_WAIT * 10; i++)); do
        is_ours "$pid" || return 0
        sleep 0.1
    done
    say "pid $pid still running after ${STOP_WAIT} s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        is_ours "$pid" || return 0
        sleep 0.1
    done
    die "pid $pid survived SIGKILL"
}

# The broker is not our child: once it exits, init reaps it. Give that a moment so
# that 'ps' right after 'down' shows no <defunct> java (a zombie holds no memory or port).
reaped() {
    local i
    for ((i = 0; i < 30; i++)); do
        [[ -e /proc/$1 ]] || return 0
        sleep 0.1
    done
}
