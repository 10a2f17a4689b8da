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
