# frozen_string_literal: true

# The Ruby versions heaprec runs on, in one place: the gemspec's required_ruby_version and the check
# Heaprec.start makes (docs/design/ruby.md, "Ruby versions"). heaprec tells live objects from dead
# ones by object id through ObjectSpace._id2ref; Ruby 4.0 (the 3.5 previews) deprecates it, with its
# removal to follow, and its object ids are no longer the table heaprec's liveness pass relies on.
# Until a second liveness backend is tested there, those versions are refused with one clear line
# rather than profiled wrongly. Below 3.0, object ids and the hooks heaprec uses differ.
module Heaprec
  SUPPORTED_RUBY = [">= 3.0", "< 3.5"].freeze

  # nil when `version` is supported; else the one line saying why not.
  def self.unsupported_ruby_reason(version = RUBY_VERSION)
    return nil if Gem::Requirement.new(*SUPPORTED_RUBY).satisfied_by?(Gem::Version.new(version))

    if Gem::Version.new(version) < Gem::Version.new("3.0")
      "heaprec needs Ruby 3.0 or later, not #{version}"
    else
      "heaprec does not support Ruby #{version}: it tells live objects by ObjectSpace._id2ref, " \
        "which Ruby 4.0 deprecates (supported: Ruby 3.0 to 3.4)"
    end
  end
end
