# frozen_string_literal: true

# The fixed cost of the NEWOBJ event: allocates plain objects in a tight loop and prints the time
# per allocation. `ruby rb_alloc_loop.rb 0` runs without heaprec; `ruby rb_alloc_loop.rb N` with
# Heaprec.start(sample_every: N) (10**9 samples nothing: the event's cost alone). Run with
# RUBYLIB=<build>/lib/ruby, and interleave the settings when comparing:
#
#   for r in 1 2 3; do for n in 0 1000000000 1000 100; do
#     RUBYLIB=build/lib/ruby ruby bench/workloads/rb_alloc_loop.rb $n; done; done
every = Integer(ARGV.fetch(0, "0"))
if every.positive?
  require "heaprec"
  Heaprec.start(sample_every: every, seed: 1)
end
n = Integer(ARGV.fetch(1, "3000000"))
start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
i = 0
while i < n
  Object.new
  i += 1
end
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - start
puts format("sample_every=%<every>s %<ns>.1f ns/allocation", every: every.positive? ? every : "off",
                                                             ns: elapsed / n * 1e9)
