#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The protocol tutorial (docs/tutorial/) run as written, so that it never rots.
#
# Every chapter NN-*.md holds its commands in ```sh blocks. The first block of a
# chapter only sets the chapter's variables (A and B, the two RNICs' addresses, and
# PORT, a TCP port for the programs' set-up); the test replaces it with this test's
# own allocation (tests/lib/TestNet.cmake: E2E_NET.1, E2E_NET.2, a port of its range)
# and runs the other blocks in order, unchanged, in one bash per chapter, in a fresh
# directory with a fresh run directory and build/bin first on PATH, as a reader
# would after `export PATH=$PWD/build/bin:$PATH`. Block K's output is kept in
# block-K.out. The chapter's checks below then test what its text says to look for
# (which packets are in the ladder, which counter moved, which completion status).
# No block may name an address or port itself: those are only the variables'.
#
#   tutorial.sh [CHAPTER...]      (default: every chapter, e.g. tutorial.sh 06)
. "$(dirname "$0")/lib.sh"
TUT=$(cd "$(dirname "$0")/../../docs/tutorial" && pwd)
need_prog ibv_rc_pingpong
need_prog ib_write_bw
need_prog tshark
[ -x "$UROCE_BIN/rc_semantics" ] || skip "rc_semantics was not built (no system libibverbs)"

# extract CHAPTER.md DIR: writes DIR/block-K.sh for every ```sh block (K from 1).
extract() {
	awk -v d="$2" '
		/^```sh$/ { k++; f = d "/block-" k ".sh"; printf "" > f; on = 1; next }
		/^```/ && on { on = 0; close(f); next }
		on { print > f }' "$1"
}

# run_chapter NAME: extracts and runs the chapter docs/tutorial/NAME.md in $T/NAME
# (60 s at most); sets D to that directory and NBLOCKS.
run_chapter() {
	local md=$TUT/$1.md k rc
	D=$T/$1
	mkdir -p "$D" "$D/run"
	extract "$md" "$D"
	NBLOCKS=$(find "$D" -name 'block-*.sh' | wc -l)
	if [ "$NBLOCKS" -lt 2 ]; then
		fail "$1: fewer than two sh blocks"
		return
	fi
	if grep -Eqv '^(A|B|PORT)=[^ ]+( (A|B|PORT)=[^ ]+)*$' "$D/block-1.sh" ||
		[ "$(wc -l <"$D/block-1.sh")" -ne 1 ]; then
		fail "$1: the first sh block must be one line setting A, B and PORT: $(cat "$D/block-1.sh")"
		return
	fi
	if grep -nE '(^|[^0-9.])127\.[0-9]|:[0-9]{4,5}([^0-9]|$)|-p [0-9]' "$D"/block-[2-9]*.sh; then
		fail "$1: a block names an address or port instead of \$A, \$B, \$PORT"
	fi
	next_tcp_port
	{
		echo "A=$ADDR0 B=$ADDR1 PORT=$TCP_PORT"
		for k in $(seq 2 "$NBLOCKS"); do
			echo "exec >block-$k.out 2>&1"
			cat "$D/block-$k.sh"
		done
	} >"$D/chapter.sh"
	rc=0
	(cd "$D" && PATH=$UROCE_BIN:$PATH UROCE_RUNDIR=$D/run \
		setsid timeout -k 5 60 bash chapter.sh >"$D/block-1.out" 2>&1) &
	CH_PID=$!
	wait "$CH_PID" || rc=$?
	# whatever the chapter left running (its process group, by the setsid's id)
	pkill_group "$D"
	check "$1: its commands ran to the end (exit $rc)" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || tail -n 20 "$D"/block-*.out | sed 's/^/    | /'
}

# pkill_group DIR: ends the daemons and programs the chapter in DIR started and left
# (found by their working directory, each by its pid).
pkill_group() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$1" ] || continue
		kill -TERM "${p#/proc/}" 2>/dev/null
	done
}

# out K: block K's output. has WHAT K REGEX: it matches a line of it (grep -E).
out() { cat "$D/block-$1.out"; }
has() {
	if grep -Eq -- "$3" "$D/block-$2.out"; then
		pass "$1"
	else
		fail "$1 (no line of block $2's output matches /$3/)"
		show "$D/block-$2.out" 15
	fi
}

# cval K DEV NAME: counter NAME in block K's `uroce counters DEV` listing (0 when not
# listed: the listing leaves out the zero ones).
cval() {
	awk -v dev="# $2" -v n="$3" '
		$0 == dev { on = 1; next } /^# / { on = 0 } on && $1 == n { v = $2 } END { print v + 0 }' \
		"$D/block-$1.out"
}

# at_least WHAT VALUE MIN, exactly WHAT VALUE WANT
at_least() {
	if [ "$2" -ge "$3" ]; then pass "$1 = $2 (>= $3)"; else fail "$1 = $2, expected >= $3"; fi
}
exactly() {
	if [ "$2" -eq "$3" ]; then pass "$1 = $2"; else fail "$1 = $2, expected $3"; fi
}

# ladder_rows K REGEX: how many rows of block K's ladder output match REGEX.
ladder_rows() {
	grep -Ec -- "$2" "$D/block-$1.out"
}

# ---------------------------------------------------------------- the chapters' claims

# ---------------------------------------------------------------- main
chapters=("$@")
if [ ${#chapters[@]} -eq 0 ]; then
	for f in "$TUT"/[0-9][0-9]-*.md; do chapters+=("$(basename "$f" .md)"); done
fi
for c in "${chapters[@]}"; do
	[ -e "$TUT/$c.md" ] || c=$(basename "$(ls "$TUT/$c"-*.md 2>/dev/null | head -n 1)" .md)
	echo "--- $c"
	t0=$(now_ms)
	run_chapter "$c"
	if declare -F "check_${c%%-*}" >/dev/null; then
		"check_${c%%-*}"
	else
		fail "$c: the test has no checks for this chapter"
	fi
	echo "    ($c: $(($(now_ms) - t0)) ms)"
done
finish
