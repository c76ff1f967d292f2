# scripts/lib/kafka/single.sh: sourced by scripts/kafka. The single broker (up without
# --nodes, or --nodes 1): starting it (single_up) and the lines that say where it is
# (print_where). Its down, status and bootstrap are in commands.sh.
# shellcheck shell=bash

print_where() {
    local pid=$1
    say "bootstrap   $HOST:$PORT   (probes: --brokers $HOST:$PORT)"
    say "pid         $pid   (java $(info_get java_version), heap $(info_get heap))"
    say "cpus        $(taskset -cp "$pid" 2>/dev/null | sed 's/.*: //' || echo '?')   (pinned with up --cpus: $(info_get cpus || echo all))"
    local data
    data=$(info_get data)
    say "data dir    $data ($(stat -f -c %T "$data" 2>/dev/null || echo '?'), $(du -sh "$data" 2>/dev/null | cut -f1) used, $(df -h --output=avail "$data" 2>/dev/null | tail -n1 | tr -d ' ') free)"
    say "broker log  $LOG"
    say "config      $PROPS"
    print_security "$HOST:$PORT"
}

# The single broker: unchanged since before --nodes (ports, paths and output are relied on).
single_up() {
    local pid t0 data cid jvm_opts=() cpus=$CPUS
    check_env
    lock
    if (($(cluster_nodes) > 1)) && [[ -n $(running_nodes) ]]; then
        die "a $(cluster_nodes)-node cluster is up with state $STATE; 'scripts/kafka down' first"
    fi
    if pid=$(running_pid); then
        say "already up"
        print_where "$pid"
        return 0
    fi
    if [[ -e $PID_FILE ]]; then
        say "removing stale pid file (pid $(<"$PID_FILE") is not our broker)"
        rm -f "$PID_FILE"
    fi
    t0=$(now)
    check_tools
    port_busy "$HOST" "$PORT" && die "$HOST:$PORT is already taken by another process; set KGAP_KAFKA_PORT"
    port_busy "$HOST" "$CONTROLLER_PORT" &&
        die "$HOST:$CONTROLLER_PORT (controller) is already taken; set KGAP_KAFKA_CONTROLLER_PORT"
    if [[ $SECURITY != plaintext ]]; then
        port_busy "$HOST" $((PORT + 2)) && die "$HOST:$((PORT + 2)) (the internal listener) is already taken"
        make_secrets
    fi

    local old_data
    data=${KGAP_KAFKA_DATA:-$(data_dir_default)}
    while IFS= read -r old_data; do
        if [[ $old_data != "$data" ]]; then remove_data "$old_data"; fi
    done < <(info_data_dirs)
    prepare_data "$data"
    write_config "$data" "$PROPS" 1 "controller.quorum.bootstrap.servers=$HOST:$CONTROLLER_PORT" 1 \
        "$PORT" "$CONTROLLER_PORT"
    write_log4j
    cid=$(new_cluster_id)
    [[ -e $LOG ]] && mv -f "$LOG" "$LOG.1"

    local scram=()
    scram_args scram
    # A short-lived JVM: C1 only and serial GC make it start ~0.8 s faster.
    if ! "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j2.configurationFile="$STATE/log4j2.properties" \
            -cp "$LIBS/*" kafka.tools.StorageTool format --standalone "${scram[@]}" \
            -t "$cid" -c "$PROPS" >"$STATE/format.log" 2>&1; then
        tail -n 30 "$STATE/format.log" >&2
        remove_data "$data"
        die "formatting $data failed (log: $STATE/format.log)"
    fi

    broker_jvm_opts jvm_opts "$STATE/kafka-gc.log"
    {
        echo "bootstrap=$HOST:$PORT"
        echo "controller=$HOST:$CONTROLLER_PORT"
        echo "data=$data"
        echo "cluster_id=$cid"
        echo "heap=$HEAP"
        echo "java=$JAVA"
        echo "java_version=$JAVA_MAJOR"
        echo "cpus=${cpus:-all}"
        echo "security=$SECURITY"
        if [[ $SECURITY != plaintext ]]; then echo "ping_port=$((PORT + 2))"; fi
        echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    } >"$INFO"

    # setsid: its own session, so a closing terminal or Ctrl-C in the caller does not reach it.
    # The inner sh writes its own pid and then becomes java, so the pid file is exact
    # (and is_ours() already matches in the instant before exec: sh's argv holds java's).
    # 9>&- : the broker must not inherit (and hold forever) our lock.
    # shellcheck disable=SC2016  # $$ and $@ belong to the inner sh
    setsid sh -c 'echo $$ >"$1"; shift; exec "$@"' kgap-kafka "$PID_FILE" \
        "${PIN[@]}" "$JAVA" "${jvm_opts[@]}" -cp "$LIBS/*" kafka.Kafka "$PROPS" \
        </dev/null >"$LOG" 2>&1 9>&- &

    local deadline=$((SECONDS + START_WAIT)) launched=$!
    pid=
    while :; do
        if [[ -z $pid && -s $PID_FILE ]]; then pid=$(<"$PID_FILE"); fi
        if [[ -n $pid ]] && ! is_ours "$pid"; then
            tail -n 40 "$LOG" >&2 || true
            rm -f "$PID_FILE"
            remove_data "$data"
            die "the broker exited during startup (log above; full log: $LOG)"
        fi
        if [[ -z $pid ]] && ! kill -0 "$launched" 2>/dev/null; then
            tail -n 40 "$LOG" >&2 || true
            remove_data "$data"
            die "the broker could not be launched (full log: $LOG)"
        fi
        if [[ -n $pid ]] && ping_broker --quiet --timeout 1; then break; fi
        if ((SECONDS >= deadline)); then
            tail -n 40 "$LOG" >&2 || true
            [[ -n $pid ]] && stop_pid "$pid" >/dev/null
            wait "$launched" 2>/dev/null || true
            rm -f "$PID_FILE"
            remove_data "$data"
            die "no Metadata answer from $HOST:$PORT within $START_WAIT s; stopped it (log: $LOG)"
        fi
        sleep 0.5
    done
    say "up in $(since "$t0") s: $(ping_broker)"
    print_where "$pid"
}
