# frozen_string_literal: true

# Shared set-up for heaprec's Ruby tests (minitest, Ruby's bundled test framework). ctest runs each
# test file as `ruby -I<build>/lib/ruby -I tests/ruby FILE`.
require "minitest/autorun"
require "objspace"
require "tmpdir"
require "heaprec"
require_relative "pprof_decoder"

class HeaprecTestCase < Minitest::Test
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
