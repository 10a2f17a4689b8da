# frozen_string_literal: true
#
# bench/run.py's probe for heaprec's Ruby front end, loaded right after the profiler:
#
#     RUBYOPT="-rheaprec/autorun -r/path/to/rb_dump_probe.rb" HEAPREC_BENCH_LOG=/tmp/x/probe.log
#
# Wraps Heaprec.dump and Heaprec._dump (autorun's dumps: the exit dump included) and appends one line per
# dump to $HEAPREC_BENCH_LOG: its wall time and Heaprec.stats taken just before it, as
# `heaprec_dump seconds=0.0123 sampled=... tracked=...`. Requires nothing, allocates nothing until a
# dump, so the program runs as it would without it. A dump that raises or crashes leaves no line.
module HeaprecBenchProbe
  def self.timed
    before = begin
      Heaprec.stats
    rescue StandardError
      {}
    end
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    result = yield
    seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    log = ENV["HEAPREC_BENCH_LOG"]
    if log && !log.empty?
      fields = before.map { |k, v| "#{k}=#{v}" }.join(" ")
      File.open(log, "a") { |f| f.puts("heaprec_dump seconds=#{format('%.6f', seconds)} #{fields}") }
    end
    result
  end

  def dump(path)
    HeaprecBenchProbe.timed { super }
  end

  # autorun's dumps (at exit, on its interval...) go through Heaprec._dump(path, reason).
  def _dump(path, reason)
    HeaprecBenchProbe.timed { super }
  end
end

Heaprec.singleton_class.prepend(HeaprecBenchProbe) if defined?(Heaprec)
