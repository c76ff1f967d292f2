# scripts/lib/kafka/cluster.sh: sourced by scripts/kafka. A cluster (up --nodes N, N > 1), one
# JVM per node: its layout (node ports, dirs, pids), stopping its nodes together, the
# class-data archive its nodes start from, and its up, status and down. The commands in
# commands.sh hand over to it when kafka.info says nodes=N.
# shellcheck shell=bash

# ---------------------------------------------------------------- clusters (up --nodes N)

# A cluster's layout: node i's files in $STATE/nodeI/ (pid, log, GC log, config, format
# log), its data in DATA-nodeI; kafka.info (shared) says nodes=N. The single broker's
# files stay where they always were.
cluster_nodes() { local n; n=$(info_get nodes 2>/dev/null || true); printf '%s' "${n:-1}"; }
node_port() { printf '%s' $((PORT + NODE_STEP * ($1 - 1))); }
node_dir() { printf '%s/node%s' "$STATE" "$1"; }
node_ping_port() {
    local p
    p=$(node_port "$1")
    [[ $(info_get security || echo plaintext) == plaintext ]] || p=$((p + 2))
    printf '%s' "$p"
}
ping_node() {
    "$PYTHON" "$PING" --bootstrap "$HOST:$(node_ping_port "$1")" --expect-node "$1" "${@:2}"
}

# Prints the pid of node $1 if it is running, else fails.
running_node_pid() {
    local f pid
    f=$(node_dir "$1")/kafka.pid
    [[ -s $f ]] || return 1
    pid=$(<"$f")
    is_ours "$pid" "$1" || return 1
    printf '%s\n' "$pid"
}

# The running nodes of the cluster in kafka.info, one id a line.
running_nodes() {
    local i n
    n=$(cluster_nodes)
    ((n > 1)) || return 0
    for ((i = 1; i <= n; i++)); do
        if running_node_pid "$i" >/dev/null; then echo "$i"; fi
    done
}

cluster_bootstrap() {
    local i n=$1 list=()
    for ((i = 1; i <= n; i++)); do list+=("$HOST:$(node_port "$i")"); done
    (IFS=,; printf '%s' "${list[*]}")
}

# Every data dir the last 'up' recorded (the single broker's, or each node's).
info_data_dirs() { [[ -r $INFO ]] && sed -n 's/^data[0-9]*=//p' "$INFO"; }

# A short span of node ids for paths: node{1..3}.
node_span() { printf 'node{1..%s}' "$1"; }

