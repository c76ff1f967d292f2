# scripts/lib/kafka/fetch.sh: sourced by scripts/kafka. The broker's jars: fetched from Maven
# Central (scripts/kafka-pom.xml, through mvn) into the cache once, verified at every start;
# and check_tools, what a start needs before any JVM: the jars, python, java 17+.
# shellcheck shell=bash

# ---------------------------------------------------------------- jars

pom_hash() { sha256sum "$POM" | cut -d' ' -f1; }

libs_complete() {
    local jar
    [[ -r $LIBS/$COMPLETE ]] || return 1
    [[ $(head -n1 "$LIBS/$COMPLETE") == "$(pom_hash)" ]] || return 1
    while IFS= read -r jar; do
        [[ -s $LIBS/$jar ]] || return 1
    done < <(tail -n +2 "$LIBS/$COMPLETE")
    [[ $(tail -n +2 "$LIBS/$COMPLETE" | wc -l) -gt 10 ]]
}

fetch_libs() {
    if libs_complete; then return 0; fi
    command -v "$MVN" >/dev/null || die "jars not cached in $LIBS and '$MVN' not found (apt-get install maven)"
    local t0 stage mlog n
    t0=$(now)
    mkdir -p "$KAFKA_HOME"
    stage=$(mktemp -d "$KAFKA_HOME/libs.tmp.XXXXXX")
    mlog=$KAFKA_HOME/maven.log
    # Run from a copy in the cache so maven never writes into the repo.
    cp "$POM" "$stage/pom.xml"
    say "fetching Apache Kafka $KAFKA_VERSION jars from Maven Central into $LIBS (not cached yet)"
    if ! "$MVN" -B -q --strict-checksums -f "$stage/pom.xml" \
            dependency:copy-dependencies -DincludeScope=runtime \
            -DoutputDirectory="$stage/jars" >"$mlog" 2>&1; then
        tail -n 30 "$mlog" >&2
        rm -rf "$stage"
        die "maven could not fetch the jars (full log: $mlog)"
    fi
    n=$(find "$stage/jars" -maxdepth 1 -name '*.jar' | wc -l)
    [[ -s $stage/jars/kafka_2.13-$KAFKA_VERSION.jar && $n -gt 10 ]] ||
        die "maven finished but $stage/jars has only $n jars; see $mlog"
    { pom_hash; (cd "$stage/jars" && ls -1 -- *.jar); } >"$stage/jars/$COMPLETE"
    rm -rf "$LIBS"
    mv "$stage/jars" "$LIBS"
    rm -rf "$stage"
    say "fetched $n jars ($(du -sh "$LIBS" | cut -f1)) in $(since "$t0") s"
}

# Everything before the JVMs that cannot fail half-way: jars, python, java 17+.
check_tools() {
    fetch_libs
    command -v "$PYTHON" >/dev/null || die "'$PYTHON' not found (needed for scripts/kafka-ping.py)"
    command -v "$JAVA" >/dev/null || die "java not found; install a JDK 17+ or set KGAP_KAFKA_JAVA"
    JAVA_MAJOR=$(java_major)
    [[ $JAVA_MAJOR =~ ^[0-9]+$ && $JAVA_MAJOR -ge 17 ]] ||
        die "Kafka $KAFKA_VERSION needs Java 17+, $JAVA is '${JAVA_MAJOR:-?}'"
}
