# frozen_string_literal: true

# Shared set-up for heaprec's Ruby tests (minitest, Ruby's bundled test framework). ctest runs each
# test file as `ruby -I<build>/lib/ruby -I tests/ruby FILE`.
require "minitest/autorun"
require "objspace"
require "tmpdir"
require "heaprec"
require_relative "pprof_decoder"

# HEAPREC_TEST_LIVENESS=weak_map runs a file's tests with the second liveness backend (the *_weak_map
# ctests): each Heaprec.start that names no backend gets it.
module LivenessUnderTest
  BACKEND = ENV["HEAPREC_TEST_LIVENESS"].to_s.then { |b| b.empty? ? nil : b.to_sym }

  def start(**options) = super(**{ liveness: BACKEND }.compact, **options)
end
Heaprec.singleton_class.prepend(LivenessUnderTest)

class HeaprecTestCase < Minitest::Test
  # Whether this run's backend is the weak map; tests of the object-id backend's FREEOBJ hook are
  # defined only without it (weak_map_test.rb tests what replaces the hook there).
  def self.weak_map_liveness? = (LivenessUnderTest::BACKEND || Heaprec.default_liveness) == :weak_map

  def setup
    @dir = Dir.mktmpdir("heaprec-ruby-test")
  end

  def teardown
    Heaprec::Testing.write_delay = 0
    Heaprec.stop
    FileUtils.remove_entry(@dir)
  end

  def path(name) = File.join(@dir, name)

  # Dumps the live heap and decodes it.
  def dump(name = "heap-#{rand(1 << 30)}.pb.gz")
    Heaprec.dump(path(name))
    DecodedProfile.new(path(name))
  end

  # The profiles matching `pattern` but the peak profiles: a run writes one whenever its heap grows
  # to 1.1x what it was at the last (after its first second), which a slow run on a busy machine
  # does; a test of the other profiles leaves it out.
  def profiles_but_peaks(pattern) = Dir[pattern].reject { |f| f.end_with?(".peak.pb.gz") }

  # A full GC, after which every object allocated before it has age >= 1.
  def full_gc = GC.start(full_mark: true, immediate_sweep: true)
end