# SIGTERM every pid given as PID:NODE at once, so that every broker asks for its controlled
# shutdown while the quorum is there to grant it, then wait up to STOP_WAIT s for all and
# SIGKILL whoever is left (their node ids into KILLED). A broker that asks only after a
# majority of the nodes has gone can never be granted it and would wait minutes: once the
# quorum is gone, a survivor gets QUORUM_GONE_WAIT s (past raft's own 5 s for a leader
# with no one to hand over to), then SIGKILL.
readonly QUORUM_GONE_WAIT=10
KILLED=()
stop_nodes() {
    local item pid node alive i n majority lost_at= why
    n=$(cluster_nodes)
    majority=$((n / 2 + 1))
    KILLED=()
    for item; do kill -TERM "${item%%:*}" 2>/dev/null || true; done
    for ((i = 0; ; i++)); do
        # Alive: the given nodes still running (every other node of the cluster is down).
        alive=0
        for item; do is_ours "${item%%:*}" "${item#*:}" && alive=$((alive + 1)); done
        ((alive > 0)) || return 0
        if ((alive < majority)) && [[ -z $lost_at ]]; then lost_at=$SECONDS; fi
        if [[ -n $lost_at ]] && ((SECONDS - lost_at >= QUORUM_GONE_WAIT)); then
            why="still running $QUORUM_GONE_WAIT s after the quorum stopped (no controller to grant its controlled shutdown)"
            break
        fi
        if ((i >= STOP_WAIT * 10)); then why="still running after ${STOP_WAIT} s"; break; fi
        sleep 0.1
    done
    for item; do
        pid=${item%%:*} node=${item#*:}
        if is_ours "$pid" "$node"; then
            say "node $node (pid $pid) $why; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            KILLED+=("$node")
        fi
    done
    for ((i = 0; i < 100; i++)); do
        alive=0
        for item; do is_ours "${item%%:*}" "${item#*:}" && alive=$((alive + 1)); done
        ((alive > 0)) || return 0
        sleep 0.1
    done
    die "a node survived SIGKILL ($*)"
}

# Class data for the nodes' JVMs (AppCDS, a dynamic archive): a broker that maps Kafka's
# classes from it reaches "Kafka Server started" on about half the CPU (measured here: 2.8 s
# instead of 5.3 s), and N nodes starting at once on 2 cores are CPU-bound. One archive per
# java build and jar set (the key), made by a throwaway broker before the first cluster; the
# JVM also checks it against its own build and the jars, and runs without it if they differ.
# (Not made by a node of the cluster as it exits: -XX:ArchiveClassesAtExit slowed that node's
# shutdown by ~2 s, enough for it to find no quorum left for its controlled shutdown.)
cds_archive() {
    local key
    key=$({ "$JAVA" -version 2>&1; cat "$LIBS/$COMPLETE"; stat -c '%n %s %Y' "$LIBS"/*.jar; } |
        sha256sum | cut -c1-16)
    printf '%s/cds/broker-%s.jsa\n' "$KAFKA_HOME" "$key"
}

# make_cds ARCHIVE DATA PORT CONTROLLER_PORT: a plaintext single broker on those (free) ports,
# started with -XX:ArchiveClassesAtExit and stopped once it answers; its data dropped.
# Fails (leaving no archive) rather than stop the cluster's 'up'.
make_cds() {
    local archive=$1 data=$2 port=$3 cport=$4 dir=$STATE/cds t0 pid deadline jvm_opts=() ok=0
    t0=$(now)
    say "making a class-data archive for the nodes' JVMs (once per java build and jar set): $archive"
    mkdir -p "$dir" "${archive%/*}"
    rm -f "$archive.tmp"
    prepare_data "$data"
    (SECURITY=plaintext write_config "$data" "$dir/server.properties" 1 \
        "controller.quorum.bootstrap.servers=$HOST:$cport" 1 "$port" "$cport")
    if ! "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
            -Dlog4j2.configurationFile="$STATE/log4j2.properties" -cp "$LIBS/*" \
            kafka.tools.StorageTool format --standalone -t "$(new_cluster_id)" \
            -c "$dir/server.properties" >"$dir/format.log" 2>&1; then
        remove_data "$data" >/dev/null
        return 1
    fi
    broker_jvm_opts jvm_opts "$dir/kafka-gc.log" cds
    # Our child (not setsid): if 'up' is interrupted, so is it.
    "$JAVA" "-XX:ArchiveClassesAtExit=$archive.tmp" "${jvm_opts[@]}" -cp "$LIBS/*" kafka.Kafka \
        "$dir/server.properties" </dev/null >"$dir/kafka.log" 2>&1 9>&- &
    pid=$!
    deadline=$((SECONDS + START_WAIT))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
        if "$PYTHON" "$PING" --bootstrap "$HOST:$port" --expect-node 1 --quiet --timeout 1; then
            ok=1
            break
        fi
        sleep 0.5
    done
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    remove_data "$data" >/dev/null
    if ((ok)) && [[ -s $archive.tmp ]]; then
        mv -f "$archive.tmp" "$archive"
        say "archive made in $(since "$t0") s ($(du -h "$archive" | cut -f1))"
        return 0
    fi
    rm -f "$archive.tmp"
    return 1
}

cluster_up() {
    local n=$NODES i t0 cid p what nd rf quorum voters=() data_base started=() launched=() ready=()
    local jvm_opts=() scram=() pid left old_data
    [[ -z ${KGAP_KAFKA_CONTROLLER_PORT:-} ]] ||
        bad "KGAP_KAFKA_CONTROLLER_PORT is for one node; with --nodes, node i's controller is at PORT+10*(i-1)+1"
    HEAP=${KGAP_KAFKA_HEAP:-512m}
    check_env
    (($(node_port "$n") + 2 <= 65535)) ||
        bad "KGAP_KAFKA_PORT=$PORT: node $n would need port $(($(node_port "$n") + 2)), past 65535"
    lock
    if running_pid >/dev/null; then
        die "a single broker is up with state $STATE; 'scripts/kafka down' first"
    fi
    if [[ -n $(running_nodes) ]]; then
        if (($(cluster_nodes) == n)) && (($(running_nodes | wc -l) == n)); then
            say "already up"
            print_cluster
            return 0
        fi
        die "a $(cluster_nodes)-node cluster is up with state $STATE (nodes running: $(running_nodes | paste -sd, -)); 'scripts/kafka down' first"
    fi
    t0=$(now)
    check_tools
    # Every port of every node, before anything starts: a clear error, nothing to undo.
    for ((i = 1; i <= n; i++)); do
        p=$(node_port "$i")
        for what in "client:$p" "controller:$((p + 1))" "internal:$((p + 2))"; do
            [[ ${what%%:*} == internal && $SECURITY == plaintext ]] && continue
            port_busy "$HOST" "${what#*:}" &&
                die "$HOST:${what#*:} (node $i's ${what%%:*} port) is already taken by another process; set KGAP_KAFKA_PORT (node i uses PORT+10*(i-1) to +2)"
        done
        voters+=("$i@$HOST:$((p + 1))")
    done
    quorum="controller.quorum.voters=$(IFS=,; printf '%s' "${voters[*]}")"
    # The internal topics need as many live brokers as their replication factor.
    rf=$((n < 3 ? n : 3))
    # A broker is unfenced (serves clients) at its first heartbeat after it caught up with
    # the metadata log: every 500 ms rather than 2 s shortens each node's start.
    local cluster_props="# a cluster of $n nodes
broker.heartbeat.interval.ms=500"
    if [[ $SECURITY != plaintext ]]; then make_secrets; fi

    data_base=${KGAP_KAFKA_DATA:-$(data_dir_default)}
    while IFS= read -r old_data; do
        [[ $old_data =~ ^"$data_base"-node[1-$n]$ ]] || remove_data "$old_data"
    done < <(info_data_dirs)
    write_log4j
    local archive archive_used= cds=()
    archive=$(cds_archive)
    if [[ ${KGAP_KAFKA_CDS:-1} == 0 ]]; then
        :
    elif [[ -s $archive ]] || make_cds "$archive" "$data_base-cds" "$(node_port 1)" $(($(node_port 1) + 1)); then
        cds=("-XX:SharedArchiveFile=$archive") archive_used=$archive
    else
        say "could not make the class-data archive (log: $STATE/cds/kafka.log); the nodes start without it"
    fi
    for ((i = 1; i <= n; i++)); do
        nd=$(node_dir "$i")
        mkdir -p "$nd"
        rm -f "$nd/kafka.pid"
        prepare_data "$data_base-node$i"
        write_config "$data_base-node$i" "$nd/server.properties" "$i" "$quorum" "$rf" \
            "$(node_port "$i")" $(($(node_port "$i") + 1)) "$cluster_props"
        [[ -e $nd/kafka.log ]] && mv -f "$nd/kafka.log" "$nd/kafka.log.1"
    done
    cid=$(new_cluster_id)
    scram_args scram

    # All nodes' formats at once (each a short-lived JVM, C1 only, serial GC). A static
    # quorum (controller.quorum.voters) needs no --standalone / --initial-controllers.
    local fmt=()
    for ((i = 1; i <= n; i++)); do
        nd=$(node_dir "$i")
        "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "${cds[@]}" \
            -Dlog4j2.configurationFile="$STATE/log4j2.properties" \
            -cp "$LIBS/*" kafka.tools.StorageTool format "${scram[@]}" \
            -t "$cid" -c "$nd/server.properties" >"$nd/format.log" 2>&1 &
        fmt+=($!)
    done
    for ((i = 1; i <= n; i++)); do
        if ! wait "${fmt[i - 1]}"; then
            wait || true
            tail -n 30 "$(node_dir "$i")/format.log" >&2
            for ((p = 1; p <= n; p++)); do remove_data "$data_base-node$p"; done
            die "formatting node $i's $data_base-node$i failed (log: $(node_dir "$i")/format.log)"
        fi
    done

    {
        echo "nodes=$n"
        echo "bootstrap=$(cluster_bootstrap "$n")"
        echo "controller=${quorum#*=}"
        for ((i = 1; i <= n; i++)); do echo "data$i=$data_base-node$i"; done
        echo "cluster_id=$cid"
        echo "heap=$HEAP"
        echo "java=$JAVA"
        echo "java_version=$JAVA_MAJOR"
        echo "cpus=${CPUS:-all}"
        echo "security=$SECURITY"
        echo "cds=$archive_used"
        echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    } >"$INFO"

    # Every node at once, as single_up starts its broker (setsid, exact pid file, no lock fd).
    for ((i = 1; i <= n; i++)); do
        nd=$(node_dir "$i")
        broker_jvm_opts jvm_opts "$nd/kafka-gc.log" "$i"
        # shellcheck disable=SC2016  # $$ and $@ belong to the inner sh
        setsid sh -c 'echo $$ >"$1"; shift; exec "$@"' kgap-kafka "$nd/kafka.pid" \
            "${PIN[@]}" "$JAVA" "${cds[@]}" "${jvm_opts[@]}" -cp "$LIBS/*" kafka.Kafka "$nd/server.properties" \
            </dev/null >"$nd/kafka.log" 2>&1 9>&- &
        launched+=($!)
        started+=("")
        ready+=(0)
    done

    # Ready when every node answers Metadata listing node i at its own address and all n
    # brokers: the quorum has a leader and every broker has registered with it.
    local deadline=$((SECONDS + START_WAIT)) failed=
    while :; do
        left=0
        for ((i = 1; i <= n; i++)); do
            ((ready[i - 1])) && continue
            nd=$(node_dir "$i")
            if [[ -z ${started[i - 1]} && -s $nd/kafka.pid ]]; then started[i - 1]=$(<"$nd/kafka.pid"); fi
            pid=${started[i - 1]}
            if [[ -n $pid ]] && ! is_ours "$pid" "$i"; then
                failed="node $i exited during startup"; break
            fi
            if [[ -z $pid ]] && ! kill -0 "${launched[i - 1]}" 2>/dev/null; then
                failed="node $i could not be launched"; break
            fi
            if [[ -n $pid ]] && ping_node "$i" --expect-brokers "$n" --quiet --timeout 1; then
                ready[i - 1]=1
            else
                left=1
            fi
        done
        [[ -z $failed ]] || break
        ((left)) || break
        if ((SECONDS >= deadline)); then
            failed="not every node listed all $n brokers within $START_WAIT s (nodes ready: $(for ((i = 1; i <= n; i++)); do ((ready[i - 1])) && printf '%s ' "$i"; done))"
            break
        fi
        sleep 0.5
    done
    if [[ -n $failed ]]; then
        [[ $failed =~ ^node\ ([0-9]+) ]] && i=${BASH_REMATCH[1]} || i=1
        tail -n 40 "$(node_dir "$i")/kafka.log" >&2 || true
        local alive=()
        for ((p = 1; p <= n; p++)); do
            pid=${started[p - 1]}
            [[ -n $pid ]] && is_ours "$pid" "$p" && alive+=("$pid:$p")
        done
        ((${#alive[@]} == 0)) || stop_nodes "${alive[@]}" >/dev/null
        wait "${launched[@]}" 2>/dev/null || true
        for ((p = 1; p <= n; p++)); do
            rm -f "$(node_dir "$p")/kafka.pid"
            remove_data "$data_base-node$p"
        done
        die "$failed; stopped the cluster (log above: node $i's, $(node_dir "$i")/kafka.log)"
    fi
    say "up in $(since "$t0") s: $n nodes, $(cluster_headline "$(ping_node 1)")"
    # Every node has just answered: no need to ask them again.
    NODE_STATE=() NODE_PID=()
    for ((i = 1; i <= n; i++)); do NODE_STATE[i]=up NODE_PID[i]=${started[i - 1]}; done
    print_cluster
}

# "each lists brokers 1,2,3 (cluster X)", from one node's kafka-ping line. (Its controller=
# is no help here: under KRaft, Metadata names a random broker as the controller.)
cluster_headline() {
    local line=$1 ids
    ids=$(sed -n 's/.* brokers=\([^ ]*\) .*/\1/p' <<<"$line" | tr ',' '\n' | sed 's/@.*//' | paste -sd, -)
    printf 'each lists brokers %s (cluster %s)' "$ids" \
        "$(sed -n 's/.* cluster=\([^ ]*\) .*/\1/p' <<<"$line")"
}

# Each node's state into NODE_STATE/NODE_PID: up (answers Metadata), silent (running, no
# answer: stopped, hung or still starting) or down (not running).
declare -a NODE_STATE=() NODE_PID=()
probe_nodes() {
    local i n pid
    n=$(cluster_nodes)
    NODE_STATE=() NODE_PID=()
    for ((i = 1; i <= n; i++)); do
        if pid=$(running_node_pid "$i"); then
            NODE_PID[i]=$pid
            if ping_node "$i" --quiet --timeout 2; then NODE_STATE[i]=up; else NODE_STATE[i]=silent; fi
        else
            NODE_PID[i]=$( [[ -s $(node_dir "$i")/kafka.pid ]] && cat "$(node_dir "$i")/kafka.pid" || true)
            NODE_STATE[i]=down
        fi
    done
}

print_cluster() {
    local n i p nd data_base state what cpus
    n=$(cluster_nodes)
    ((${#NODE_STATE[@]} == n)) || probe_nodes
    say "bootstrap   $(cluster_bootstrap "$n")   (probes: --brokers with that list)"
    say "quorum      $(info_get controller)   (controller.quorum.voters)"
    local cds="no class-data archive"
    if [[ -n $(info_get cds) ]]; then cds="class data from ${KAFKA_HOME/#$HOME/\~}/cds/"; fi
    say "java        $(info_get java_version), heap $(info_get heap) per node, $cds"
    say "cpus        pinned with up --cpus: $(info_get cpus || echo all)"
    for ((i = 1; i <= n; i++)); do
        p=$(node_port "$i")
        state=${NODE_STATE[i]}
        case $state in
            up) what="pid ${NODE_PID[i]}" ;;
            silent) what="pid ${NODE_PID[i]}, not answering Metadata" ;;
            down) what="pid ${NODE_PID[i]:-?} is gone" ;;
        esac
        cpus=
        if [[ $state != down ]]; then
            cpus="   cpus $(taskset -cp "${NODE_PID[i]}" 2>/dev/null | sed 's/.*: //' || echo '?')"
        fi
        say "$(printf 'node %-6s %-6s %s:%s (controller %s)   %s%s' "$i" "$state" "$HOST" "$p" $((p + 1)) "$what" "$cpus")"
    done
    data_base=$(info_get data1)
    data_base=${data_base%-node1}
    say "data dirs   $data_base-$(node_span "$n") ($(stat -f -c %T "$data_base-node1" 2>/dev/null || echo '?'), $(du -sch "$data_base"-node* 2>/dev/null | tail -n1 | cut -f1) used, $(df -h --output=avail "$data_base-node1" 2>/dev/null | tail -n1 | tr -d ' ') free)"
    say "logs        $STATE/$(node_span "$n")/kafka.log   (scripts/kafka logs --node I)"
    say "configs     $STATE/$(node_span "$n")/server.properties"
    print_security "$(cluster_bootstrap "$n")"
}

cluster_status() {
    local n i up=0 running=0 first= started notes=()
    n=$(cluster_nodes)
    probe_nodes
    for ((i = 1; i <= n; i++)); do
        case ${NODE_STATE[i]} in
            up) up=$((up + 1)); running=$((running + 1)); [[ -n $first ]] || first=$i ;;
            silent) running=$((running + 1)); notes+=("node $i ($HOST:$(node_port "$i")) is not answering") ;;
            down) notes+=("node $i ($HOST:$(node_port "$i")) is down") ;;
        esac
    done
    if ((running == 0)); then
        say "down ($n nodes at $(cluster_bootstrap "$n"), state $STATE)"
        return 3
    fi
    started=$(info_get started)
    if ((up == n)); then
        say "up since $started: $n nodes, $(cluster_headline "$(ping_node "$first")")"
    else
        say "$up of $n nodes up since $started: $(printf '%s; ' "${notes[@]}" | sed 's/; $//')"
    fi
    # The topics (partitions led by each node) as the first answering node sees them.
    if [[ -n $first ]]; then
        ping_node "$first" --topics --leaders | tail -n +2 | head -n 20
    fi
    print_cluster
    ((up == n)) || return 1
}

