# frozen_string_literal: true

require_relative "test_helper"
require "timeout"
require "open3"

class DuringDump; end
class AfterFailure; end
class FromThread; end
class Inherited; end
class Stressed; end

# Dumps running alongside other threads, failures inside a dump, and fork.
class ConcurrencyTest < HeaprecTestCase
  # A hang is a failure, not a stuck CI job.
  def within_deadline(&block) = Timeout.timeout(60, &block)

  # The start of most tests here, within the deadline: an exact profiler tracking `count` objects of
  # `klass`, which a full GC has promoted, then the test. The objects are referenced until the test
  # returns, so every profile it takes meanwhile must count all of them.
  def tracking(count, klass)
    within_deadline do
      Heaprec.start(sample_every: 1)
      kept = Array.new(count) { klass.new }
      full_gc
      yield
      assert_equal count, kept.size
    end
  end

  # The write phase of a dump releases the GVL. Objects allocated by other threads meanwhile must
  # be recorded (the seed's "allocations during a slowed serialization are accounted for").
  def test_allocations_during_a_slowed_serialization_are_all_accounted_for
    within_deadline do
      Heaprec.start(sample_every: 1)
      Heaprec::Testing.write_delay = 1.0
      dumper = Thread.new { Heaprec.dump(path("slow.pb.gz")) }
      sleep 0.05 until dumper.status == "sleep" # in the GVL-released write phase
      kept = Array.new(2000) { DuringDump.new }
      assert dumper.alive?, "the allocations overlapped the slowed serialization"
      dumper.join
      Heaprec::Testing.write_delay = 0
      full_gc
      profile = dump
      assert_equal 2000, profile.count_of("DuringDump")
      assert_equal 2000, kept.size
    end
  end

  # A failure in the middle of a dump (here injected in the liveness pass, with the stacks pinned
  # and the snapshot half processed) must release everything: the next dump works, recording from
  # other threads goes on, and no tracked object is lost.
  def test_a_failure_inside_serialization_leaves_no_lock_held
    within_deadline do
      Heaprec.start(sample_every: 1)
      before = Array.new(500) { AfterFailure.new }
      full_gc
      Heaprec::Testing.during_next_liveness_pass { raise "failure injected" }
      error = assert_raises(RuntimeError) { Heaprec.dump(path("failed.pb.gz")) }
      assert_match(/failure injected/, error.message)
      refute File.exist?(path("failed.pb.gz"))
      after = Thread.new { Array.new(500) { AfterFailure.new } }.value
      full_gc
      profile = dump
      assert_equal 1000, profile.count_of("AfterFailure")
      assert_equal 1000, before.size + after.size
    end
  end

  def test_a_failed_write_leaves_the_profiler_usable
    tracking(100, AfterFailure) do
      assert_raises(Errno::ENOENT) { Heaprec.dump(path("no/such/dir.pb.gz")) }
      assert_raises(Errno::EISDIR, Errno::EEXIST) { Heaprec.dump(@dir) }
      profile = dump
      assert_equal 100, profile.count_of("AfterFailure")
    end
  end

  def test_a_second_concurrent_dump_is_refused_not_interleaved
    within_deadline do
      Heaprec.start(sample_every: 1)
      Heaprec::Testing.write_delay = 0.5
      first = Thread.new { Heaprec.dump(path("first.pb.gz")) }
      sleep 0.02 until first.status == "sleep"
      assert_raises(RuntimeError) { Heaprec.dump(path("second.pb.gz")) }
      first.join
      assert File.exist?(path("first.pb.gz"))
    end
  end

  # Heaprec.stop while another thread is writing must not free what that thread is using.
  def test_stop_during_a_dump_waits_for_it
    tracking(100, DuringDump) do
      Heaprec::Testing.write_delay = 0.5
      dumper = Thread.new { Heaprec.dump(path("stopped.pb.gz")) }
      sleep 0.02 until dumper.status == "sleep"
      Heaprec.stop
      GC.start # the stopped profiler's frames must still be marked
      dumper.join
      profile = DecodedProfile.new(path("stopped.pb.gz"))
      assert_equal 100, profile.count_of("DuringDump")
      Heaprec.start(sample_every: 1)
      assert Heaprec.running?
    end
  end

  def test_objects_from_many_threads_are_recorded
    within_deadline do
      Heaprec.start(sample_every: 1)
      threads = Array.new(4) { Thread.new { Array.new(250) { FromThread.new } } }
      kept = threads.map(&:value)
      full_gc
      profile = dump
      assert_equal 1000, profile.count_of("FromThread")
      assert_equal 4, kept.size
    end
  end

  # GC.stress runs a GC at every allocation: anything heaprec holds without marking it (frames,
  # queued objects) is collected at once, and any allocation inside the hook would re-enter the GC.
  def stressed(n) = Array.new(n) { |i| i.even? ? Stressed.new : "s#{i}" * 3 }

  def test_everything_survives_gc_stress
    within_deadline do
      Heaprec.start(sample_every: 1)
      GC.stress = true
      a = stressed(200)
      b = TOPLEVEL_BINDING.eval("ConcurrencyTest.new(:x).stressed(50)", "stress_eval.rb", 1)
      c = Thread.new { stressed(100) }.value
      Heaprec.dump(path("stress.pb.gz"))
      GC.stress = false
      profile = DecodedProfile.new(path("stress.pb.gz"))
      assert_equal 175, profile.count_of("Stressed"), Heaprec.stats.inspect
      assert profile.raw.functions.values.any? { |f| f.filename == "stress_eval.rb" }
      assert_equal 350, a.size + b.size + c.size
    ensure
      GC.stress = false
    end
  end

  # Interrupts aimed at the program's threads belong to the program: heaprec's bookkeeping must not
  # swallow a Timeout, a Thread#raise or a Thread#kill, however much it samples.
  def test_interrupts_reach_the_program_while_sampling_everything
    within_deadline do
      Heaprec.start(sample_every: 1)
      fired = 0
      10.times do
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        begin
          Timeout.timeout(0.1) do
            keep = []
            loop do
              2_000.times { keep << Object.new }
              keep.clear if keep.size > 200_000
              break if Process.clock_gettime(Process::CLOCK_MONOTONIC) - started > 5
            end
          end
        rescue Timeout::Error
          fired += 1
        end
      end
      assert_equal 10, fired
      victim = Thread.new { loop { Array.new(1_000) { Object.new } } }
      sleep 0.05
      victim.kill
      assert victim.join(5), "Thread#kill was lost"
    end
  end

  # An exception raised into the dumping thread mid-dump (Thread#raise, Timeout) must reach it,
  # even a RangeError, the class _id2ref uses for dead objects, and no live object may be lost.
  def test_a_range_error_raised_into_a_dump_is_not_mistaken_for_a_dead_object
    tracking(2_000, DuringDump) do
      dumper = Thread.current
      Heaprec::Testing.during_next_liveness_pass do
        Thread.new { dumper.raise(RangeError, "deadline exceeded") }.join
      end
      error = assert_raises(RangeError) { Heaprec.dump(path("interrupted.pb.gz")) }
      assert_equal "deadline exceeded", error.message
      profile = dump
      assert_equal 2_000, profile.count_of("DuringDump")
    end
  end

  # fork() from the dumping thread itself (a trap handler, here the test hook, inside the liveness
  # pass): in the child that thread is the only one and its dump must go on, not be abandoned.
  def test_fork_from_inside_a_dump_finishes_that_dump_in_the_child
    tracking(300, Inherited) do
      child_pid = nil
      Heaprec::Testing.during_next_liveness_pass { child_pid = fork }
      Heaprec.dump(path("forked-inside.pb.gz")) # both processes finish this dump
      if child_pid.nil? # the child: its dump returned; the profiler must be usable
        Heaprec.dump(path("child-after.pb.gz"))
        exit!(0)
      end
      _, status = Process.wait2(child_pid)
      assert status.success?
      child = DecodedProfile.new(path("child-after.pb.gz"))
      assert_equal 300, child.count_of("Inherited")
      parent = DecodedProfile.new(path("forked-inside.pb.gz"))
      assert_equal 300, parent.count_of("Inherited")
    end
  end

  # The dump a child carries on after a fork from inside it is the child's profile: it must name the
  # child, though the parent took the snapshot it started from. The parent waits for the child and
  # moves its file aside before writing its own under the same path.
  def test_a_dump_finished_in_a_forked_child_names_the_child
    tracking(300, Inherited) do
      target = path("forked-inside.pb.gz")
      child_target = path("child-inside.pb.gz")
      child_pid = child_status = nil
      in_child = false
      Heaprec::Testing.during_next_liveness_pass do
        child_pid = fork
        in_child = child_pid.nil?
        next if in_child # the child goes on with the dump

        _, child_status = Process.wait2(child_pid)
        File.rename(target, child_target) if File.exist?(target)
      end
      begin
        Heaprec.dump(target)
      ensure
        exit!(File.exist?(target) ? 0 : 1) if in_child
      end
      assert child_status.success?
      child = DecodedProfile.new(child_target)
      assert_equal child_pid, child.pid
      assert_equal "api", child.reason
      assert_equal 300, child.count_of("Inherited")
      parent = DecodedProfile.new(target)
      assert_equal Process.pid, parent.pid
      assert_equal 300, parent.count_of("Inherited")
    end
  end

  # stop while a dump runs, start again, stop again while the second dump runs: both stopped
  # profilers must stay marked until their dumps finish. The first is stopped before its frame names
  # are read, so frames of eval'd code that is gone by then are what an unmarked profiler loses.
  def test_two_profilers_stopped_during_their_dumps_both_finish
    within_deadline do
      Heaprec.start(sample_every: 1)
      kept = Array.new(100) { TOPLEVEL_BINDING.eval("Inherited.new", "gone_a.rb", 1) }
      full_gc
      second = nil
      Heaprec::Testing.during_next_liveness_pass do
        Heaprec.stop
        Heaprec.start(sample_every: 1)
        # Another thread: this one's allocations are the dump's own while it runs, not sampled.
        kept.concat(Thread.new { Array.new(100) { TOPLEVEL_BINDING.eval("Inherited.new", "gone_b.rb", 1) } }.value)
        full_gc
        Heaprec::Testing.write_delay = 0.5
        second = Thread.new { Heaprec.dump(path("second.pb.gz")) }
        sleep 0.01 until second.status == "sleep"
        Heaprec.stop
        Heaprec::Testing.write_delay = 0
        3.times { full_gc }
      end
      Heaprec.dump(path("first.pb.gz"))
      second.join
      first = DecodedProfile.new(path("first.pb.gz"))
      assert first.raw.functions.values.any? { |f| f.filename == "gone_a.rb" }
      assert_equal 100, first.count_of("Inherited")
      later = DecodedProfile.new(path("second.pb.gz"))
      # The second profiler started after the first 100 objects existed: it tracks only its own.
      assert_equal 100, later.count_of("Inherited")
      assert later.raw.functions.values.any? { |f| f.filename == "gone_b.rb" }
      assert_equal 200, kept.size
    end
  end

  # A path whose conversion runs Ruby code that stops the profiler.
  def test_a_path_that_stops_the_profiler_is_refused_cleanly
    Heaprec.start(sample_every: 1)
    sneaky = Object.new
    def sneaky.to_path
      Heaprec.stop
      Array.new(10_000) { "filler" }
      "/tmp/never-written.pb.gz"
    end
    assert_raises(RuntimeError) { Heaprec.dump(sneaky) }
    refute Heaprec.running?
  end

  # Ruby 3.1 crashes when a ractor is created while an allocation hook is enabled; heaprec stops
  # (with one warning) instead of taking the program down, and refuses to start beside ractors.
  def test_ractors_stop_heaprec_instead_of_crashing
    script = <<~RUBY
      require "heaprec"
      Heaprec.start(sample_every: 1)
      r = Ractor.new { Array.new(1000) { "x" } .size }
      p [r.take, Heaprec.running?]
      begin
        Heaprec.start
      rescue RuntimeError => e
        puts e.message
      end
    RUBY
    out, err, status = Open3.capture3({ "RUBYLIB" => $LOAD_PATH.find { |d| File.exist?(File.join(d, "heaprec.rb")) } },
                                      "ruby", "-e", script)
    assert status.success?, err
    assert_match(/\[1000, false\]/, out)
    assert_match(/heaprec: stopping/, err)
    if out.include?("cannot start")
      assert_match(/other ractors/, out)
    end
  end

  # The child of fork has the parent's objects, alive: the tracked set comes along.
  def test_fork_keeps_the_tracked_objects
    tracking(300, Inherited) do
      child_path = path("child.pb.gz")
      pid = fork do
        more = Array.new(50) { Inherited.new }
        GC.start
        Heaprec.dump(child_path)
        exit!(more.size == 50 ? 0 : 1)
      end
      _, status = Process.wait2(pid)
      assert status.success?
      child = DecodedProfile.new(child_path)
      assert_equal 350, child.count_of("Inherited")
      assert_equal pid, child.pid, "the child's profile names the child"
      parent = dump
      assert_equal 300, parent.count_of("Inherited")
      assert_equal Process.pid, parent.pid
    end
  end

  # fork() while another thread is in the middle of a dump: the child must not inherit a dump
  # that can never finish.
  def test_fork_during_a_dump_leaves_the_child_usable
    tracking(100, Inherited) do
      Heaprec::Testing.write_delay = 0.5
      dumper = Thread.new { Heaprec.dump(path("parent.pb.gz")) }
      sleep 0.02 until dumper.status == "sleep"
      child_path = path("child-during.pb.gz")
      pid = fork do
        Heaprec::Testing.write_delay = 0
        Heaprec.dump(child_path)
        exit!(0)
      end
      _, status = Process.wait2(pid)
      dumper.join
      assert status.success?
      child = DecodedProfile.new(child_path)
      assert_equal 100, child.count_of("Inherited")
      assert_equal pid, child.pid
      assert_equal Process.pid, DecodedProfile.new(path("parent.pb.gz")).pid
    end
  end
end
