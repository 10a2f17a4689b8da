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
require "heaprec/ruby_support"
require "heaprec/heaprec_ext"  # also defines Heaprec::VERSION, the version compiled into it

module Heaprec
  DEFAULT_SAMPLE_EVERY = 1000
  DEFAULT_MAX_DEPTH = 400
  MAX_DEPTH_LIMIT = 10_000

  # Starts sampling. `sample_every: N` samples each new object with probability 1/N (randomly, so
  # allocation patterns cannot alias with it) and counts each sampled object N times; N = 1 tracks
  # every object. `seed:` fixes the random choices (for repeatable runs); `max_depth:` caps the
  # frames kept per stack; `liveness:` how a dump tells live objects from dead ones (:object_id or
  # :weak_map; the default depends on the Ruby version, see ruby_support.rb). Raises if already
  # started, or on a Ruby heaprec does not support.
  def self.start(sample_every: DEFAULT_SAMPLE_EVERY, seed: nil, max_depth: DEFAULT_MAX_DEPTH,
                 liveness: default_liveness)
    unsupported = unsupported_ruby_reason
    raise NotImplementedError, unsupported if unsupported
    unusable = unusable_liveness_reason(liveness)
    raise ArgumentError, "heaprec: #{unusable}" if unusable
    sample_every = positive_integer(:sample_every, sample_every, 1 << 62)
    max_depth = positive_integer(:max_depth, max_depth, MAX_DEPTH_LIMIT)
    if defined?(Ractor) && Ractor.count > 1
      raise "heaprec: cannot start while other ractors run (Ruby 3.1 crashes with allocation " \
            "hooks and ractors)"
    end
    seed = seed.nil? ? Random.new_seed & 0xffff_ffff_ffff_ffff : Integer(seed) & 0xffff_ffff_ffff_ffff
    _start(sample_every, seed, max_depth, liveness == :weak_map)
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

  def self.positive_integer(name, value, limit)
    unless value.is_a?(Integer) && value >= 1 && value <= limit
      raise ArgumentError, "heaprec: #{name} must be an Integer from 1 to #{limit}, got #{value.inspect}"
    end

    value
  end
  private_class_method :positive_integer

  # Ruby 3.1 crashes (a segmentation fault in the new ractor's first allocation) when a ractor is
  # created while an allocation hook is enabled, heaprec's or ObjectSpace's. So heaprec steps aside:
  # it stops, with one warning, before the ractor exists.
  module RactorGuard
    def new(*args, **kwargs, &block)
      if Heaprec.running?
        warn "heaprec: stopping: Ruby #{RUBY_VERSION} cannot run ractors with allocation hooks enabled"
        Heaprec.stop
      end
      super
    end
  end
  Ractor.singleton_class.prepend(RactorGuard) if defined?(Ractor)
end