cluster_down() {
    local n i pid t0 stopped=() gone=() f
    n=$(cluster_nodes)
    for ((i = 1; i <= n; i++)); do
        f=$(node_dir "$i")/kafka.pid
        if pid=$(running_node_pid "$i"); then
            stopped+=("$pid:$i")
        else
            if [[ -e $f ]]; then gone+=("node $i (pid $(<"$f"))"); rm -f "$f"; fi
        fi
    done
    if ((${#gone[@]})); then say "not running any more: ${gone[*]}"; fi
    if ((${#stopped[@]} == 0)); then
        while IFS= read -r f; do remove_data "$f"; done < <(info_data_dirs)
        rm -rf "$SECRETS"
        say "not running ($n nodes at $(cluster_bootstrap "$n"), state $STATE)"
        return 0
    fi
    t0=$(now)
    stop_nodes "${stopped[@]}"
    for f in "${stopped[@]}"; do reaped "${f%%:*}"; rm -f "$(node_dir "${f#*:}")/kafka.pid"; done
    say "stopped $(for f in "${stopped[@]}"; do printf 'node %s (pid %s), ' "${f#*:}" "${f%%:*}"; done | sed 's/, $//') in $(since "$t0") s (logs kept: $STATE/$(node_span "$n")/kafka.log)"
    while IFS= read -r f; do remove_data "$f"; done < <(info_data_dirs)
    rm -rf "$SECRETS"
}
