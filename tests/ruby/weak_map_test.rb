# frozen_string_literal: true

require_relative "test_helper"
require "open3"
require "timeout"

class WmKept; end
class WmDead; end
class WmChurn; end
class WmBoom < StandardError; end

# The second liveness backend, ObjectSpace::WeakMap (issue 28 item 5; weak_map_liveness.h): the
# default from Ruby 3.5, chosen here with liveness: :weak_map. heap_profiler_test, liveness_test and
# concurrency_test also run whole with it (their *_weak_map ctests); this file tests what is its
# own: the same heap as object ids report, the prune that replaces the FREEOBJ hook, and what
# happens when the Ruby calls it makes from the postponed job are interrupted.
class WeakMapTest < HeaprecTestCase
  def within_deadline(&block) = Timeout.timeout(60, &block)

  # kept objects, objects that died after a GC, and temporaries, at two sites each. The dead are
  # made on a thread that has ended before the last GC: Ruby marks live threads' machine stacks
  # conservatively, and a stale word there (left by whatever ran before, a killed thread's
  # test say) could keep one of them alive through it.
  def mixed_heap
    kept = Array.new(3000) { WmKept.new }
    kept += Array.new(1000) { WmKept.new }
    Thread.new do
      dead = Array.new(2000) { WmDead.new }
      full_gc
      dead.clear
      500.times { WmDead.new }
    end.join
    full_gc
    kept
  end

  def by_site(profile, class_name)
    profile.samples_of_class(class_name).group_by { |s| profile.frames(s).first.line }
           .transform_values { |samples| profile.sum(samples, "inuse_objects") }
  end

  # Same program, every object sampled: both backends report the same live objects at the same
  # sites, and the weak map says which one it is.
  def test_both_backends_report_the_same_heap
    reports = %i[object_id weak_map].map do |backend|
      Heaprec.start(sample_every: 1, liveness: backend)
      assert_equal backend, Heaprec.stats[:liveness]
      kept = mixed_heap
      profile = dump
      Heaprec.stop
      assert_equal 4000, kept.size
      [by_site(profile, "WmKept"), profile.count_of("WmDead")]
    end
    assert_equal reports[0], reports[1]
    assert_equal [3000, 1000], reports[1][0].values.sort.reverse
    assert_equal 0, reports[1][1]
  end

  # No FREEOBJ hook: the dead are forgotten by a prune once the tracked set has doubled since the
  # last one. A prune can forget only what the GC has collected, and an object not yet collected
  # holds a heap slot, so the tracked set stays within twice the heap's slots (plus the prune's
  # cadence, 1,024 records, and what one drain brings), however long the churn: not one entry per
  # object sampled. No live object goes with the dead.
  def test_a_prune_keeps_the_dead_from_piling_up_between_dumps
    Heaprec.start(sample_every: 1, liveness: :weak_map)
    kept = Array.new(5000) { WmKept.new }
    most_tracked = most_slots = 0
    60.times do
      10_000.times { WmChurn.new }
      most_tracked = [most_tracked, Heaprec.stats[:tracked]].max
      most_slots = [most_slots, GC.stat(:heap_available_slots)].max
    end
    stats = Heaprec.stats
    assert_equal 0, stats[:free_hook]
    assert_operator stats[:sampled], :>, 600_000
    assert_operator most_tracked, :<=, 2 * most_slots + 1024 + 4096, stats.inspect
    assert_operator stats[:freed], :>, 600_000 - (2 * most_slots + 1024 + 4096), stats.inspect
    full_gc
    profile = dump
    assert_equal 5000, profile.count_of("WmKept")
    assert_equal 0, profile.count_of("WmChurn")
    assert_equal 5000, kept.size
  end

  # Allocates until the block says to stop, within 10 s, with a pause that lets other threads run;
  # returns the objects, all kept.
  def allocate_until(kept = [])
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
    until yield || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      kept << WmKept.new
      sleep 0.001
    end
    kept
  end

  # An exception raised inside the postponed job's insertion (here by the test hook; in production
  # a Thread#raise delivered at the call's interrupt check, or a TracePoint) cannot propagate from a
  # postponed job: it is sent to the thread again and reaches the program there. The object is
  # recorded anyway.
  def test_an_exception_raised_inside_the_insertion_reaches_the_program
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      ran = false
      Heaprec::Testing.during_next_insertion do
        ran = true
        raise WmBoom, "raised inside the insertion"
      end
      kept = []
      error = assert_raises(WmBoom) { allocate_until(kept) { false } }
      assert ran
      assert_equal "raised inside the insertion", error.message
      full_gc
      assert_equal kept.size, dump.count_of("WmKept"), "an object was lost with the exception"
    end
  end

  # Ruby 3.1's Timeout: its Error, raised in the thread it was made for, throws itself to Timeout's
  # catch. Thrown inside the insertion, it must still end the block it was meant to end.
  def test_a_timeout_thrown_inside_the_insertion_ends_its_block
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      ran = false
      backtrace = Timeout::Error.catch("expired") do |timeout|
        Heaprec::Testing.during_next_insertion do
          ran = true
          raise timeout
        end
        allocate_until { false }
        flunk "the timeout was swallowed"
      end
      assert ran
      assert_kind_of Array, backtrace, "Timeout's catch returns the backtrace it was thrown with"
    end
  end

  # The same for Thread#kill: a thread killed inside the insertion dies, rather than loop on.
  def test_a_kill_inside_the_insertion_reaches_the_thread
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      ran = false
      victim = nil
      # The drain runs on whichever thread runs the postponed job: only the victim's is killed.
      kill_the_victim = proc do
        next Heaprec::Testing.during_next_insertion(&kill_the_victim) unless Thread.current == victim

        ran = true
        Thread.current.kill
      end
      victim = Thread.new do
        Thread.stop
        loop { WmChurn.new }
      end
      sleep 0.01 until victim.status == "sleep"
      Heaprec::Testing.during_next_insertion(&kill_the_victim)
      victim.run
      assert victim.join(10), "Thread#kill was swallowed by the postponed job"
      assert ran
    end
  end

  # A drain lets other threads run inside its weak map calls. Suspends the next drain of a new
  # thread there (it has queued objects of its own), and yields while it is suspended; the thread
  # is joined after.
  def with_a_drain_suspended_on_another_thread
    suspended = Queue.new
    release = Queue.new
    worker = nil
    hold = proc do
      next Heaprec::Testing.during_next_insertion(&hold) unless Thread.current == worker

      suspended << true
      release.pop
    end
    worker = Thread.new do
      Thread.stop
      Array.new(200) { WmChurn.new }
    end
    sleep 0.01 until worker.status == "sleep"
    Heaprec::Testing.during_next_insertion(&hold)
    worker.run
    suspended.pop
    yield release
    release << true
    worker.join
  end

  # A dump while another thread's drain is suspended: before, the dump's own drain saw a drain
  # under way and returned, and the objects still queued were missing from the profile (under
  # load, GC.stress runs of concurrency_test lost 120 of 175). Now the dump lets that drain end.
  def test_a_dump_waits_for_a_drain_suspended_on_another_thread
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      with_a_drain_suspended_on_another_thread do |release|
        kept = Array.new(300) { WmKept.new }
        full_gc
        Thread.new { sleep 0.2; release << true } # the drain ends while the dump waits for it
        assert_equal 300, dump.count_of("WmKept")
        assert_equal 300, kept.size
      end
    end
  end

  # A drain that does not resume while the dump waits (here it waits for the dump itself to end,
  # as a program's TracePoint on the map's methods might wait for a lock the dumping thread holds):
  # the dump waits a bounded time, then goes on without the objects still queued, and counts it.
  # Unbounded, the dump never returned. The drain finishes once released, and the next dump has
  # every object.
  def test_a_dump_does_not_wait_forever_for_a_drain_that_does_not_resume
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      Heaprec::Testing.drain_wait_seconds = 0.3
      with_a_drain_suspended_on_another_thread do |release|
        kept = Array.new(300) { WmKept.new }
        full_gc # a dump reports objects that survived a GC
        assert_equal 0, dump.count_of("WmKept") # all queued behind the suspended drain
        assert_equal 1, Heaprec.stats[:drains_not_awaited]
        release << true
        sleep 0.01 until Heaprec.stats[:pending].zero?
        full_gc
        assert_equal 300, dump.count_of("WmKept")
        assert_equal 300, kept.size
      end
    ensure
      Heaprec::Testing.drain_wait_seconds = 5
    end
  end

  # A drain that is slow but keeps moving is waited for, however long it takes in all: here the
  # first 60 insertions after the release sleep 10 ms each, twice the 0.3 s bound in all, which is
  # on a drain that stops moving. When the bound was on the whole wait, a drain slowed by GC.stress
  # on a busy machine cost the dump its objects (concurrency_test's GC.stress test, 2 runs of 26).
  def test_a_dump_waits_for_a_slow_drain_that_keeps_moving
    slowing = 60
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      Heaprec::Testing.drain_wait_seconds = 0.3
      slow = proc do
        next unless (slowing -= 1).positive?

        Heaprec::Testing.during_next_insertion(&slow)
        sleep 0.01
      end
      with_a_drain_suspended_on_another_thread do |release|
        kept = Array.new(300) { WmKept.new }
        full_gc
        Thread.new do
          sleep 0.1
          Heaprec::Testing.during_next_insertion(&slow)
          release << true
        end
        assert_equal 300, dump.count_of("WmKept")
        assert_equal 0, Heaprec.stats[:drains_not_awaited]
        assert_equal 300, kept.size
      end
    end
  ensure
    slowing = 0
    Heaprec::Testing.drain_wait_seconds = 5
  end

  # The objects other threads queue while a drain is suspended are left to it by their postponed
  # jobs (one drain at a time): it takes them before it ends, so none stays queued (and pinned)
  # until some later dump.
  def test_a_suspended_drain_takes_what_others_queued_meanwhile
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      kept = nil
      with_a_drain_suspended_on_another_thread do
        kept = Array.new(300) { WmKept.new }
        Thread.pass
        assert_operator Heaprec.stats[:pending], :>=, 300
      end
      assert_equal 0, Heaprec.stats[:pending]
      full_gc
      assert_equal 300, dump.count_of("WmKept")
      assert_equal 300, kept.size
    end
  end

  # fork() while another thread's drain is suspended: that thread does not exist in the child,
  # whose next drain records the rest, and what the parent had recorded is not recorded twice.
  def test_fork_while_another_thread_drains
    within_deadline do
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      with_a_drain_suspended_on_another_thread do
        kept = Array.new(300) { WmKept.new }
        pid = fork do
          full_gc
          exit!(dump("child.pb.gz").count_of("WmKept") == 300 ? 0 : 1)
        end
        _, status = Process.wait2(pid)
        assert status.success?, "the child's profile did not count its 300 objects once each"
        assert_equal 300, kept.size
      end
    end
  end

  # Heaprec.stop or a dump from inside the insertion (a TracePoint on the weak map's method can do
  # either): the drain that was running finishes with the profiler it had, which is deleted after
  # it; nothing crashes, and heaprec starts again.
  def test_stop_and_dump_from_inside_the_insertion
    within_deadline do
      %i[dump stop].each do |action|
        Heaprec.start(sample_every: 1, liveness: :weak_map)
        done = false
        Heaprec::Testing.during_next_insertion do
          action == :stop ? Heaprec.stop : Heaprec.dump(path("inside.pb.gz"))
          done = true
        end
        kept = allocate_until { done }
        assert done
        if action == :stop
          refute Heaprec.running?
        else
          assert File.exist?(path("inside.pb.gz"))
          full_gc
          assert_equal kept.size, dump.count_of("WmKept")
          Heaprec.stop
        end
      end
      Heaprec.start(sample_every: 1, liveness: :weak_map)
      kept = Array.new(700) { WmKept.new }
      full_gc
      assert_equal 700, dump.count_of("WmKept")
      assert_equal 700, kept.size
    end
  end

  def autorun(liveness, program)
    Open3.capture3({ "RUBYLIB" => File.dirname($LOADED_FEATURES.grep(/heaprec\.rb$/).first),
                     "RUBYOPT" => "-rheaprec/autorun", "HEAPREC_SAMPLE_EVERY" => "1",
                     "HEAPREC_RUBY_LIVENESS" => liveness, "HEAPREC_OUTPUT" => path("auto.pb.gz") },
                   "ruby", "-e", program)
  end

  # `heaprec run --ruby` and RUBYOPT=-rheaprec/autorun take the backend from HEAPREC_RUBY_LIVENESS;
  # a value that is not one is one line, and the program runs unprofiled.
  def test_autorun_takes_the_backend_from_the_environment
    out, err, status = autorun("weak_map", <<~RUBY)
      class WmKept; end
      kept = Array.new(300) { WmKept.new }
      GC.start
      puts Heaprec.stats[:liveness]
    RUBY
    assert status.success?, err
    assert_equal "weak_map\n", out
    assert_equal 300, DecodedProfile.new(path("auto.pb.gz")).count_of("WmKept")
    File.delete(path("auto.pb.gz"))
    out, err, status = autorun("weakmap", "puts Heaprec.running?")
    assert status.success?
    assert_equal "false\n", out
    assert_equal "heaprec: HEAPREC_RUBY_LIVENESS=\"weakmap\": is not one of object_id, weak_map; " \
                 "the program runs without heaprec\n", err
    refute File.exist?(path("auto.pb.gz"))
  end

  # Unknown backends, and one the Ruby lacks, are refused with one line.
  def test_liveness_errors_are_clear
    error = assert_raises(ArgumentError) { Heaprec.start(liveness: :finalizer) }
    assert_equal "heaprec: liveness must be one of :object_id, :weak_map, got :finalizer", error.message
    refute Heaprec.running?
    assert_match(/needs ObjectSpace\._id2ref, which Ruby 4\.0\.0 deprecates or lacks; use :weak_map/,
                 Heaprec.unusable_liveness_reason(:object_id, "4.0.0"))
    assert_nil Heaprec.unusable_liveness_reason(:weak_map, "3.1.2")
  end
end
