# frozen_string_literal: true

require_relative "test_helper"
require "timeout"

class DuringDump; end
class AfterFailure; end
class FromThread; end
class Inherited; end
class Stressed; end

# Dumps running alongside other threads, failures inside a dump, and fork.
class ConcurrencyTest < HeaprecTestCase
  # A hang is a failure, not a stuck CI job.
  def within_deadline(&block) = Timeout.timeout(60, &block)

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
      assert_equal 2000, profile.sum(profile.samples_of_class("DuringDump"), "inuse_objects")
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
      Heaprec::Testing.fail_during_liveness_pass!
      error = assert_raises(RuntimeError) { Heaprec.dump(path("failed.pb.gz")) }
      assert_match(/failure injected/, error.message)
      refute File.exist?(path("failed.pb.gz"))
      after = Thread.new { Array.new(500) { AfterFailure.new } }.value
      full_gc
      profile = dump
      assert_equal 1000, profile.sum(profile.samples_of_class("AfterFailure"), "inuse_objects")
      assert_equal 1000, before.size + after.size
    end
  end

  def test_a_failed_write_leaves_the_profiler_usable
    within_deadline do
      Heaprec.start(sample_every: 1)
      kept = Array.new(100) { AfterFailure.new }
      full_gc
      assert_raises(Errno::ENOENT) { Heaprec.dump(path("no/such/dir.pb.gz")) }
      assert_raises(Errno::EISDIR, Errno::EEXIST) { Heaprec.dump(@dir) }
      profile = dump
      assert_equal 100, profile.sum(profile.samples_of_class("AfterFailure"), "inuse_objects")
      assert_equal 100, kept.size
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
    within_deadline do
      Heaprec.start(sample_every: 1)
      kept = Array.new(100) { DuringDump.new }
      full_gc
      Heaprec::Testing.write_delay = 0.5
      dumper = Thread.new { Heaprec.dump(path("stopped.pb.gz")) }
      sleep 0.02 until dumper.status == "sleep"
      Heaprec.stop
      GC.start # the stopped profiler's frames must still be marked
      dumper.join
      profile = DecodedProfile.new(path("stopped.pb.gz"))
      assert_equal 100, profile.sum(profile.samples_of_class("DuringDump"), "inuse_objects")
      Heaprec.start(sample_every: 1)
      assert Heaprec.running?
      assert_equal 100, kept.size
    end
  end

  def test_objects_from_many_threads_are_recorded
    within_deadline do
      Heaprec.start(sample_every: 1)
      threads = Array.new(4) { Thread.new { Array.new(250) { FromThread.new } } }
      kept = threads.map(&:value)
      full_gc
      profile = dump
      assert_equal 1000, profile.sum(profile.samples_of_class("FromThread"), "inuse_objects")
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
      assert_equal 175, profile.sum(profile.samples_of_class("Stressed"), "inuse_objects")
      assert profile.raw.functions.values.any? { |f| f.filename == "stress_eval.rb" }
      assert_equal 350, a.size + b.size + c.size
    ensure
      GC.stress = false
    end
  end

  # The child of fork has the parent's objects, alive: the tracked set comes along.
  def test_fork_keeps_the_tracked_objects
    within_deadline do
      Heaprec.start(sample_every: 1)
      kept = Array.new(300) { Inherited.new }
      full_gc
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
      assert_equal 350, child.sum(child.samples_of_class("Inherited"), "inuse_objects")
      parent = dump
      assert_equal 300, parent.sum(parent.samples_of_class("Inherited"), "inuse_objects")
      assert_equal 300, kept.size
    end
  end

  # fork() while another thread is in the middle of a dump: the child must not inherit a dump
  # that can never finish.
  def test_fork_during_a_dump_leaves_the_child_usable
    within_deadline do
      Heaprec.start(sample_every: 1)
      kept = Array.new(100) { Inherited.new }
      full_gc
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
      assert_equal 100, child.sum(child.samples_of_class("Inherited"), "inuse_objects")
      assert_equal 100, kept.size
    end
  end
end
