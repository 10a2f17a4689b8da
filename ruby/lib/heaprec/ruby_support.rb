# frozen_string_literal: true

# The Ruby versions heaprec runs on, and how it tells live objects from dead ones on each, in one
# place: the gemspec's required_ruby_version and the checks Heaprec.start makes (docs/design/ruby.md,
# "Ruby versions").
#
# Two liveness backends:
# - :object_id, by object id and ObjectSpace._id2ref, on Ruby 3.0 to 3.4. Ruby 4.0 (the 3.5 previews)
#   deprecates _id2ref and no longer keeps the id table it relies on; 4.1 removes it.
# - :weak_map, an ObjectSpace::WeakMap from a counter key to each sampled object, the default from
#   Ruby 3.5. On Ruby 3.1 it can be chosen (liveness: :weak_map) and is tested, but is not the
#   default: there WeakMap gives every value a finalizer, which the program can see.
# Below 3.0 object ids and the hooks heaprec uses differ; beyond 4.1 nothing is known yet.
module Heaprec
  SUPPORTED_RUBY = [">= 3.0", "< 4.2"].freeze
  WEAK_MAP_FROM = "3.5"
  LIVENESS_BACKENDS = %i[object_id weak_map].freeze

  # nil when `version` is supported; else the one line saying why not.
  def self.unsupported_ruby_reason(version = RUBY_VERSION)
    return nil if Gem::Requirement.new(*SUPPORTED_RUBY).satisfied_by?(Gem::Version.new(version))

    if Gem::Version.new(version) < Gem::Version.new("3.0")
      "heaprec needs Ruby 3.0 or later, not #{version}"
    else
      "heaprec does not support Ruby #{version} yet (supported: Ruby 3.0 to 4.1)"
    end
  end

  # The liveness backend heaprec uses on `version` unless told otherwise.
  def self.default_liveness(version = RUBY_VERSION)
    Gem::Version.new(version) >= Gem::Version.new(WEAK_MAP_FROM) ? :weak_map : :object_id
  end

  # nil when `backend` can run on `version`; else the one line saying why not.
  def self.unusable_liveness_reason(backend, version = RUBY_VERSION)
    unless LIVENESS_BACKENDS.include?(backend)
      return "liveness must be one of #{LIVENESS_BACKENDS.map(&:inspect).join(', ')}, got #{backend.inspect}"
    end
    return nil unless backend == :object_id && Gem::Version.new(version) >= Gem::Version.new(WEAK_MAP_FROM)

    "liveness :object_id needs ObjectSpace._id2ref, which Ruby #{version} deprecates or lacks; " \
      "use :weak_map"
  end
end
