# frozen_string_literal: true

# heaprec for Ruby: a sampling live-heap profiler. It samples object allocations, remembers the
# Ruby stack of each sampled object, asks the VM at dump time which of them are still alive, and
# writes the survivors as a pprof profile (the same format as heaprec's native profiler, read by
# `heaprec report`, `flame`, `diff`, `leaks` and by pprof itself).
#
#   require "heaprec"
#   Heaprec.start(sample_every: 1000)   # each object sampled with probability 1/1000
#   ...
#   Heaprec.dump("heap.pb.gz")          # live sampled objects, each counting 1000
#   Heaprec.stop
require "heaprec/heaprec_ext"

module Heaprec
  VERSION = "0.1.0"
  DEFAULT_SAMPLE_EVERY = 1000
  DEFAULT_MAX_DEPTH = 400

  # Starts sampling. `sample_every: N` samples each new object with probability 1/N (randomly, so
  # allocation patterns cannot alias with it) and counts each sampled object N times; N = 1 tracks
  # every object. `seed:` fixes the random choices (for repeatable runs); `max_depth:` caps the
  # frames kept per stack. Raises if already started.
  def self.start(sample_every: DEFAULT_SAMPLE_EVERY, seed: nil, max_depth: DEFAULT_MAX_DEPTH)
    sample_every = positive_integer(:sample_every, sample_every)
    max_depth = positive_integer(:max_depth, max_depth)
    seed = seed.nil? ? Random.new_seed & 0xffff_ffff_ffff_ffff : Integer(seed) & 0xffff_ffff_ffff_ffff
    _start(sample_every, seed, max_depth)
  end

  # Profiles the block and writes the live heap at its end to `path`.
  def self.profile(path, **options)
    start(**options)
    begin
      yield
      dump(path)
    ensure
      stop
    end
  end

  def self.positive_integer(name, value)
    unless value.is_a?(Integer) && value >= 1
      raise ArgumentError, "heaprec: #{name} must be a positive Integer, got #{value.inspect}"
    end

    value
  end
  private_class_method :positive_integer
end
