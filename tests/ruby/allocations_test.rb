# frozen_string_literal: true

# Allocation profiles (alloc_objects by stack and class; issue 28 item 3): every sampled allocation
# counts sample_every times, objects that died since included, each under its class; a forked
# child counts its own; the history stays one entry per (stack, class); heaprec's CLI and Go's
# pprof read it.
require_relative "test_helper"
require "open3"

class Churned; end
class ParentOnly; end
class ChildOnly; end

class AllocationsTest < HeaprecTestCase
  USER_LINE = __LINE__ + 6
  STRING_LINE = USER_LINE + 1
  ARRAY_LINE = USER_LINE + 2
  # Per iteration one object of each class, each on its own line, each garbage by the next line.
  def churn(n)
    n.times do |i|
      sink = Churned.new
      sink = "s" * 3 # the literal is frozen: only the product is allocated
      sink = [i, sink]
    end
  end

  # {[line, class name] => count} of the alloc_objects of churn's lines: the sample's first frame
  # is the allocating method (Class#new, String#*, or churn's block for the array literal) at the
  # line of churn that called it.
  def churn_allocations(profile)
    alloc = profile.value_index("alloc_objects")
    counts = Hash.new(0)
    profile.raw.samples.each do |s|
      next if s.values[alloc].zero?

      leaf = profile.frames(s).first
      next unless leaf&.file == __FILE__ && [USER_LINE, STRING_LINE, ARRAY_LINE].include?(leaf.line)

      counts[[leaf.line, profile.label(s, "class").str]] += s.values[alloc]
    end
    counts
  end

  def live_at_churn_lines(profile)
    profile.raw.samples.sum do |s|
      leaf = profile.frames(s).first
      next 0 unless leaf&.file == __FILE__ && [USER_LINE, STRING_LINE, ARRAY_LINE].include?(leaf.line)

      s.values[profile.value_index("inuse_objects")]
    end
  end

  # What the VM says churn allocates, line by line and class by class: every object allocated with
  # ObjectSpace's allocation tracing on, found again with the GC off (dead ones included).
  def ground_truth(n)
    GC.disable
    ObjectSpace.trace_object_allocations { churn(n) }
    counts = Hash.new(0)
    ObjectSpace.each_object do |o|
      next unless ObjectSpace.allocation_sourcefile(o) == __FILE__

      line = ObjectSpace.allocation_sourceline(o)
      counts[[line, o.class.name]] += 1 if [USER_LINE, STRING_LINE, ARRAY_LINE].include?(line)
    end
    counts
  ensure
    ObjectSpace.trace_object_allocations_clear
    GC.enable
  end

  # Exact mode: per site and class, the profile counts what ObjectSpace saw allocated, though
  # (almost) none of it is alive at the dump.
  def test_exact_counts_match_objectspace_by_site_and_class
    n = 2000
    truth = ground_truth(n)
    assert_equal({ [USER_LINE, "Churned"] => n, [STRING_LINE, "String"] => n, [ARRAY_LINE, "Array"] => n },
                 truth)

    Heaprec.start(sample_every: 1)
    churn(n)
    full_gc
    profile = dump
    assert_equal truth, churn_allocations(profile)
    # The churn is dead: its allocations are counted, not its live objects (the GC is conservative
    # with the machine stack, so one object of the last iteration may survive).
    assert_operator live_at_churn_lines(profile), :<=, 3
  end

  # Allocation samples carry the class and nothing that only a live object has: no size (not known
  # when an object is allocated, so no alloc_space either), no GC age.
  def test_allocation_samples_are_labelled_by_class_only
    Heaprec.start(sample_every: 1)
    keep = Array.new(50) { Churned.new }
    full_gc
    profile = dump
    assert_equal [%w[alloc_objects count], %w[inuse_objects count], %w[inuse_space bytes]],
                 profile.raw.sample_types
    allocs = profile.alloc_samples_of_class("Churned")
    refute_empty allocs
    assert_equal 50, profile.sum(allocs, "alloc_objects")
    allocs.each do |s|
      assert_equal %w[class], s.labels.map(&:key)
      assert_equal [0, 0], [s.values[profile.value_index("inuse_objects")], s.values[profile.value_index("inuse_space")]]
    end
    live = profile.samples_of_class("Churned")
    assert_equal 50, profile.sum(live, "inuse_objects")
    live.each { |s| assert_equal 0, s.values[profile.value_index("alloc_objects")] }
    assert_equal 50, keep.size
  end

  # Sampled: each allocation is sampled with probability p = 1/N and counts N, so a site's estimate
  # is N·k with k ~ Binomial(n, p): its standard deviation is N·sqrt(n·p·(1-p)) = sqrt(n·(N-1)),
  # 3,146 objects for n = 100,000 and N = 100. The test allows 4 of them (a 1 in 15,000 chance of a
  # false failure for an unbiased estimate; the seed makes the run repeatable).
  def test_sampled_estimates_are_within_the_binomial_bound
    n = 100_000
    every = 100
    bound = 4 * Math.sqrt(n * (every - 1))
    Heaprec.start(sample_every: every, seed: 12_345)
    churn(n)
    counts = churn_allocations(dump)
    assert_equal [[USER_LINE, "Churned"], [STRING_LINE, "String"], [ARRAY_LINE, "Array"]].sort, counts.keys.sort
    warn "sampled estimates of #{n}: #{counts.inspect}" if ENV["HEAPREC_TEST_VERBOSE"]
    counts.each do |key, estimate|
      assert_equal 0, estimate % every, "#{key.inspect}: each sample counts #{every}"
      assert_in_delta n, estimate, bound, "#{key.inspect}: #{estimate} for #{n} allocated"
    end
  end

  # The history is one entry per (stack, class), not per object: churn's three sites are three
  # entries (one sample each) after 1,000 iterations and after 60,000 more, and the recorder's
  # entries grow by at most a few while 120,000 objects are allocated.
  def test_the_history_grows_with_sites_not_with_allocations
    Heaprec.start(sample_every: 1)
    rounds = [1000, 20_000, 40_000].map do |n|
      churn(n)
      sites = Heaprec.stats[:allocation_sites]
      profile = dump
      [sites, churn_samples(profile), churn_allocations(profile).values.uniq]
    end
    assert_equal [3, 3, 3], rounds.map { |r| r[1] }
    assert_equal [[1000], [21_000], [61_000]], rounds.map { |r| r[2] }
    # The first dump and decoding add their own sites; the third round's 120,000 allocations add
    # almost none (one-time sites of the VM and minitest: the first GC's finalizers, say).
    assert_operator rounds[2][0] - rounds[1][0], :<=, 10, rounds.inspect
  end

  # The allocation samples whose leaf is one of churn's lines.
  def churn_samples(profile)
    alloc = profile.value_index("alloc_objects")
    profile.raw.samples.count do |s|
      leaf = profile.frames(s).first
      s.values[alloc].positive? && leaf&.file == __FILE__ &&
        [USER_LINE, STRING_LINE, ARRAY_LINE].include?(leaf.line)
    end
  end

  # A forked child keeps the objects its parent left alive (they are alive in it) but counts only
  # its own allocations: the parent's are in the parent's profile, and a merge of both (heaprec
  # report DIR) counts each allocation once.
  def test_a_forked_child_counts_only_its_own_allocations
    Heaprec.start(sample_every: 1)
    kept = Array.new(500) { ParentOnly.new }
    full_gc
    pid = fork do
      mine = Array.new(300) { ChildOnly.new }
      full_gc
      Heaprec.dump(path("child.pb.gz"))
      exit!(mine.size == 300 ? 0 : 1)
    rescue Exception => e # the child must not return into minitest
      warn e.full_message
      exit!(1)
    end
    _, status = Process.wait2(pid)
    assert status.success?, "child failed: #{status.inspect}"
    child = DecodedProfile.new(path("child.pb.gz"))
    assert_equal 300, child.sum(child.alloc_samples_of_class("ChildOnly"), "alloc_objects")
    assert_empty child.alloc_samples_of_class("ParentOnly")
    assert_equal 500, child.count_of("ParentOnly"), "the inherited live objects stay"

    parent = dump
    assert_equal 500, parent.sum(parent.alloc_samples_of_class("ParentOnly"), "alloc_objects")
    assert_empty parent.alloc_samples_of_class("ChildOnly")
    assert_equal 500, kept.size
  end

  # heaprec report ranks by alloc_objects, with its class table, and Go's pprof reads the profile.
  def test_report_and_go_pprof_read_the_allocation_profile
    Heaprec.start(sample_every: 1)
    churn(3000)
    full_gc
    file = path("alloc.pb.gz")
    Heaprec.dump(file)

    out, err, status = Open3.capture3(ENV.fetch("HEAPREC_BIN"), "report", "--sample-index", "alloc_objects", file)
    assert status.success?, err
    assert_match(/^Sample index: alloc_objects/, out)
    assert_match(/^\s+3000\s.*AllocationsTest#churn allocations_test\.rb:#{ARRAY_LINE}$/, out)
    assert_match(/^\s+3000\s.*Class#new allocations_test\.rb:#{USER_LINE}$/, out)
    classes = out.scan(/^\s+(\d+)\s+\S+%\s+(\S+)$/).to_h { |count, klass| [klass, Integer(count)] }
    assert_equal 3000, classes["Churned"], out
    # The dump's own path strings and Array are in the profile too.
    assert_includes 3000..3010, classes["String"], out
    assert_includes 3000..3010, classes["Array"], out

    out, err, status = Open3.capture3(ENV.fetch("HEAPREC_PPROF_PATH"), "-top", "-symbolize=none",
                                      "-sample_index=alloc_objects", file)
    assert status.success?, err
    assert_match(/Class#new/, out)
    assert_match(/AllocationsTest#churn/, out)
  end
end
