# scripts/lib/kafka/config.sh: sourced by scripts/kafka. What a node is started with, the same
# for the single broker and a cluster's nodes: its data dir (made, emptied, and removed only
# with our marker in it), server.properties, log4j2.properties, a new cluster id, the cpu
# list of --cpus, the JVM options. The listeners and --security: security.sh.
# shellcheck shell=bash

# ---------------------------------------------------------------- config

data_dir_default() {
    if [[ -d /dev/shm && -w /dev/shm && $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
        printf '/dev/shm/kgap-kafka-%s\n' "$PORT"
    else
        printf '%s/kgap-kafka-data-%s\n' "${TMPDIR:-/tmp}" "$PORT"
    fi
}

# Creates (or empties, if we made it before) the log dir.
prepare_data() {
    local dir=$1
    case $dir in /|/root|/home|/tmp|/dev/shm|"${HOME:-/root}") die "refusing data dir $dir" ;; esac
    if [[ -e $dir ]]; then
        if [[ -f $dir/$DATA_MARK ]]; then
            find "$dir" -mindepth 1 -maxdepth 1 ! -name "$DATA_MARK" -exec rm -rf {} +
        elif [[ -d $dir && -z $(ls -A "$dir") ]]; then
            :
        else
            die "data dir $dir exists and was not made by scripts/kafka; pick another KGAP_KAFKA_DATA"
        fi
    fi
    mkdir -p "$dir"
    : >"$dir/$DATA_MARK"
}

remove_data() {
    local dir=$1
    [[ -n $dir && -d $dir ]] || return 0
    if [[ ${KGAP_KAFKA_KEEP_DATA:-0} == 1 ]]; then say "kept data dir $dir"; return 0; fi
    if [[ -f $dir/$DATA_MARK ]]; then rm -rf "$dir" && say "removed data dir $dir"
    else say "left $dir alone (no $DATA_MARK marker)"; fi
}

# write_config DATA PROPS NODE_ID QUORUM RF PORT CONTROLLER_PORT [EXTRA]: one node's
# server.properties. QUORUM is the line naming the controllers; RF the internal topics'
# replication factor; EXTRA more lines (a cluster's), before KGAP_KAFKA_PROPS.
write_config() {
    local data=$1 props_file=$2 node=$3 quorum=$4 rf=$5 port=$6 cport=$7 extra=${8:-} kv props=()
    cat >"$props_file" <<EOF
# Written by scripts/kafka; rewritten at every 'up'. Why each value: docs/broker.md.
process.roles=broker,controller
node.id=$node
$quorum
$(listener_config "$port" "$cport")
log.dirs=$data

num.network.threads=$NETWORK_THREADS
num.io.threads=$IO_THREADS

message.max.bytes=10485760
replica.fetch.max.bytes=10485760
socket.request.max.bytes=104857600

num.partitions=1
default.replication.factor=1
auto.create.topics.enable=false
delete.topic.enable=true
log.segment.delete.delay.ms=0
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
    if [[ -n $extra ]]; then printf '%s\n' "$extra" >>"$props_file"; fi
    if [[ -n ${KGAP_KAFKA_PROPS:-} ]]; then
        echo "# KGAP_KAFKA_PROPS (later lines win)" >>"$props_file"
        read -r -a props <<<"$KGAP_KAFKA_PROPS"
        for kv in "${props[@]}"; do
            [[ $kv == *=* ]] || die "KGAP_KAFKA_PROPS: '$kv' is not key=value"
            printf '%s\n' "$kv" >>"$props_file"
        done
    fi
}

write_log4j() {
    cat >"$STATE/log4j2.properties" <<'EOF'
# Broker log to stdout (scripts/kafka sends it to kafka.log).
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
}

new_cluster_id() {
    # 16 random bytes, URL-safe base64 without padding (Kafka's Uuid text form);
    # avoid a leading '-' that the argument parser would take for an option.
    local id
    while :; do
        id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
        [[ $id == -* ]] || break
    done
    printf '%s\n' "$id"
}

# A cpu list as taskset takes it (0, 1, 0-1, 1,3), each cpu on this machine.
check_cpus() {
    local list=$1 part a b cores
    cores=$(nproc --all)
    [[ -n $list ]] || bad "--cpus needs a list (e.g. 0 or 0-1)"
    IFS=, read -r -a parts <<<"$list"
    [[ $list != *,,* && $list != ,* && $list != *, ]] || bad "--cpus $list: empty item"
    for part in "${parts[@]}"; do
        if [[ $part =~ ^([0-9]+)(-([0-9]+))?$ ]]; then
            a=${BASH_REMATCH[1]}; b=${BASH_REMATCH[3]:-$a}
            ((a <= b)) || bad "--cpus $list: $part is not a range"
            ((b < cores)) || bad "--cpus $list: cpu $b does not exist (this machine has cpus 0-$((cores - 1)))"
        else
            bad "--cpus $list: bad item '$part' (e.g. 0 or 0-1,3)"
        fi
    done
}

# Fills the array named $1 with a broker JVM's options: GC log at $2; $3 the node id of a
# cluster's node (none for the single broker), which is_ours() then looks for.
broker_jvm_opts() {
    local -n out=$1
    out=(
        "-Xms$HEAP" "-Xmx$HEAP"
        -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
        -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true
        "-Xlog:gc*:file=$2:time,uptime,level,tags:filecount=2,filesize=20M"
        "-Dlog4j2.configurationFile=$STATE/log4j2.properties"
        "-Dkgap.kafka.state=$STATE"
    )
    if [[ -n ${3:-} ]]; then out+=("-Dkgap.kafka.node=$3"); fi
    local extra=()
    if [[ -n ${KGAP_KAFKA_JVM_OPTS:-} ]]; then read -r -a extra <<<"$KGAP_KAFKA_JVM_OPTS"; fi
    out+=("${extra[@]}")
}
