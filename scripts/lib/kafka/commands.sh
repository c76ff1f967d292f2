# scripts/lib/kafka/commands.sh: sourced by scripts/kafka. The commands up, down, status,
# bootstrap and logs (main, in scripts/kafka, calls them): each reads its options, then does
# the single broker's part itself (down, status, bootstrap, logs) or hands over to single.sh
# or cluster.sh (up; a cluster's down, status and bootstrap list).
# shellcheck shell=bash

# ---------------------------------------------------------------- commands

cmd_up() {
    local cpus=${KGAP_KAFKA_CPUS:-} warm=0
    while (($#)); do
        case $1 in
            --warm) warm=1; shift ;;
            --nodes) (($# >= 2)) || bad "--nodes needs a number (1-$MAX_NODES)"; NODES=$2; shift 2 ;;
            --nodes=*) NODES=${1#--nodes=}; shift ;;
            --cpus) (($# >= 2)) || bad "--cpus needs a list (e.g. 0 or 0-1)"; cpus=$2; shift 2 ;;
            --cpus=*) cpus=${1#--cpus=}; shift ;;
            --security) (($# >= 2)) || bad "--security needs plaintext, ssl, sasl_plaintext or sasl_ssl"; SECURITY=$2; shift 2 ;;
            --security=*) SECURITY=${1#--security=}; shift ;;
            *) bad "up: unknown option '$1' (see scripts/kafka help)" ;;
        esac
    done
    [[ $NODES =~ ^[0-9]+$ ]] || bad "--nodes $NODES: give a number of nodes, 1 to $MAX_NODES"
    ((10#$NODES >= 1 && 10#$NODES <= MAX_NODES)) ||
        bad "--nodes $NODES: give 1 to $MAX_NODES nodes (each is a JVM on this machine)"
    NODES=$((10#$NODES))
    case $SECURITY in
        plaintext | ssl | sasl_plaintext | sasl_ssl) ;;
        *) bad "--security $SECURITY: give plaintext, ssl, sasl_plaintext or sasl_ssl" ;;
    esac
    if [[ -n $cpus ]]; then
        check_cpus "$cpus"
        command -v taskset >/dev/null || die "--cpus needs taskset (util-linux)"
        PIN=(taskset -c "$cpus")
    fi
    CPUS=$cpus
    if ((NODES > 1)); then cluster_up; else single_up; fi
    if ((warm)); then cmd_warm; fi
}

# warm [--rounds N]: load the running broker (or cluster) until its JIT has settled
# (BrokerWarmup.java says why). Each round uses a topic of its own, deleted at its end.
cmd_warm() {
    local rounds=${KGAP_KAFKA_WARM_ROUNDS:-15} pids=() i pid bootstrap t0 args=()
    while (($#)); do
        case $1 in
            --rounds) (($# >= 2)) || bad "--rounds needs a number"; rounds=$2; shift 2 ;;
            --rounds=*) rounds=${1#--rounds=}; shift ;;
            *) bad "warm: unknown option '$1' (see scripts/kafka help)" ;;
        esac
    done
    [[ $rounds =~ ^[1-9][0-9]{0,2}$ ]] || bad "--rounds $rounds: give a number of rounds, 1 to 999"
    check_env
    if (($(cluster_nodes) > 1)); then
        for i in $(running_nodes); do pids+=("$(running_node_pid "$i")"); done
        ((${#pids[@]})) || die "not running ($(cluster_bootstrap "$(cluster_nodes)"))"
        bootstrap=$(cluster_bootstrap "$(cluster_nodes)")
    else
        pid=$(running_pid) || die "not running ($HOST:$PORT)"
        pids=("$pid")
        bootstrap=$HOST:$PORT
    fi
    SECURITY=$(info_get security || echo plaintext)
    # client_args --java prints "-J key=value" pairs: the program takes the key=values.
    while IFS= read -r i; do [[ $i == -J ]] || args+=("$i"); done < <(client_args 1)
    t0=$(now)
    say "warming $bootstrap: rounds of 16 KB and 1 MB batches and a fetch, until its compiler threads settle"
    (IFS=,; "$JAVA" -Xmx256m -cp "$LIBS/*" "$KAFKA_LIB/BrokerWarmup.java" \
        "$bootstrap" "${pids[*]}" "$rounds" "$(getconf CLK_TCK)" "${args[@]}") |
        while IFS= read -r i; do say "warm: $i"; done
    ((PIPESTATUS[0] == 0)) || die "warm-up failed (see above)"
    say "warm-up took $(since "$t0") s"
}

cmd_down() {
    local pid t0 data
    check_env
    trap '' PIPE
    lock
    if (($(cluster_nodes) > 1)); then cluster_down; return; fi
    data=$(info_get data || true)
    if ! pid=$(running_pid); then
        if [[ -e $PID_FILE ]]; then
            say "stale pid file (pid $(<"$PID_FILE") is not our broker); removing it"
            rm -f "$PID_FILE"
        fi
        remove_data "$data"
        say "not running ($HOST:$PORT, state $STATE)"
        return 0
    fi
    t0=$(now)
    stop_pid "$pid"
    reaped "$pid"
    rm -f "$PID_FILE"
    say "stopped pid $pid in $(since "$t0") s (log kept: $LOG)"
    remove_data "$data"
    rm -rf "$SECRETS"
}

cmd_status() {
    local pid started
    check_env
    if (($(cluster_nodes) > 1)); then cluster_status; return; fi
    if ! pid=$(running_pid); then
        say "down ($HOST:$PORT, state $STATE)"
        return 3
    fi
    started=$(info_get started)
    if ping_broker --quiet --timeout 2; then
        say "up since $started: $(ping_broker --topics | head -n 20)"
        print_where "$pid"
        return 0
    fi
    say "running (pid $pid, since $started) but not answering Metadata on $HOST:$PORT"
    print_where "$pid"
    return 1
}

cmd_bootstrap() {
    check_env
    if (($(cluster_nodes) > 1)); then
        [[ -n $(running_nodes) ]] || return 3
        cluster_bootstrap "$(cluster_nodes)"
        echo
        return 0
    fi
    running_pid >/dev/null || return 3
    printf '%s:%s\n' "$HOST" "$PORT"
}

cmd_logs() {
    local follow=0 n=100 node= nodes i logs=()
    while (($#)); do
        case $1 in
            -f|--follow) follow=1 ;;
            -n) [[ ${2:-} =~ ^[0-9]+$ ]] || bad "logs -n needs a number"; n=$2; shift ;;
            --node) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || bad "logs --node needs a node id (1, 2, …)"; node=$2; shift ;;
            --node=*) node=${1#--node=}; [[ $node =~ ^[1-9][0-9]*$ ]] || bad "logs --node needs a node id (1, 2, …)" ;;
            *) bad "logs: unknown option '$1' (try: logs -f, logs -n 200, logs --node 2)" ;;
        esac
        shift
    done
    nodes=$(cluster_nodes)
    if ((nodes > 1)); then
        [[ -z $node ]] || ((node <= nodes)) || bad "logs --node $node: the cluster has nodes 1-$nodes"
        for ((i = 1; i <= nodes; i++)); do
            [[ -z $node || $node == "$i" ]] && logs+=("$(node_dir "$i")/kafka.log")
        done
    else
        [[ -z $node || $node == 1 ]] || bad "logs --node $node: the broker at $HOST:$PORT is a single node (1)"
        logs=("$LOG")
    fi
    for i in "${logs[@]}"; do
        [[ -e $i ]] || die "no broker log at $i (never started with KGAP_STATE=$STATE?)"
    done
    # tail names each file above its lines when there are several (==> …/node2/kafka.log <==).
    if ((follow)); then exec tail -n "$n" -F "${logs[@]}"; fi
    tail -n "$n" "${logs[@]}"
}
