# frozen_string_literal: true

require_relative "test_helper"
require "open3"

# One class per property, so no other test's objects are counted.
class FromC; end
class Deep; end
class Deeper; end
class Templated; end
class Anonymous; end

# What the frames of a Ruby profile say: C methods at their caller's file and line, stacks cut at
# max_depth marked as cut, max_depth clamped to what a profile keeps, names that are the same in
# every process.
class FramesTest < HeaprecTestCase
  TRUNCATED = "(truncated: deeper frames omitted)"

  CALLING_LINE = __LINE__ + 1
  def allocate_from_c(n) = Array.new(n) { FromC.new }

  # Class#new and Array#initialize are C methods: no file or line of their own. They take the
  # file and line of the Ruby code that called them, as Ruby's own backtraces show them.
  def test_c_methods_have_their_callers_file_and_line
    Heaprec.start(sample_every: 1)
    keep = allocate_from_c(20)
    full_gc
    profile = dump
    samples = profile.samples_of_class("FromC")
    assert_equal 20, profile.sum(samples, "inuse_objects")
    samples.each do |s|
      frames = profile.frames(s)
      leaf = frames.first
      assert_equal ["Class#new", __FILE__, CALLING_LINE], [leaf.function, leaf.file, leaf.line]
      # Every frame of the stack has a file: each C method has a Ruby caller here.
      assert_empty frames.select { |f| f.file.empty? }.map(&:to_a)
      array_new = frames.find { |f| f.function == "Array#initialize" }
      refute_nil array_new, frames.map(&:to_a).inspect
      assert_equal [__FILE__, CALLING_LINE], [array_new.file, array_new.line]
    end
    keep.clear
  end

  # A program's main thread: its stacks end at the script's own <main>, once, at a line of the
  # script. Below it rb_profile_frames also reports the VM's placeholder (an empty <main>, named
  # after the script, at line 0), which Ruby's backtraces leave out, and so does heaprec.
  def test_the_main_threads_stacks_end_at_the_scripts_main_once
    File.write(path("main.rb"), <<~RUBY)
      require "heaprec"
      class Rooted; end
      Heaprec.start(sample_every: 1)
      def make = Rooted.new
      kept = Array.new(3) { make }
      GC.start
      Heaprec.dump(ARGV[0])
      p kept.size
    RUBY
    lib = File.dirname($LOADED_FEATURES.find { |f| f.end_with?("/heaprec.rb") })
    _, err, status = Open3.capture3(RbConfig.ruby, "-I", lib, path("main.rb"), path("main.pb.gz"))
    assert status.success?, err
    profile = DecodedProfile.new(path("main.pb.gz"))
    samples = profile.samples_of_class("Rooted")
    refute_empty samples
    samples.each do |s|
      frames = profile.frames(s).map { |f| [f.function, File.basename(f.file), f.line] }
      assert_equal [["Object#make", "main.rb", 4], ["block in <main>", "main.rb", 5],
                    ["Array#initialize", "main.rb", 5], ["Class#new", "main.rb", 5],
                    ["<main>", "main.rb", 5]], frames.drop(1)
    end
  end

  def recurse(depth, klass) = depth.zero? ? klass.new : recurse(depth - 1, klass)

  # A stack deeper than max_depth keeps its innermost max_depth frames and ends, root-most, in a
  # marker frame; the counters say how many were cut. A shallower one has no marker.
  def test_a_stack_cut_at_max_depth_ends_in_a_marker
    Heaprec.start(sample_every: 1, max_depth: 50)
    deep = recurse(100, Deep)
    shallow = recurse(5, Deeper)
    full_gc
    profile = dump
    deep_frames = profile.frames(profile.samples_of_class("Deep").first)
    assert_equal 51, deep_frames.size
    assert_equal TRUNCATED, deep_frames.last.function
    assert_equal 1, deep_frames.count { |f| f.function == TRUNCATED }
    shallow_frames = profile.frames(profile.samples_of_class("Deeper").first)
    refute_includes shallow_frames.map(&:function), TRUNCATED
    assert_operator Heaprec.stats[:truncated], :>=, 1
    assert_operator Integer(profile.comment_value("truncated_stacks")), :>=, 1
    [deep, shallow].each { |o| refute_nil o }
  end

  # max_depth above what a profile keeps (1,024 frames) is clamped with one warning, and the
  # profile then holds exactly what was kept: 1,023 frames and the marker.
  def test_max_depth_is_clamped_to_what_a_profile_keeps
    _, err = capture_io { Heaprec.start(sample_every: 1, max_depth: 5000) }
    assert_match(/heaprec: max_depth 5000 is more than a profile keeps; using 1023/, err)
    deep = recurse(1500, Deep)
    full_gc
    frames = dump.then { |p| p.frames(p.samples_of_class("Deep").first) }
    assert_equal 1024, frames.size
    assert_equal TRUNCATED, frames.last.function
    refute_nil deep
  end

  # Rails compiles each template into a method whose name ends in "__", the template's hash (a
  # per-process value; "-" made "_" when negative) and an object id; anonymous classes are named by
  # their address. Both are dropped, so the same code has one
  # name in every process (and profiles of many processes merge).
  class Views
    class_eval <<~RUBY, __FILE__, __LINE__ + 1
      def _app_views_posts_index_html_erb___2141913467528036432_47120
        Templated.new
      end
      def _app_views_posts_show_html_erb__3742380289826018587_70256612345120
        Templated.new
      end
    RUBY
  end

  def test_generated_names_are_normalized
    Heaprec.start(sample_every: 1)
    views = Views.new
    anonymous = Class.new { def make = Anonymous.new }
    keep = [views._app_views_posts_index_html_erb___2141913467528036432_47120,
            views._app_views_posts_show_html_erb__3742380289826018587_70256612345120,
            anonymous.new.make]
    full_gc
    profile = dump
    names = (profile.samples_of_class("Templated") + profile.samples_of_class("Anonymous"))
            .map { |s| profile.frames(s)[1].function }.sort
    assert_equal ["#<Class:0x...>#make", "FramesTest::Views#_app_views_posts_index_html_erb",
                  "FramesTest::Views#_app_views_posts_show_html_erb"], names
    keep.clear
  end
end
