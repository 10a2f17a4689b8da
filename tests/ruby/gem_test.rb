# frozen_string_literal: true

# The gem's version is the checkout's VERSION file wherever it appears: in the gemspec, in the
# extension extconf.rb builds (`gem build`, or a Gemfile's `path:`), and in the one CMake built and
# the profiles it writes.
require_relative "test_helper"
require "open3"
require "rbconfig"

class GemTest < HeaprecTestCase
  ROOT = File.expand_path("../..", __dir__)
  CHECKOUT_VERSION = File.read(File.join(ROOT, "VERSION")).strip

  def test_the_extension_and_its_profiles_carry_the_checkouts_version
    assert_match(/\A\d+\.\d+\.\d+\z/, CHECKOUT_VERSION)
    assert_equal CHECKOUT_VERSION, Heaprec::VERSION
    assert_predicate Heaprec::VERSION, :frozen?
    Heaprec.start(sample_every: 1)
    assert_match(/\Aheaprec #{Regexp.escape(CHECKOUT_VERSION)} ruby front end /,
                 dump.raw.comments.first)
  end

  # Loaded from ruby/, as `gem build` and Bundler load it (its file list is relative to there).
  def test_the_gemspec_has_the_checkouts_version_and_license
    spec = Dir.chdir(File.join(ROOT, "ruby")) { Gem::Specification.load("heaprec.gemspec") }
    refute_nil spec
    assert_equal CHECKOUT_VERSION, spec.version.to_s
    assert_equal ["Apache-2.0"], spec.licenses
    assert_includes spec.files, "lib/heaprec.rb"
    assert_includes spec.files, "ext/heaprec/extconf.rb"
    assert_includes spec.files, "lib/heaprec/ruby_support.rb"
    # gem install refuses the Rubies Heaprec.start refuses: one list for both.
    assert spec.required_ruby_version.satisfied_by?(Gem::Version.new("3.1.2"))
    assert spec.required_ruby_version.satisfied_by?(Gem::Version.new("4.0.0"))
    refute spec.required_ruby_version.satisfied_by?(Gem::Version.new("4.2.0"))
    refute spec.required_ruby_version.satisfied_by?(Gem::Version.new("2.7.8"))
  end

  # Two liveness backends cover Ruby 3.0 to 4.1: object ids and ObjectSpace._id2ref up to 3.4, the
  # weak map from 3.5 (a preview's RUBY_VERSION is the coming release's: 3.5.0 is 4.0's). Before 3.0
  # and after 4.1 Ruby is refused with one line; this one runs.
  def test_each_ruby_gets_its_backend_or_one_clear_line
    assert_nil Heaprec.unsupported_ruby_reason
    %w[3.0.0 3.1.2 3.3.6 3.4.1].each do |v|
      assert_nil Heaprec.unsupported_ruby_reason(v), v
      assert_equal :object_id, Heaprec.default_liveness(v), v
    end
    %w[3.5.0 4.0.0 4.1.2].each do |v|
      assert_nil Heaprec.unsupported_ruby_reason(v), v
      assert_equal :weak_map, Heaprec.default_liveness(v), v
      assert_match(/needs ObjectSpace\._id2ref/, Heaprec.unusable_liveness_reason(:object_id, v))
    end
    assert_equal "heaprec does not support Ruby 4.2.0 yet (supported: Ruby 3.0 to 4.1)",
                 Heaprec.unsupported_ruby_reason("4.2.0")
    assert_equal "heaprec needs Ruby 3.0 or later, not 2.7.8", Heaprec.unsupported_ruby_reason("2.7.8")
    assert_equal :object_id, Heaprec.default_liveness
  end

  # Heaprec.start asks it: on an unsupported Ruby it raises that line and starts nothing.
  def test_start_refuses_an_unsupported_ruby
    Heaprec.singleton_class.alias_method(:real_reason, :unsupported_ruby_reason)
    begin
      Heaprec.define_singleton_method(:unsupported_ruby_reason) { |*| "heaprec does not support Ruby 9" }
      error = assert_raises(NotImplementedError) { Heaprec.start }
      assert_equal "heaprec does not support Ruby 9", error.message
      refute Heaprec.running?
    ensure
      Heaprec.singleton_class.alias_method(:unsupported_ruby_reason, :real_reason)
    end
    assert_nil Heaprec.unsupported_ruby_reason
  end

  # What `gem install` does: extconf.rb, make, and the extension loads (a core source left out of
  # the build links, then fails to load with an undefined symbol).
  def test_the_extension_extconf_builds_loads
    Dir.mktmpdir("heaprec-extconf-build") do |dir|
      out, status = Open3.capture2e(RbConfig.ruby, File.join(ROOT, "ruby/ext/heaprec/extconf.rb"),
                                    chdir: dir)
      assert status.success?, out
      out, status = Open3.capture2e("make", "-j2", chdir: dir)
      assert status.success?, out
      out, status = Open3.capture2e(RbConfig.ruby, "-e", "require './heaprec_ext.so'; print :loaded",
                                    chdir: dir)
      assert status.success?, out
      assert_equal "loaded", out
    end
  end

  def test_extconf_compiles_the_checkouts_version_into_the_extension
    Dir.mktmpdir("heaprec-extconf") do |dir|
      out, status = Open3.capture2e(RbConfig.ruby, File.join(ROOT, "ruby/ext/heaprec/extconf.rb"),
                                    chdir: dir)
      assert status.success?, out
      assert_includes File.read(File.join(dir, "Makefile")),
                      %(-DHEAPREC_VERSION=\\"#{CHECKOUT_VERSION}\\")
    end
  end
end
