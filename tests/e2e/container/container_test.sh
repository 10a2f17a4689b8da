#!/usr/bin/env bash
# The container pattern of README "Running in production and in containers", in a pid namespace of
# its own (unshare: no Docker daemon runs on CI machines): the image's entrypoint runs a side
# process, then execs `heaprec run` as the namespace's first process, with the profiles going to a
# volume and a dump signal whose default action is to be ignored.
#
# Checks: only the service is profiled (not the side process, not what the service executes), no
# profile lands in the working directory, the dump signal sent to the first process (what
# `docker kill -s SIGWINCH` does) reaches the service, an orphan the service leaves behind is
# reaped, and SIGTERM (`docker stop`) ends the service with its final profile and status 143.
#
# Usage: container_test.sh HEAPREC SERVICE
set -euo pipefail
heaprec=$(realpath "$1")
service=$(realpath "$2")
work=$(mktemp -d)
unshare_pid=
cleanup() {
  [[ -n $unshare_pid ]] && kill -KILL "$unshare_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- service stdout" >&2; cat "$work/stdout" >&2 || true
  echo "--- stderr" >&2; cat "$work/stderr" >&2 || true
  echo "--- volume" >&2; ls -la "$work/profiles" >&2 || true
  exit 1
}
# Polls a condition (a shell command) for up to 20 s.
wait_for() {
  for _ in $(seq 200); do
    if eval "$1"; then return 0; fi
    [[ -z $unshare_pid ]] || kill -0 "$unshare_pid" 2>/dev/null || fail "the container ended early"
    sleep 0.1
  done
  fail "timed out waiting for: $1"
}

mkdir "$work/app" "$work/profiles" "$work/bin"
cp "$service" "$work/bin/sidecar"  # its own name, so a profile of it would be told apart
cat >"$work/entrypoint.sh" <<SCRIPT
#!/bin/sh
set -e
cd "$work/app"
"$work/bin/sidecar" sidecar
exec "$heaprec" run --no-follow --no-symbolize --top 0 --dump-signal SIGWINCH \\
  -o "$work/profiles/heaprec.%e.%p.pb.gz" -- "$service" serve
SCRIPT

env -u LD_PRELOAD unshare --pid --fork --mount-proc sh "$work/entrypoint.sh" \
  >"$work/stdout" 2>"$work/stderr" &
unshare_pid=$!
wait_for 'grep -q "^ready" "$work/stdout"'
init=$(pgrep -P "$unshare_pid")  # the namespace's first process: heaprec run
[[ $(cat "/proc/$init/comm") == heaprec ]] || fail "the first process is $(cat /proc/$init/comm)"

# The orphan (`sleep`, re-parented to heaprec) ends: heaprec must reap it, or it stays a zombie.
orphan=$(pgrep -P "$init" -x sleep) || fail "no orphan under the first process"
kill -TERM "$orphan"
wait_for '[[ ! -e /proc/$orphan ]]'

kill -WINCH "$init"
wait_for 'compgen -G "$work/profiles/heaprec.service.*.0001.pb.gz" >/dev/null'

kill -TERM "$init"
status=0
wait "$unshare_pid" || status=$?
unshare_pid=
[[ $status -eq 143 ]] || fail "exit status $status, want 143 (SIGTERM)"

# Only the service is profiled (and the child it forked, which is the service too): not the side
# process, not the `sleep` it executed. Nothing lands in the working directory.
programs=$(ls "$work/profiles" | sed -E 's/^heaprec\.([a-z]+)\..*/\1/' | sort -u)
[[ $programs == service ]] || fail "profiles of other programs: $programs"
[[ -z $(ls -A "$work/app") ]] || fail "files in the working directory: $(ls -A "$work/app")"
dumped=$(compgen -G "$work/profiles/heaprec.service.*.0001.pb.gz")
pid=$(sed -E 's/.*heaprec\.service\.([0-9]+)\.0001\.pb\.gz/\1/' <<<"$dumped")
final=$work/profiles/heaprec.service.$pid.pb.gz
[[ -f $final ]] || fail "no final profile $final"
report=$("$heaprec" report "$final")
grep -q "reason=terminated" <<<"$report" || fail "final profile not reason=terminated: $report"
grep -q "signal=SIGTERM" <<<"$report" || fail "final profile without signal=SIGTERM: $report"
grep -q "fill_cache" <<<"$report" || fail "the report does not name fill_cache: $report"
dump=$("$heaprec" report "$dumped")
grep -q "reason=signal" <<<"$dump" || fail "the dump is not reason=signal: $dump"
echo "PASS"
