# frozen_string_literal: true
#
# Ruby's built-in allocation tracing, for comparison with heaprec's Ruby front end, loaded before the
# program (bench/run.py):
#
#     RUBYOPT=-r/path/to/rb_objspace_trace.rb [HEAPREC_BENCH_OBJSPACE_DUMP=heap.json
#                                              HEAPREC_BENCH_LOG=probe.log] ruby app.rb
#
# Starts ObjectSpace.trace_object_allocations (every object gets its file, line, method and GC
# generation recorded). With HEAPREC_BENCH_OBJSPACE_DUMP set, it also writes the live heap at exit
# with ObjectSpace.dump_all (one JSON line per live object, with those allocation sites: what a
# trace is read from), timed like heaprec's exit dump, one line appended to $HEAPREC_BENCH_LOG.
require "objspace"

ObjectSpace.trace_object_allocations_start

dump_path = ENV["HEAPREC_BENCH_OBJSPACE_DUMP"]
if dump_path && !dump_path.empty?
  at_exit do
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    File.open(dump_path, "w") { |f| ObjectSpace.dump_all(output: f) }
    seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    log = ENV["HEAPREC_BENCH_LOG"]
    File.open(log, "a") { |f| f.puts("objspace_dump seconds=#{format('%.6f', seconds)}") } if log
  end
end
