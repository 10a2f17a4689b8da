# frozen_string_literal: true

require_relative "test_helper"

# One class per property, so no other test's objects are counted.
class RequestTemporary; end
class LongLived; end
class DiedBeforeMarking; end
class SparseLongLived; end
class SparseTemporary; end

# Live means live: a dump taken while an incremental major GC is marking must not report objects
# the GC has not yet judged. While it marks, every unmarked object still looks alive to _id2ref,
# and the GC count has already moved on, so a temporary allocated just before the GC started reads
# as having survived one GC.
class LivenessTest < HeaprecTestCase
  def start_incremental_marking
    GC.start(full_mark: true, immediate_mark: false, immediate_sweep: false)
    assert_equal :marking, GC.latest_gc_info(:state), "the GC did not stop in its marking phase"
  end

  # The interval dump of a service between requests: 4,000 long-lived objects, the last request's
  # 1,000 temporaries already unreachable, and a major GC that has just begun marking.
  def test_temporaries_of_the_last_request_are_not_live_during_marking
    Heaprec.start(sample_every: 1)
    kept = Array.new(4000) { LongLived.new }
    full_gc
    temporaries = Array.new(1000) { RequestTemporary.new }
    temporaries.size
    temporaries = nil
    start_incremental_marking
    profile = dump
    assert_equal 4000, profile.count_of("LongLived")
    assert_equal 0, profile.count_of("RequestTemporary"),
                 "unreachable temporaries reported live while the GC was marking"
    assert_nil temporaries
    refute_empty kept
  end

  # Objects that had survived a GC and then died: also unmarked, also judged only when the
  # marking ends.
  def test_old_objects_that_died_are_not_live_during_marking
    Heaprec.start(sample_every: 1)
    dying = Array.new(2000) { DiedBeforeMarking.new }
    full_gc
    assert_equal 2000, dump.count_of("DiedBeforeMarking")
    dying = nil
    start_incremental_marking
    assert_equal 0, dump.count_of("DiedBeforeMarking")
    assert_nil dying
  end

  # The same at a sparse rate, where the FREEOBJ hook is off (issue 28 item 7): nothing forgets the
  # dead between dumps, so the dump's liveness pass alone must drop the temporaries and the old
  # objects that died, also while a GC is marking.
  # (The dead are made in methods of their own, and the same C path then runs again with other
  # objects: a stale reference to their array left in the test's frame or on the machine stack,
  # which the GC scans conservatively, would keep all 20,000 alive for one more GC. Without the second
  # call that happened in 4 runs of 5: ObjectSpace still held all 20,000 right after the dump, so
  # reporting them was right, and the next GC freed them.)
  def test_with_the_free_hook_off_the_dead_are_not_live_during_marking
    Heaprec.start(sample_every: 101, seed: 7)
    assert_equal 0, Heaprec.stats[:free_hook]
    kept = Array.new(40_000) { SparseLongLived.new }
    assert_operator old_objects_then_dead(20_000), :>, 0
    request_temporaries(20_000)
    Array.new(1_000) { Object.new }.size
    start_incremental_marking
    profile = dump
    assert_equal 0, profile.count_of("DiedBeforeMarking")
    assert_equal 0, profile.count_of("SparseTemporary")
    assert_in_delta 40_000, profile.count_of("SparseLongLived"), 6 * Math.sqrt(40_000 * 101)
    assert_equal 0, Heaprec.stats[:freed], "the FREEOBJ hook was off"
    refute_empty kept
  end

  # Objects that survive a GC and are reported, then die; returns how many the dump counted.
  def old_objects_then_dead(n)
    dying = Array.new(n) { DiedBeforeMarking.new }
    full_gc
    dump.count_of("DiedBeforeMarking").tap { dying.clear }
  end

  def request_temporaries(n) = Array.new(n) { SparseTemporary.new }.size

  # The program's own GC.disable is left as it was.
  def test_a_program_that_disabled_the_gc_keeps_it_disabled
    Heaprec.start(sample_every: 1)
    GC.disable
    dump
    assert GC.disable, "the dump enabled the GC"
  ensure
    GC.enable
  end
end
