# frozen_string_literal: true

require_relative "test_helper"
require "net/http"
require "open3"

# The profile over HTTP from a Ruby process (HEAPREC_HTTP), read by Go's pprof as a Go user reads
# /debug/pprof/heap.
class HttpTest < HeaprecTestCase
  def ruby_lib = File.dirname($LOADED_FEATURES.grep(/heaprec\.rb$/).first)

  def env(extra)
    { "RUBYLIB" => ruby_lib, "RUBYOPT" => "-rheaprec/autorun", "HEAPREC_SAMPLE_EVERY" => "1",
      "HEAPREC_OUTPUT" => path("exit.%p.pb.gz") }.merge(extra)
  end

  # The program keeps 500 objects and waits for a line on stdin before it exits.
  PROGRAM = <<~RUBY
    class Served; end
    kept = Array.new(500) { Served.new }
    GC.start
    $stdin.gets
    puts kept.size
  RUBY

  def test_pprof_reads_the_served_profile
    pprof = ENV.fetch("HEAPREC_PPROF_PATH")
    Open3.popen3(env("HEAPREC_HTTP" => "0"), "ruby", "-e", PROGRAM) do |stdin, stdout, stderr, wait|
      line = stderr.gets
      url = line[%r{\Aheaprec: serving (http://127\.0\.0\.1:\d+/debug/pprof/heap)\n\z}, 1]
      refute_nil url, line
      base = URI(url)
      profile_path = path("served.pb.gz")
      File.binwrite(profile_path, Net::HTTP.get(base))
      served = DecodedProfile.new(profile_path)
      assert_equal 500, served.count_of("Served")
      assert_equal "http", served.reason
      assert_empty heaprecs_own(served), "what autorun set up (server, libraries, threads)"
      out, err, status = Open3.capture3(pprof, "-top", "-symbolize=none", url)
      assert status.success?, err
      assert_match(/<main>/, out)
      other = Net::HTTP.get_response(URI.join(url, "/debug/pprof/goroutine"))
      assert_equal "404", other.code
      stdin.puts
      assert_equal "500\n", stdout.read, "the program's output is its own"
      assert wait.value.success?
    end
    exits = profiles_but_peaks(path("exit.*.pb.gz")).map { |f| DecodedProfile.new(f) }
    assert_equal ["exit"], exits.map(&:reason)
    assert_empty heaprecs_own(exits.first), "and the final dump, at_exit on the main thread"
  end

  # The samples (live objects or allocations) with a frame in heaprec's own Ruby files: leaf-most
  # frames of each, for the message.
  def heaprecs_own(profile)
    profile.raw.samples.map { |s| profile.frames(s) }
           .select { |frames| frames.any? { |f| f.file.start_with?(ruby_lib) } }
           .map { |frames| frames.map(&:to_a).first(3) }
  end

  # Dormant: the endpoint answers 503 until `heaprec attach`, then serves what was sampled since.
  def test_a_dormant_program_serves_nothing_until_attached
    dormant = env("HEAPREC_HTTP" => "0", "HEAPREC_DORMANT" => "1", "HEAPREC_DUMP_SIGNAL" => "USR2")
    program = "$stdin.gets\nclass Later; end\nlater = Array.new(300) { Later.new }\nGC.start\n" \
              "$stdout.puts 'allocated'\n$stdout.flush\n$stdin.gets\nputs later.size\n"
    Open3.popen3(dormant, "ruby", "-e", program) do |stdin, stdout, stderr, wait|
      url = URI(stderr.gets[%r{serving (http://\S+)}, 1])
      response = Net::HTTP.get_response(url)
      assert_equal "503", response.code
      assert_match(/not sampling \(heaprec attach #{wait.pid} switches it on\)/, response.body)
      _, err, status = Open3.capture3(ENV.fetch("HEAPREC_BIN"), "attach", wait.pid.to_s)
      assert status.success?, err
      stdin.puts
      assert_equal "allocated\n", stdout.gets
      profile_path = path("served.pb.gz")
      File.binwrite(profile_path, Net::HTTP.get(url))
      assert_equal 300, DecodedProfile.new(profile_path).count_of("Later")
      stdin.puts
      assert_equal "300\n", stdout.read
      assert wait.value.success?
    end
  end

  # Profiles show the program's code: another machine may read them only when asked for. The
  # program still runs, profiled, with one line saying why nothing is served.
  def test_a_public_address_needs_http_public
    out, err, status = Open3.capture3(env("HEAPREC_HTTP" => "0.0.0.0:0"), "ruby", "-e", "puts 6 * 7")
    assert status.success?, err
    assert_equal "42\n", out
    assert_match(/heaprec: not serving HTTP: HEAPREC_HTTP=0\.0\.0\.0:0: 0\.0\.0\.0 is not loopback; set HEAPREC_HTTP_PUBLIC=1/,
                 err)
    assert_equal 1, Dir[path("exit.*.pb.gz")].size
  end
end
