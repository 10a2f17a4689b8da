# frozen_string_literal: true

# The heaprec gem: the Ruby front end of heaprec. Its native extension compiles the heap recorder
# core (../src/core) directly, so the gem and the native profiler share one implementation, and
# their version: the checkout's VERSION file, which extconf.rb compiles into the extension
# (Heaprec::VERSION). Like src/core, it stays outside the gem's files: the gem builds from a checkout.
require_relative "lib/heaprec/ruby_support"

Gem::Specification.new do |spec|
  spec.name = "heaprec"
  spec.version = File.read(File.expand_path("../VERSION", __dir__)).strip
  spec.summary = "Sampling live-heap profiler for Ruby objects (pprof output)"
  spec.description = "Samples object allocations, tracks which sampled objects are still alive " \
                     "and writes them as a pprof heap profile with Ruby stacks, classes and GC ages."
  spec.authors = ["heaprec authors"]
  spec.license = "Apache-2.0"
  spec.required_ruby_version = Heaprec::SUPPORTED_RUBY
  spec.files = Dir["lib/**/*.rb", "ext/heaprec/*.{cc,h,rb}"]
  spec.require_paths = ["lib"]
  spec.extensions = ["ext/heaprec/extconf.rb"]
end
