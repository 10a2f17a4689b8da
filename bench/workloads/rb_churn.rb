# frozen_string_literal: true

require "tmpdir"

# A string-churning loop for the Ruby front end's per-sample and dump costs: builds N strings,
# keeps one in ten, then times one dump. docs/design/ruby.md quotes it:
#
#   RUBYLIB=build/lib/ruby ruby bench/workloads/rb_churn.rb 0      # without heaprec
#   RUBYLIB=build/lib/ruby ruby bench/workloads/rb_churn.rb 1      # every object sampled
#
# Prints: sample_every, loop seconds, dump seconds, and [freed, tracked, profiler_bytes].
every = Integer(ARGV.fetch(0, "1"))
n = Integer(ARGV.fetch(1, "300000"))
if every.positive?
  require "heaprec"
  Heaprec.start(sample_every: every, seed: 1)
end
keep = []
clock = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }
start = clock.call
n.times do |i|
  s = "x#{i}"
  keep << s if (i % 10).zero?
end
loop_seconds = clock.call - start
GC.start
dump_seconds = nil
if every.positive?
  start = clock.call
  Heaprec.dump(File.join(Dir.tmpdir, "rb_churn.#{Process.pid}.pb.gz"))
  dump_seconds = clock.call - start
end
stats = every.positive? ? Heaprec.stats.values_at(:freed, :tracked, :profiler_bytes) : nil
p [every, loop_seconds.round(3), dump_seconds&.round(3), stats, keep.size]
