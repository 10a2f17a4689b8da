# frozen_string_literal: true

require_relative "test_helper"
require "open3"

# Every way a profiled Ruby process can end, and the ways to get a profile while it runs, as the
# native profiler has them: each ending leaves a profile named as native profiles name it, and the
# program's own ending (status, signal) is unchanged.
class EndingsTest < HeaprecTestCase
  def heaprec = ENV.fetch("HEAPREC_BIN")
  def ruby_lib = File.dirname($LOADED_FEATURES.grep(/heaprec\.rb$/).first)

  # Runs `source` with autorun loaded (no CLI: each profile is announced on stderr).
  def run_ruby(source, env = {})
    script = path("program.rb")
    File.write(script, "class Kept; end\nkept = Array.new(300) { Kept.new }\nGC.start\n#{source}")
    Open3.capture3({ "RUBYLIB" => ruby_lib, "RUBYOPT" => "-rheaprec/autorun",
                     "HEAPREC_SAMPLE_EVERY" => "1", "HEAPREC_OUTPUT" => path("p.%p.pb.gz") }
                     .merge(env), "ruby", script)
  end

  def profiles = Dir[path("p.*.pb.gz")].map { |f| DecodedProfile.new(f) }

  def test_sigterm_is_terminated_and_the_process_still_dies_of_it
    _, err, status = run_ruby("Process.kill('TERM', Process.pid)\nsleep 5\n")
    assert_equal Signal.list.fetch("TERM"), status.termsig, err
    assert_equal ["terminated"], profiles.map(&:reason), err
    assert_equal 300, profiles.first.count_of("Kept")
  end

  def test_an_exception_ending_the_program_is_exit
    _, err, status = run_ruby("raise 'boom'\n")
    assert_equal 1, status.exitstatus
    assert_match(/boom/, err)
    assert_equal ["exit"], profiles.map(&:reason)
  end

  # exit! skips at_exit; forking job runners end their children with it.
  def test_exit_bang_writes_the_profile_native_programs_write_at__exit
    out, err, status = run_ruby(<<~RUBY)
      class ChildOnly; end
      pid = fork do
        mine = Array.new(200) { ChildOnly.new }
        GC.start
        exit!(mine.size == 200 ? 7 : 1)
      end
      Process.wait(pid)
      $stdout.sync = true # exit! does not flush
      puts $?.exitstatus
      Process.exit!(4)
    RUBY
    assert_equal 4, status.exitstatus, err
    assert_equal "7\n", out
    by_reason = profiles.group_by(&:reason)
    assert_equal ["_exit"], by_reason.keys, err
    assert_equal 2, by_reason["_exit"].size
    child = by_reason["_exit"].find { |p| p.samples_of_class("ChildOnly").any? }
    refute_nil child, err
    assert_equal 200, child.count_of("ChildOnly")
    assert_equal 300, child.count_of("Kept")
  end

  # A ractor stops heaprec (Ruby 3.1 crashes with allocation hooks and ractors): what was
  # gathered is written first, and nothing is lost at exit.
  def test_a_ractor_stops_heaprec_after_writing_what_it_gathered
    _, err, status = run_ruby("Ractor.new { 1 }.take\n")
    assert status.success?, err
    assert_match(/heaprec: stopping: Ruby #{Regexp.escape(RUBY_VERSION)} cannot run ractors/, err)
    assert_equal ["detach"], profiles.map(&:reason), err
    assert_equal 300, profiles.first.count_of("Kept")
  end

  # The dump signal, through `heaprec run --ruby --dump-signal`: a profile when it arrives (reason
  # signal, listed as such), then the exit profile.
  def test_the_dump_signal_writes_a_profile_while_the_program_runs
    script = path("signalled.rb")
    File.write(script, <<~RUBY)
      class Kept; end
      kept = Array.new(300) { Kept.new }
      GC.start
      Process.kill("USR2", Process.pid)
      deadline = Time.now + 20
      # (a peak profile, which a slow run may also write, is not the one waited for)
      sleep 0.05 until Dir[#{path("s.*.pb.gz").inspect}].count { |f| !f.end_with?(".peak.pb.gz") } == 1 || Time.now > deadline
      sleep 0.2 # the file is renamed into place once written
    RUBY
    _, stderr, status = Open3.capture3(heaprec, "run", "--ruby", "--sample-every", "1",
                                       "--dump-signal", "SIGUSR2", "--top", "0",
                                       "-o", path("s.%p.pb.gz"), "--", "ruby", script)
    assert status.success?, stderr
    written = profiles_but_peaks(path("s.*.pb.gz")).map { |f| DecodedProfile.new(f) }
    assert_equal %w[exit signal], written.map(&:reason).sort, stderr
    assert_equal 300, written.find { |p| p.reason == "signal" }.count_of("Kept")
    assert_match(/\(pid \d+, signal\)/, stderr)
  end

  def test_a_run_with_no_profile_says_why_in_ruby_terms
    _, stderr, status = Open3.capture3(heaprec, "run", "--ruby", "-o", path("k.%p.pb.gz"), "--",
                                       "ruby", "-e", "Process.kill('KILL', Process.pid)")
    refute status.success?
    assert_match(/no profile was written \(was the program killed by SIGKILL before its first peak or checkpoint profile/,
                 stderr)
  end

  # The peak profile, as native programs have it: written as the heap grows, so a process killed
  # without warning (SIGKILL, the OOM killer) leaves the heap at its highest. The program holds
  # 12,000 objects, with GCs that measure the heap, until the peak file is there (the first peak
  # write waits a second; on a busy machine the writing thread may wait longer for its turn), then
  # drops them and is killed.
  def test_sigkill_leaves_the_peak_profile_written_as_the_heap_grew
    script = path("peaked.rb")
    File.write(script, <<~RUBY)
      class Held; end
      held = Array.new(12_000) { Held.new }
      deadline = Time.now + 30
      until Dir[#{path("k.*.peak.pb.gz").inspect}].any? || Time.now > deadline
        GC.start
        sleep 0.1
      end
      held = nil
      GC.start
      sleep 0.5
      Process.kill("KILL", Process.pid)
    RUBY
    _, stderr, status = Open3.capture3(heaprec, "run", "--ruby", "--sample-every", "1",
                                       "--top", "0", "-o", path("k.%p.pb.gz"), "--", "ruby", script)
    assert_equal Signal.list.fetch("KILL"), status.exitstatus - 128, stderr
    peaks = Dir[path("k.*.peak.pb.gz")].map { |f| DecodedProfile.new(f) }
    assert_equal ["peak"], peaks.map(&:reason), stderr
    assert_equal 12_000, peaks.first.count_of("Held")
    assert_match(/k\.\d+\.peak\.pb\.gz  \(pid \d+, peak\)/, stderr)
  end

  # A heap that grew and shrank: the peak file keeps the high point, the exit profile the end.
  def test_the_peak_profile_keeps_what_the_exit_profile_no_longer_holds
    _, err, status = run_ruby(<<~RUBY)
      class Held; end
      held = Array.new(20_000) { Held.new }
      25.times { GC.start; sleep 0.1 }
      held = nil
      GC.start
    RUBY
    assert status.success?, err
    by_reason = profiles.to_h { |p| [p.reason, p] }
    assert_equal %w[exit peak], by_reason.keys.sort, err
    assert_equal 20_000, by_reason["peak"].count_of("Held")
    assert_equal 0, by_reason["exit"].count_of("Held")
    assert_equal 300, by_reason["peak"].count_of("Kept")
  end

  # A program that does not grow writes no peak profile: its heap never passed 1.1x its size when
  # heaprec started.
  def test_a_steady_heap_writes_no_peak_profile
    _, err, status = run_ruby("10.times { GC.start; sleep 0.15 }\n")
    assert status.success?, err
    assert_equal ["exit"], profiles.map(&:reason), err
  end

  # Without --dump-interval a checkpoint rewrites the final profile's file (every minute; the test
  # shortens it by defining the constant first): a process killed without warning leaves its heap
  # as of the last checkpoint, not only its peak.
  def test_sigkill_leaves_the_last_checkpoint_in_the_final_profiles_file
    prelude = path("short_checkpoint.rb")
    File.write(prelude, "module Heaprec; module Autorun; CHECKPOINT_SECONDS = 0.2; end; end\n")
    _, err, status = run_ruby(<<~RUBY, "RUBYOPT" => "-r#{prelude} -rheaprec/autorun")
      class Late; end
      late = Array.new(500) { Late.new }
      GC.start
      sleep 1
      Process.kill("KILL", Process.pid)
    RUBY
    assert_equal Signal.list.fetch("KILL"), status.termsig, err
    checkpoint = profiles.reject { |p| p.reason == "peak" }
    assert_equal ["interval"], checkpoint.map(&:reason), err
    assert_equal 500, checkpoint.first.count_of("Late")
    assert_equal 300, checkpoint.first.count_of("Kept")
    assert_equal 1, Dir[path("p.*.pb.gz")].count { |f| !f.end_with?(".peak.pb.gz") }
  end
end
