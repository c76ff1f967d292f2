# compare-builds.sh: run one tool's argument list in two builds and compare what each left:
# stdout, stderr (the binary's path neutralised by running both from the same root), the exit
# status, and the files the run wrote. Sourced by scripts/check-speed-equivalence and
# scripts/check-gc-equivalence (issue 19: the fast readers give the reports byte for byte).
#
# The caller sets: root (the checkout), tmp (a scratch folder), fail=0, runs=0.
# In the arguments, @TL@ and @SVG@ name a file (or folder) the run writes, the same path on
# both sides; @STDIN@=FILE feeds FILE on stdin.

# run_side SIDE DIR TOOL ARGS…: run DIR/TOOL, keep $tmp/SIDE.{out,err,rc,tl,svg}. A written
# folder (gap-report's --svg-dir) is kept as its files' names and contents, in name order.
run_side() {
    local side=$1 dir=$2 tool=$3; shift 3
    local args=() stdin=/dev/null a k
    rm -rf "${tmp:?}/$side"; mkdir -p "$tmp/$side"
    for a in "$@"; do
        case $a in @STDIN@=*) stdin=${a#@STDIN@=}; continue ;; esac
        a=${a//@TL@/$tmp/$side/tl}; args+=("${a//@SVG@/$tmp/$side/svg}")
    done
    (cd "$root" && timeout 300 "$dir/$tool" "${args[@]}" < "$stdin" > "$tmp/$side.out" 2> "$tmp/$side.err")
    echo $? > "$tmp/$side.rc"
    for k in tl svg; do
        if [ -d "$tmp/$side/$k" ]; then
            (cd "$tmp/$side/$k" && for c in $(ls | LC_ALL=C sort); do echo "== $c"; cat "$c"; done) > "$tmp/$side.$k"
        elif [ -f "$tmp/$side/$k" ]; then
            cp "$tmp/$side/$k" "$tmp/$side.$k"
        else
            : > "$tmp/$side.$k"
        fi
    done
}

# same_as_base SIDE LABEL…: one comparison of base's run with SIDE's; prints the differences
# under LABEL and sets fail=1 when there are any.
same_as_base() {
    local side=$1 k; shift
    runs=$((runs + 1))
    for k in out err rc tl svg; do
        if ! cmp -s "$tmp/base.$k" "$tmp/$side.$k"; then
            echo "DIFF ($k${side:+, $side}): $*"
            diff "$tmp/base.$k" "$tmp/$side.$k" | head -10 | sed 's/^/    /'
            fail=1
        fi
    done
}
