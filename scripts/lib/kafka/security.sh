# scripts/lib/kafka/security.sh: sourced by scripts/kafka. up --security: a node's listeners
# for each protocol, the throwaway CA, broker certificate and SCRAM user (kgap) made under
# the state dir, the SCRAM credentials given to the format step, and what a client needs
# (client-args, and the lines status prints).
# shellcheck shell=bash

# The listeners of the node at port $1 (controller $2): PLAINTEXT on the port; with
# --security the client listener there speaks that protocol, and the brokers talk to each
# other (and kafka-ping to them) on a plaintext INTERNAL listener on port+2, loopback only.
listener_config() {
    local port=$1 cport=$2
    if [[ $SECURITY == plaintext ]]; then
        cat <<EOF
listeners=PLAINTEXT://$HOST:$port,CONTROLLER://$HOST:$cport
advertised.listeners=PLAINTEXT://$HOST:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
EOF
        return
    fi
    local proto=${SECURITY^^} internal=$((port + 2)) pw
    cat <<EOF
listeners=CLIENT://$HOST:$port,INTERNAL://$HOST:$internal,CONTROLLER://$HOST:$cport
advertised.listeners=CLIENT://$HOST:$port,INTERNAL://$HOST:$internal
controller.listener.names=CONTROLLER
inter.broker.listener.name=INTERNAL
listener.security.protocol.map=CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,CLIENT:$proto
EOF
    if [[ $SECURITY == *ssl ]]; then
        cat <<EOF
listener.name.client.ssl.keystore.type=PEM
listener.name.client.ssl.keystore.location=$SECRETS/broker-keystore.pem
listener.name.client.ssl.truststore.type=PEM
listener.name.client.ssl.truststore.location=$SECRETS/ca.pem
EOF
    fi
    if [[ $SECURITY == sasl_* ]]; then
        pw=$(<"$SECRETS/password")
        cat <<EOF
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.client.sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.client.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.client.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.client.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$pw";
EOF
    fi
}

readonly SASL_USER=kgap

# A throwaway CA and broker certificate (openssl), and a random password for the SASL user,
# made anew at every secured 'up' under the state dir. Nothing of it outlives 'down'.
make_secrets() {
    command -v openssl >/dev/null || die "--security $SECURITY needs openssl"
    [[ -n $SECRETS && $SECRETS == "$STATE"/* ]] || die "bad secrets dir '$SECRETS'"
    rm -rf "$SECRETS"
    mkdir -p "$SECRETS"
    chmod 700 "$SECRETS"
    (
        cd "$SECRETS" || exit 1
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
            -subj "/CN=kgap throwaway CA" >/dev/null 2>&1 &&
        openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr \
            -subj "/CN=$HOST" >/dev/null 2>&1 &&
        printf 'subjectAltName=IP:%s,IP:127.0.0.1,DNS:localhost\n' "$HOST" >san.ext &&
        openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
            -out broker.pem -days 2 -extfile san.ext >/dev/null 2>&1 &&
        openssl pkcs8 -topk8 -nocrypt -in broker.key -out broker-pkcs8.key &&
        # Kafka's PEM keystore: the private key (PKCS#8, unencrypted), then the chain.
        cat broker-pkcs8.key broker.pem ca.pem >broker-keystore.pem &&
        head -c 18 /dev/urandom | base64 | tr '+/' 'xy' | tr -d '=\n' >password &&
        rm -f broker.csr san.ext ca.srl
    ) || die "making the throwaway certificates failed (in $SECRETS)"
}

# The settings a client needs to reach the secured broker, one argument a line: -X for
# librdkafka (the probes), -J for kafka-clients (the Java side). Reads the password file, so
# use it as: mapfile -t args < <(scripts/kafka client-args); probe-… "${args[@]}".
client_args() {
    local java=$1 proto=${SECURITY^^} pw flag=-X
    [[ $SECURITY == plaintext ]] && return 0
    ((java)) && flag=-J
    printf '%s\n' "$flag" "security.protocol=$proto"
    if [[ $SECURITY == *ssl ]]; then
        if ((java)); then
            printf '%s\n' -J ssl.truststore.type=PEM -J "ssl.truststore.location=$SECRETS/ca.pem"
        else
            printf '%s\n' -X "ssl.ca.location=$SECRETS/ca.pem"
        fi
    fi
    if [[ $SECURITY == sasl_* ]]; then
        pw=$(<"$SECRETS/password")
        printf '%s\n' "$flag" "sasl.mechanism=SCRAM-SHA-512"
        if ((java)); then
            printf '%s\n' -J "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"$SASL_USER\" password=\"$pw\";"
        else
            printf '%s\n' -X "sasl.username=$SASL_USER" -X "sasl.password=$pw"
        fi
    fi
}

# What a client needs for a secured broker (or cluster, bootstrap $1); nothing for plaintext.
print_security() {
    local bootstrap=$1 sec
    sec=$(info_get security || true)
    if [[ -n $sec && $sec != plaintext ]]; then
        SECURITY=$sec
        say "security    ${sec^^} on $bootstrap (user $SASL_USER; its password and the CA in $SECRETS)"
        say "  probes:   $(client_args 0 | grep -v '^-X$' | sed 's/^sasl.password=.*/sasl.password=<in security\/password>/; s/^/-X /' | paste -sd' ')"
        say "  java:     $(client_args 1 | grep -v '^-J$' | sed 's/password="[^"]*"/password="<in security\/password>"/; s/^/-J /' | paste -sd' ')"
        say "  as args:  mapfile -t X < <(scripts/kafka client-args); probe-… --brokers $bootstrap \"\${X[@]}\""
    fi
}

# The SASL user's SCRAM credentials go into the metadata log at format time (KRaft):
# fills the array named $1 with StorageTool's --add-scram arguments (none without SASL).
scram_args() {
    local -n out=$1
    local pw
    out=()
    [[ $SECURITY == sasl_* ]] || return 0
    pw=$(<"$SECRETS/password")
    out=(--add-scram "SCRAM-SHA-256=[name=$SASL_USER,password=$pw]"
         --add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$pw]")
}
