# Sourced by the check-corpus and bench scripts: where the analyzers' release binaries are.
#
#   analyzer_bin_dir analyze-gc-log gap-report        # prints the folder that holds them
#   analyzer_bin_dir analyze-protocol-log examples/make-bench-log   # an example too
#
# With KGAP_BIN_DIR set (scripts/test sets it to the binaries `cargo test --profile test-release
# --workspace` has just built for the integration tests; a bench's BENCH_BIN_DIR, to time
# another build), those are used as they are: a `cargo build -p kgap-analyzers` here resolves
# features without the dev-dependencies, so it built every analyzer again with LTO (~5 of CI's
# 33 minutes). Without it, the named binaries are built (quietly, release, with LTO as users
# build them) and their folder printed. A name `examples/X` is the example X, where cargo puts
# it (`<dir>/examples/X`).
analyzer_bin_dir() {
    local here root
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    if [ -n "${KGAP_BIN_DIR:-}" ]; then
        local b
        for b in "$@"; do
            if [ ! -x "$KGAP_BIN_DIR/$b" ]; then
                echo "no $b in $KGAP_BIN_DIR (build it there, or unset KGAP_BIN_DIR/BENCH_BIN_DIR)" >&2
                return 2
            fi
        done
        printf '%s\n' "$KGAP_BIN_DIR"
        return 0
    fi
    local args=() b
    for b in "$@"; do
        case $b in
            examples/*) args+=(--example "${b#examples/}") ;;
            *) args+=(--bin "$b") ;;
        esac
    done
    (cd "$root" && nice -n 10 cargo build --quiet --release -p kgap-analyzers "${args[@]}") >&2 || return 2
    printf '%s\n' "${CARGO_TARGET_DIR:-$root/target}/release"
}
