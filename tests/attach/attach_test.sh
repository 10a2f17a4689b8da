#!/usr/bin/env bash
# `heaprec attach PID` on programs started plainly (docs/design/attach.md): one scenario per run,
#
#   attach_test.sh HEAPREC TARGET STATIC_TARGET SCENARIO
#
# TARGET is attach_target.c (its modes: the comment there). Every scenario checks that the target's
# output and exit status are those of a run without heaprec, and, where heaprec attached, that the
# profile holds the 2000 x 64 KiB blocks allocated after the attach at after_attach_site (125 MiB;
# at a 64 KiB interval every such block is sampled, so the total is within a few percent), and
# nothing of the 1000 blocks allocated before it.
set -euo pipefail
heaprec=$1 target=$2 static_target=$3 scenario=$4
dir=$(mktemp -d /tmp/heaprec-attach-test.XXXXXX)
chmod 755 "$dir"
mkdir "$dir/prof"
pid=
cleanup() {
  exec 8>&- 2>/dev/null || true
  if [[ -n $pid ]]; then kill -CONT "$pid" 2>/dev/null || true; kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL ($scenario): $*" >&2; for f in "$dir"/out "$dir"/err "$dir"/attach.err; do [[ -f $f ]] && { echo "--- $f" >&2; cat "$f" >&2; }; done; exit 1; }

# Starts "$@" with stdin from a FIFO the test writes (descriptor 8), stdout and stderr to files;
# waits for its "ready PID".
start() {
  mkfifo "$dir/in"
  chmod 666 "$dir/in"
  ( s=0; "$@" < "$dir/in" > "$dir/out" 2> "$dir/err" || s=$?; echo $s > "$dir/status" ) &
  exec 8> "$dir/in"
  for _ in $(seq 1 400); do
    pid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$dir/out" 2>/dev/null || true)
    [[ -n $pid ]] && return 0
    sleep 0.05
  done
  fail "the target never said ready"
}
send() { echo "$1" >&8; }
# Ends the target (its last line) and waits for its status.
finish() {
  send end
  exec 8>&-
  for _ in $(seq 1 600); do [[ -f $dir/status ]] && return 0; sleep 0.05; done
  [[ -n $pid && -d /proc/$pid ]] && gdb -p "$pid" -batch -ex "thread apply all bt" 2>&1 | grep -E "^#" | head -20 >&2
  fail "the target did not end"
}
# What the target prints and its status without heaprec, ready line aside.
expect_plain() {
  local mode=$1
  local expected actual
  expected=$(set +e; printf 'go\nend\n' | GO_FILE=/ "$target" "$mode" > "$dir/plain"; echo "status $?")
  expected="$(grep -v '^ready ' "$dir/plain")
$expected"
  actual=$(grep -v '^ready ' "$dir/out"; echo "status $(cat "$dir/status")")
  [[ $expected == "$actual" ]] || fail "output differs from a plain run: expected [$expected] got [$actual]"
}
attach() {
  "$heaprec" attach --sample-interval 64K -o "${1:-$dir/prof/p.%p.pb.gz}" "$pid" 2> "$dir/attach.err" > "$dir/attach.out" ||
    fail "heaprec attach failed with status $?"
}
# The profile at exit holds ~125 MiB at after_attach_site, and no pre-attach block.
check_profile() {
  local file=${1:-$dir/prof/p.$pid.pb.gz}  # the final profile, written at exit
  [[ -n $file && -f $file ]] || fail "no profile in $dir/prof: $(ls -R "$dir/prof")"
  local report
  report=$("$heaprec" report "$file" 2>&1) || fail "report failed: $report"
  if [[ ${2:-} != any ]]; then
    grep -q 'after_attach_site' <<<"$report" || fail "no after_attach_site in the profile: $report"
  fi
  grep -q 'injected=1' <<<"$report" || fail "the profile does not say it was attached: $report"
  local mib
  mib=$(sed -n 's/^Total: \([0-9.]*\) MiB.*/\1/p' <<<"$report")
  local low=115
  [[ ${2:-} == any ]] && low=100
  awk -v m="$mib" -v low=$low 'BEGIN { exit !(m >= low && m <= 135) }' ||
    fail "total ${mib} MiB, expected 125: $report"
}
# `heaprec attach` refuses in one line naming why, with status 1.
expect_refusal() {
  local status=0
  "$heaprec" attach "$pid" 2> "$dir/attach.err" || status=$?
  [[ $status == 1 ]] || fail "status $status, expected the refusal's 1"
  grep -q "$1" "$dir/attach.err" || fail "the refusal does not say '$1'"
  [[ $(wc -l < "$dir/attach.err") == 1 ]] || fail "the refusal is not one line"
}
state_of() { sed 's/.*) \(.\).*/\1/' "/proc/$1/stat"; }
# Lets the target allocate and end, then checks its output against a plain run of mode $1 and its
# profile (check_profile's arguments follow the mode).
go_and_check() {
  local mode=$1
  shift
  send go
  finish
  expect_plain "$mode"
  check_profile "$@"
}
# Waits (up to 5 s: a detach's closing is the library's threads' work) until the target's
# descriptor table is $1 again; $2 says when.
expect_descriptors() {
  for _ in $(seq 1 100); do
    [[ $(ls /proc/$pid/fd) == "$1" ]] && return 0
    sleep 0.05
  done
  fail "descriptors $2: $(ls -l /proc/$pid/fd) (before: $1)"
}
# Starts the target, attaches, lets it allocate after the attach, then ends it with signal $1 and
# waits for its status.
attached_then_ended_by() {
  start "$target" read
  attach
  send go
  for _ in $(seq 1 200); do grep -q '^sum ' "$dir/out" && break; sleep 0.05; done
  kill "-$1" "$pid"
  exec 8>&-
  for _ in $(seq 1 600); do [[ -f $dir/status ]] && break; sleep 0.05; done
}
syscall_of() { cut -d' ' -f1 "/proc/$1/syscall"; }
# Waits until the target's (only) thread blocks in system call $1.
wait_in_syscall() {
  for _ in $(seq 1 200); do [[ $(syscall_of "$pid") == "$1" ]] && return 0; sleep 0.02; done
  fail "the target is in system call $(syscall_of "$pid"), expected $1"
}

# The report's first screen says what the heap held before the attach by block size, read from
# outside: at least the target's 1000 blocks of 4 KiB and its 3 mmapped ones of 1 MiB, and (a
# quiet single-threaded target) the walk's total within 2% of what mallinfo2 said then.
check_held_by_size() {
  local report
  report=$("$heaprec" report "$dir/prof/p.$pid.pb.gz" 2>&1)
  local line
  line=$(grep '^Before the attach, by block size' <<<"$report") || fail "no block sizes: $report"
  local small large
  small=$(sed -n 's/.* in 2-4 KiB blocks ([0-9]*%, \([0-9]*\) blocks).*/\1/p' <<<"$line")
  large=$(sed -n 's/.* in 512 KiB-1 MiB blocks ([0-9]*%, \([0-9]*\) blocks).*/\1/p' <<<"$line")
  [[ -n $small && $small -ge 1000 && $small -le 1010 ]] || fail "2-4 KiB blocks: '$small' in $line"
  [[ $large == 3 ]] || fail "512 KiB-1 MiB blocks: '$large' in $line"
  local held walked
  held=$(grep -o 'held_at_attach=[0-9]*' <<<"$report" | cut -d= -f2)
  walked=$(grep -o 'held_walked=[0-9]*' <<<"$report" | cut -d= -f2)
  awk -v h="$held" -v w="$walked" 'BEGIN { exit !(w >= 0.98 * h && w <= 1.02 * h) }' ||
    fail "the walk found $walked bytes, mallinfo2 $held"
}

# The summary starts by saying that only allocations since the attach are counted, and its RSS
# line (unless $1 is no-rss) tells the blocks held from before the attach (the target's 7 MiB)
# apart from malloc's overhead, which stays under a megabyte.
check_summary() {
  local summary
  summary=$("$heaprec" summary "$dir/prof/p.$pid.pb.gz" 2>&1)
  grep -q '^  attached     .* UTC: only allocations since are counted below; the heap held ' \
    <<<"$summary" || fail "the summary does not say it was attached: $summary"
  # A heap at death has no RSS line: nothing measured the process as it died.
  if [[ ${1:-} != no-rss ]]; then
    grep -q 'since the attach, from before the attach [^ ]*[67]\.[0-9] MiB' <<<"$summary" ||
      fail "the summary's RSS does not tell the heap from before the attach: $summary"
  fi
  if grep -q 'overhead [^ ]*[0-9.]* MiB' <<<"$summary"; then
    fail "the summary takes the heap from before the attach for malloc's overhead: $summary"
  fi
}

case $scenario in
  read | sleep | threads | forkexec)
    GO_FILE=$dir/go start "$target" "$scenario"
    if [[ $scenario == threads ]]; then
      attach "$dir/prof"  # a directory: the profiles go in it by their default names
    else
      attach
    fi
    [[ $scenario == sleep ]] && touch "$dir/go"
    send go
    finish
    expect_plain "$scenario"
    if [[ $scenario == threads ]]; then
      check_profile "$dir/prof/heaprec.$(basename "$target").$pid.pb.gz"
    else
      check_profile
      check_held_by_size
      check_summary
    fi
    ;;
  python3 | ruby)
    # The interpreters: the bytes of the 2000 buffers allocated after the attach, under the
    # interpreter's own functions.
    script=$(dirname "$0")/target.${scenario/python3/py}
    script=${script/.ruby/.rb}
    interpreter=/usr/bin/$scenario
    start "$interpreter" "$script"
    attach
    send go
    finish
    expected=$(set +e; printf 'go\nend\n' | "$interpreter" "$script" | grep -v '^ready '; echo "status ${PIPESTATUS[1]}")
    actual=$(grep -v '^ready ' "$dir/out"; echo "status $(cat "$dir/status")")
    [[ $expected == "$actual" ]] || fail "output differs from a plain run: [$expected] [$actual]"
    # Python frees every object as it ends: the peak profile holds the buffers.
    # The peak profile is captured within 10% of the peak (docs/design/heap-record.md): >= 100 MiB.
    check_profile "$dir/prof/p.$pid.peak.pb.gz" any
    "$heaprec" symbolize --no-cache "$dir/prof/p.$pid.peak.pb.gz" > /dev/null 2>&1 ||
      fail "symbolize failed"
    # Without the interpreters' debug symbols (not installed), their static allocation functions
    # have no names: the site is the interpreter's own code, holding all of it.
    "$heaprec" report "$dir/prof/p.$pid.peak.pb.gz" > "$dir/report.txt" 2>&1 || fail "report failed"
    site=$([[ $scenario == ruby ]] && echo libruby || echo python3)
    sed -n '/  function$/{n;p}' "$dir/report.txt" | grep -q "($site" ||
      fail "the top site is not in $site: $(cat "$dir/report.txt")"
    ;;
  terminated)
    # Ended by SIGTERM after the attach: the status a plain run gets (143), and the final profile.
    attached_then_ended_by TERM
    [[ $(cat "$dir/status") == 143 ]] || fail "status $(cat "$dir/status"), expected 143"
    check_profile
    "$heaprec" report "$dir/prof/p.$pid.pb.gz" | grep -q 'reason=terminated' || fail "not a terminated profile"
    ;;
  stopped)
    start "$target" read
    kill -STOP "$pid"
    for _ in $(seq 1 100); do [[ $(state_of "$pid") == T ]] && break; sleep 0.02; done
    attach
    sleep 0.2
    [[ $(state_of "$pid") == T ]] || fail "the target is not stopped any more after the attach"
    kill -CONT "$pid"
    go_and_check read
    ;;
  targetkilled)
    # The attached process is killed (the OOM killer, SIGKILL) holding the 125 MiB: heaprec
    # recover writes its heap at death beside its profiles (the record names their directory by
    # the process's own view, /proc/self/fd/N), saying what the heap held before the attach.
    attached_then_ended_by KILL
    # A copy made a version 3 record (the header before the attach's facts, 368 bytes shorter):
    # it is read as well, without them.
    cp "$dir/prof/p.$pid.record" "$dir/v3.record"
    header_bytes=$(od -An -tu4 -j12 -N4 "$dir/v3.record" | tr -d ' ')
    little_endian32() {
      printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $((($1 >> 8) & 255)) \
        $((($1 >> 16) & 255)) $((($1 >> 24) & 255))
    }
    # shellcheck disable=SC2059  # the format is the bytes
    printf "$(little_endian32 3)$(little_endian32 $((header_bytes - 368)))" |
      dd of="$dir/v3.record" bs=1 seek=8 conv=notrunc status=none
    "$heaprec" recover "$dir/prof" > "$dir/recover.out" 2>&1 ||
      fail "recover failed: $(cat "$dir/recover.out")"
    check_profile
    "$heaprec" report "$dir/prof/p.$pid.pb.gz" 2>&1 | grep -q 'reason=killed' || fail "not the heap at death"
    check_held_by_size
    check_summary no-rss
    "$heaprec" recover -o "$dir/v3.pb.gz" "$dir/v3.record" > "$dir/recover.out" 2>&1 ||
      fail "a version 3 record was not read: $(cat "$dir/recover.out")"
    v3=$("$heaprec" report "$dir/v3.pb.gz" 2>&1)
    grep -q 'after_attach_site' <<<"$v3" || fail "the version 3 record's heap: $v3"
    if grep -q 'injected=1' <<<"$v3"; then fail "a version 3 record has no attach facts: $v3"; fi
    ;;
  pidns)
    # The target is the first process of its own pid namespace (a container's, seen from the
    # host): it says "ready 1", which on the host is init. Attached by its host pid, its profiles
    # are named by that pid, not by 1.
    start unshare --pid --fork --mount-proc "$target" read
    [[ $pid == 1 ]] || fail "the target is process $pid in its namespace, expected 1"
    pid=
    for candidate in $(pgrep -x attach_target); do
      [[ $(readlink "/proc/$candidate/fd/0") == "$dir/in" ]] && pid=$candidate
    done
    [[ -n $pid && $pid != 1 ]] || fail "no host pid for the target"
    attach
    go_and_check read  # the profile: $dir/prof/p.HOSTPID.pb.gz
    [[ -z $(find "$dir/prof" -name 'p.1.*') ]] || fail "profiles named by the namespace's pid: $(ls "$dir/prof")"
    ;;
  mountns)
    # The target's mount namespace hides the library's directory and the profiles' directory.
    lib_dir=$(dirname "$(readlink -f "$(dirname "$heaprec")/../lib/libheaprec.so")")
    start unshare -m --propagation private sh -c \
      "mount -t tmpfs none '$lib_dir' && mount -t tmpfs none '$dir/prof' && exec '$target' read"
    [[ ! -e /proc/$pid/root$dir/prof/. || -z $(ls "/proc/$pid/root$lib_dir") ]] || fail "not hidden"
    attach
    go_and_check read
    ;;
  nonroot)
    chmod 700 "$dir/prof"
    start setpriv --reuid=65534 --regid=65534 --clear-groups "$target" read
    attach
    grep -q "heaprec-attach.$pid" "$dir/attach.out" || fail "no note of the subdirectory: $(cat "$dir/attach.out")"
    go_and_check read "$dir/prof/heaprec-attach.$pid/p.$pid.pb.gz"
    ;;
  jemalloc)
    # Over jemalloc the heap before the attach is not known (glibc's counts would read as an empty
    # heap: the summary said "the heap held 0 B then").
    start env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "$target" read
    attach
    go_and_check read
    summary=$("$heaprec" summary "$dir/prof/p.$pid.pb.gz" 2>&1)
    grep -q "what the heap held then is not known (its malloc is not glibc's)" <<<"$summary" ||
      fail "the summary does not say the heap before the attach is not known: $summary"
    ;;
  interrupt)
    start "$target" read
    # Ctrl-C at each step: the target goes on, and a later attach works.
    for step in begin load handover; do
      set +e
      HEAPREC_ATTACH_INTERRUPT=$step "$heaprec" attach -o "$dir/prof/p.%p.pb.gz" "$pid" 2> "$dir/attach.err"
      status=$?
      set -e
      [[ $status == 130 ]] || fail "interrupt after $step: status $status"
      [[ $(state_of "$pid") != Z && -d /proc/$pid ]] || fail "the target died (interrupt after $step)"
    done
    # And real SIGINTs at moments that fall where they fall.
    for delay in 0 0.001 0.003 0.01; do
      "$heaprec" attach -o "$dir/prof/p.%p.pb.gz" "$pid" > /dev/null 2>&1 &
      sleep "$delay"
      kill -INT $! 2>/dev/null || true
      wait $! || true
      [[ -d /proc/$pid && $(state_of "$pid") != Z ]] || fail "the target died (SIGINT after ${delay}s)"
      "$heaprec" detach "$pid" > /dev/null 2>&1 || true
    done
    attach
    go_and_check read
    ;;
  gdb)
    # A debugger attached after heaprec reads every loaded object, heaprec's included, by the name
    # the loader keeps (it opens it in its own process): the library is named by its path, not
    # "/proc/self/./fd/N", which in gdb is gdb's own descriptor (it blocked there, reading a pipe).
    start "$target" read
    attach
    timeout -s KILL 60 gdb -p "$pid" -batch -ex "info sharedlibrary" < /dev/null > "$dir/gdb.out" 2>&1 ||
      fail "gdb -p did not finish: $(tail -5 "$dir/gdb.out")"
    grep -q "Yes .*/libheaprec.so$" "$dir/gdb.out" ||
      fail "gdb did not read heaprec's library: $(cat "$dir/gdb.out")"
    go_and_check read
    ;;
  killed)
    # `heaprec attach` killed with SIGKILL at each step of its work (the Nth stop or resume of the
    # thread it holds): the thread restores itself from the frame written below its stack
    # (ptrace_thread.h). Held in read(), in nanosleep and in the middle of its own computation, the
    # target goes on exactly as it would have, with its signal mask and its alternate signal stack;
    # then a normal attach works.
    for mode in read sleep spin; do
      rm -f "$dir/go" "$dir/in" "$dir/status"
      GO_FILE=$dir/go start "$target" "$mode"
      mask_before=$(grep SigBlk "/proc/$pid/status")
      completed=0
      for n in 1 2 3 4 5 6 7 8 9 10 12 14 16 20 24 28 32 40 48 64 80 96 128 160 192 256 320 384 512 768 1024; do
        status=0
        HEAPREC_ATTACH_KILL_AT=$n "$heaprec" attach -o "$dir/prof/p.%p.pb.gz" "$pid" > /dev/null 2>&1 || status=$?
        [[ -d /proc/$pid && $(state_of "$pid") != Z ]] || fail "$mode: the target died (killed at step $n)"
        for _ in $(seq 1 100); do
          [[ $(sed -n 's/^TracerPid:\s*//p' "/proc/$pid/status") == 0 ]] && break
          sleep 0.01
        done
        # A kill during a call leaves the thread finishing that call (dlopen, say) with every signal
        # blocked; it gets its mask back from the frame when the call returns, once it has run:
        # on a busy machine, some time after the tracer is gone.
        for _ in $(seq 1 500); do
          [[ $(grep SigBlk "/proc/$pid/status") == "$mask_before" ]] && break
          sleep 0.01
        done
        [[ $(grep SigBlk "/proc/$pid/status") == "$mask_before" ]] ||
          fail "$mode: signal mask 5 s after a kill at step $n: $(grep SigBlk "/proc/$pid/status")"
        "$heaprec" detach "$pid" > /dev/null 2>&1 || true
        if [[ $status != 137 ]]; then completed=1; break; fi
      done
      [[ $completed == 1 ]] || fail "$mode: the attach was still under way after 1024 steps"
      attach
      [[ $mode != read ]] && touch "$dir/go"
      send go
      finish
      expect_plain "$mode"
      check_profile
      grep -q 'spin bad 0 altstack kept 1' "$dir/out" || [[ $mode != spin ]] || fail "spin: registers were changed"
      rm -f "$dir/prof"/*
    done
    ;;
  seccomp)
    start "$target" seccomp
    expect_refusal 'strict seccomp'
    send go
    finish
    expect_plain seccomp
    ;;
  static)
    start "$static_target" read
    expect_refusal 'static executable'
    send go
    finish
    target=$static_target expect_plain read
    ;;
  restart)
    # A thread that a stop interrupted in a sleep is continued by the kernel as restart_syscall:
    # after the attach (which held it) the target's only thread is there. Dumps, detaches and
    # attaches find it at a safe point all the same, and its sleep goes on to the end the program
    # asked for (here, the test's signal).
    GO_FILE=$dir/go start "$target" restart
    wait_in_syscall 230  # clock_nanosleep
    attach
    [[ $(syscall_of "$pid") == 219 ]] || fail "not in restart_syscall after the attach: $(syscall_of "$pid")"
    "$heaprec" dump -o "$dir/prof/now.pb.gz" "$pid" 2> "$dir/attach.err" || fail "dump failed"
    "$heaprec" detach "$pid" 2> "$dir/attach.err" || fail "detach failed"
    attach
    kill -USR1 "$pid"
    go_and_check restart
    ;;
  futex)
    # The same continued futex wait may be a lock's slow path, inside glibc with another lock
    # held: no safe point. With no other thread, the attach refuses, and the target goes on.
    GO_FILE=$dir/go start "$target" futex
    wait_in_syscall 202  # futex
    kill -STOP "$pid"
    for _ in $(seq 1 100); do [[ $(state_of "$pid") == T ]] && break; sleep 0.02; done
    kill -CONT "$pid"
    wait_in_syscall 219
    grep -q futex "/proc/$pid/wchan" || fail "wait channel $(cat "/proc/$pid/wchan")"
    expect_refusal "no thread reached a safe point"
    kill -USR1 "$pid"
    send go
    finish
    expect_plain futex
    ;;
  concurrent)
    # Commands on one process take turns (flock on /proc/PID/stat): of three attaches started
    # together one loads heaprec and the others find it attached (before, all three loaded a copy
    # and said "samples now"); three dumps at once each write their profile; a command waits while
    # another holds the turn, and an interrupt while it waits leaves the process untouched.
    start "$target" read
    commands=()
    for i in 1 2 3; do
      ( s=0; "$heaprec" attach --sample-interval 64K -o "$dir/prof/p.%p.pb.gz" "$pid" > "$dir/a$i.out" 2>&1 || s=$?; echo $s > "$dir/a$i.status" ) &
      commands+=($!)
    done
    wait "${commands[@]}"
    statuses=$(cat "$dir"/a[123].status | sort | tr '\n' ' ')
    [[ $statuses == "0 1 1 " ]] || fail "attach statuses $statuses: $(cat "$dir"/a[123].out)"
    [[ $(grep -c 'has heaprec attached already' "$dir"/a[123].out | awk -F: '{ n += $2 } END { print n }') == 2 ]] ||
      fail "the refusals: $(cat "$dir"/a[123].out)"
    copies=$(awk '$3 == "00000000" && $6 ~ /memfd:heaprec-attach/' "/proc/$pid/maps" | wc -l)
    [[ $copies == 1 ]] || fail "$copies copies of heaprec's library loaded: $(grep heaprec /proc/$pid/maps)"
    commands=()
    for i in 1 2 3; do
      "$heaprec" dump -o "$dir/prof/d$i.pb.gz" "$pid" > /dev/null 2> "$dir/d$i.err" &
      commands+=($!)
    done
    wait "${commands[@]}"
    for i in 1 2 3; do "$heaprec" report "$dir/prof/d$i.pb.gz" > /dev/null 2>&1 || fail "dump $i: $(cat "$dir/d$i.err")"; done
    flock "/proc/$pid/stat" sleep 1 &
    holder=$!
    sleep 0.2
    started=$(date +%s%N)
    "$heaprec" dump -o "$dir/prof/waited.pb.gz" "$pid" 2> "$dir/attach.err" || fail "the dump that waited its turn failed"
    (( $(date +%s%N) - started >= 500000000 )) || fail "the dump did not wait for the turn"
    wait "$holder"
    flock "/proc/$pid/stat" sleep 30 &
    holder=$!  # flock waits for its sleep, which holds the lock: both are ended below
    sleep 0.2
    # A background command of a script starts with SIGINT ignored: SIGTERM, deferred the same way.
    "$heaprec" detach "$pid" 2> "$dir/attach.err" &
    waiter=$!
    sleep 0.3
    kill -TERM "$waiter"
    status=0
    wait "$waiter" || status=$?
    [[ $status == 130 ]] || fail "interrupted while waiting: status $status: $(cat "$dir/attach.err")"
    grep -q "untouched" "$dir/attach.err" || fail "interrupted while waiting: $(cat "$dir/attach.err")"
    pkill -P "$holder" sleep
    wait "$holder" 2>/dev/null || true
    go_and_check read
    ;;
  traced)
    # strace on the target's only thread: ptrace gives a thread one tracer, and the refusal says
    # who holds it (before: "permission denied: ptrace needs root"). With strace on the main thread
    # of a target whose 8 other threads run, heaprec holds one of those.
    traced_by_strace() {
      strace -p "$1" -o /dev/null 2> /dev/null &
      tracer=$!
      for _ in $(seq 1 100); do
        [[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status") == "$tracer" ]] && return 0
        sleep 0.05
      done
      fail "strace did not attach"
    }
    start "$target" read
    traced_by_strace "$pid"
    expect_refusal "its threads are traced by process $tracer (strace)"
    kill "$tracer"
    wait "$tracer" 2> /dev/null || true
    finish
    rm -f "$dir/in" "$dir/status" "$dir/out"
    start "$target" threads
    traced_by_strace "$pid"
    attach
    held=$(grep -oh '(thread [0-9]* held' "$dir/attach.out" "$dir/attach.err" | cut -d' ' -f2)
    [[ -n $held && $held != "$pid" ]] || fail "held thread '$held' (the traced one is $pid)"
    kill "$tracer"
    wait "$tracer" 2> /dev/null || true
    go_and_check threads
    ;;
  mainexit)
    # The main thread ended (pthread_exit) while another runs: the process reads as a zombie and
    # its maps as empty. attach and dump say so, where they said "not running (a zombie)" and "not
    # profiled by heaprec".
    start "$target" mainexit
    for _ in $(seq 1 100); do [[ $(state_of "$pid") == Z ]] && break; sleep 0.02; done
    expect_refusal "the main thread of process $pid has ended while another thread runs"
    status=0
    "$heaprec" dump "$pid" 2> "$dir/attach.err" || status=$?
    [[ $status == 1 ]] && grep -q "the main thread of process $pid has ended" "$dir/attach.err" ||
      fail "dump: status $status: $(cat "$dir/attach.err")"
    finish
    [[ $(cat "$dir/status") == 7 ]] || fail "the target ended with $(cat "$dir/status")"
    ;;
  upgraded)
    # The target's binary replaced on disk after it started (an upgrade while it runs): heaprec dump
    # names the frames from the binary the process has mapped, which a later report could not find
    # on disk (another build at its path); --no-symbolize leaves them as addresses.
    cp "$target" "$dir/app"
    start "$dir/app" read
    attach
    cp "$static_target" "$dir/app.new"
    mv "$dir/app.new" "$dir/app"
    send go
    for _ in $(seq 1 200); do grep -q '^sum ' "$dir/out" && break; sleep 0.05; done
    "$heaprec" dump -o "$dir/prof/now.pb.gz" "$pid" 2> "$dir/attach.err" || fail "dump failed"
    "$heaprec" report "$dir/prof/now.pb.gz" 2>&1 | grep -q 'after_attach_site' ||
      fail "the dump is not symbolized: $("$heaprec" report "$dir/prof/now.pb.gz" 2>&1)"
    "$heaprec" dump --no-symbolize -o "$dir/prof/raw.pb.gz" "$pid" 2> "$dir/attach.err" || fail "dump failed"
    report=$("$heaprec" report "$dir/prof/raw.pb.gz" 2>&1)
    grep -q 'after_attach_site' <<<"$report" && fail "--no-symbolize, yet symbolized: $report"
    grep -q 'another build' <<<"$report" || fail "the report does not say the binary on disk is another build: $report"
    finish
    expect_plain read
    ;;
  condwait)
    # An idle server: the main thread waits in pthread_join for a thread waiting in
    # pthread_cond_wait. Both wait for events (FUTEX_WAIT_BITSET), holding no lock of glibc's, so
    # attach, dump and detach hold the main thread in its join, which goes on after each.
    GO_FILE=$dir/go start "$target" condwait
    wait_in_syscall 202  # futex
    for round in 1 2; do
      attach
      grep -qh "(thread $pid held" "$dir/attach.out" "$dir/attach.err" || fail "round $round: $(cat "$dir/attach.err")"
      [[ $(syscall_of "$pid") == 202 ]] || fail "round $round: not back in its join: $(syscall_of "$pid")"
      "$heaprec" dump -o "$dir/prof/now.pb.gz" "$pid" 2> "$dir/attach.err" || fail "round $round: dump failed"
      [[ $round == 2 ]] || "$heaprec" detach "$pid" 2> "$dir/attach.err" || fail "detach failed"
    done
    # Without -o, named by the program and the pid, in the command's directory.
    (cd "$dir/prof" && "$heaprec" dump "$pid" > /dev/null 2>&1) || fail "dump without -o failed"
    compgen -G "$dir/prof/heaprec.attach_target.$pid.[0-9]*.pb.gz" > /dev/null ||
      fail "no heaprec.attach_target.$pid.TIME.pb.gz: $(ls "$dir/prof")"
    touch "$dir/go"
    go_and_check condwait
    ;;
  http)
    # attach --http: heaprec attach says where it serves (the program's stderr stays the
    # program's); a detach closes the endpoint (the port refuses, and the program's descriptor
    # table is its own again); a later attach --http serves again.
    start "$target" read
    descriptors_before=$(ls /proc/$pid/fd)
    served_url() {
      "$heaprec" attach --sample-interval 64K --http 0 -o "$dir/prof/p.%p.pb.gz" "$pid" \
        > "$dir/attach.out" 2> "$dir/attach.err" || fail "attach --http failed"
      grep -oh 'serving http://[^;]*' "$dir/attach.out" "$dir/attach.err" | cut -d' ' -f2
    }
    for round in 1 2; do
      url=$(served_url)
      [[ -n $url ]] || fail "round $round: heaprec attach did not say where it serves"
      curl -sf -o "$dir/served.pb.gz" "$url" || fail "round $round: nothing served at $url"
      "$heaprec" report "$dir/served.pb.gz" > /dev/null 2>&1 || fail "round $round: not a profile"
      "$heaprec" detach "$pid" > /dev/null 2> "$dir/attach.err" || fail "round $round: detach failed"
      expect_descriptors "$descriptors_before" "after detach $round"
      if curl -s -o /dev/null "$url"; then fail "round $round: $url still answers after the detach"; fi
    done
    attach
    go_and_check read
    if grep -q heaprec "$dir/err"; then fail "heaprec wrote on the program's stderr: $(cat "$dir/err")"; fi
    ;;
  descriptors)
    # A descriptor leak: the target has every number below its soft limit (64, hard 4096) in use.
    # attach and dump raise the soft limit while the thread is held and put it back (the program's
    # own open still fails, and its limit reads 64 at the end, as in a plain run); the library's
    # own files, its final profile among them, get a number past the limit. With the hard limit
    # at the soft one (lowered for good: raising it takes CAP_SYS_RESOURCE), a dump and a detach are
    # refused with the prlimit that makes room, and nothing changes; that target is then killed.
    soft_limit() { prlimit --pid "$pid" --nofile --output SOFT --noheadings | tr -d ' '; }
    start "$target" fdfull
    attach
    prlimit --pid "$pid" --nofile=64:64
    descriptors_before=$(ls /proc/$pid/fd)
    for verb in dump detach; do
      status=0
      "$heaprec" "$verb" "$pid" > /dev/null 2> "$dir/attach.err" || status=$?
      [[ $status == 1 ]] || fail "$verb with no room: status $status"
      grep -q "every descriptor its limit allows in use (.*): heaprec needs .*\`prlimit --pid $pid --nofile=6[58]\`" \
        "$dir/attach.err" || fail "$verb with no room: $(cat "$dir/attach.err")"
    done
    [[ $(ls /proc/$pid/fd) == "$descriptors_before" ]] || fail "the refusals changed the descriptors"
    kill -KILL "$pid"
    exec 8>&-
    for _ in $(seq 1 200); do [[ -f $dir/status ]] && break; sleep 0.05; done
    rm -f "$dir/in" "$dir/status" "$dir/out"
    start "$target" fdfull
    attach
    grep -qh 'soft RLIMIT_NOFILE was 68 instead of 64 while its thread was held' \
      "$dir/attach.out" "$dir/attach.err" || fail "attach does not say it made room: $(cat "$dir/attach.err")"
    [[ $(soft_limit) == 64 ]] || fail "the soft limit is $(soft_limit) after the attach"
    "$heaprec" dump -o "$dir/prof/dump.pb.gz" "$pid" > /dev/null 2> "$dir/attach.err" || fail "dump failed"
    "$heaprec" report "$dir/prof/dump.pb.gz" > /dev/null 2>&1 || fail "the dump is not a profile"
    [[ $(soft_limit) == 64 ]] || fail "the soft limit is $(soft_limit) after the dump"
    go_and_check fdfull
    if "$heaprec" report "$dir/prof/p.$pid.pb.gz" 2>&1 | grep -q final_write_error; then
      fail "the final profile could not be written"
    fi
    ;;
  cycles)
    # 50 attaches and detaches while 8 threads allocate and check their blocks.
    start "$target" threads
    descriptors_before=$(ls /proc/$pid/fd)
    for i in $(seq 1 50); do
      "$heaprec" attach --sample-interval 64K -o "$dir/prof/p.%p.pb.gz" "$pid" > /dev/null 2> "$dir/attach.err" ||
        fail "attach $i failed"
      "$heaprec" detach "$pid" > /dev/null 2> "$dir/attach.err" || fail "detach $i failed"
    done
    # Each detach gives the program its descriptor table back: the handed-over directory is closed.
    expect_descriptors "$descriptors_before" "after 50 detaches"
    # Nor does a detached process keep a heap record: nothing would follow or remove it.
    records=$(find "$dir/prof" -name '*.record')
    [[ -z $records ]] || fail "heap records left after the detaches: $records"
    attach
    send go
    finish
    expect_plain threads
    grep -q 'threads balanced 1 bad 0' "$dir/out" || fail "the program's own accounting is off"
    check_profile
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
echo "ok ($scenario)"
