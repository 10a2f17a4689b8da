# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "fileutils"
require "open3"

# `heaprec run --ruby` on an unmodified program, and the reports on the profiles it writes.
class CliTest < HeaprecTestCase
  DEMO = File.expand_path("../../demo/ruby_sessions.rb", __dir__)

  def heaprec = ENV.fetch("HEAPREC_BIN")

  def run_cli(*args, env: {})
    stdout, stderr, status = Open3.capture3(env, heaprec, *args)
    [stdout, stderr, status]
  end

  # The files `heaprec run` lists from its manifest, with the pid and reason each process reported
  # there: { path => [pid, reason] }. The reason word may be followed by an explanation.
  def manifest_listing(stderr)
    stderr.scan(/^  (\S+\.pb\.gz)  \(pid (\d+), (\w+)\b/).to_h do |file, pid, reason|
      [file, [Integer(pid, 10), reason]]
    end
  end

  def test_run_profiles_an_unmodified_program_and_reports_its_sites
    plain, = Open3.capture3("ruby", DEMO, "30000")
    stdout, stderr, status = run_cli("run", "--ruby", "--sample-every", "50", "--seed", "1",
                                     "-o", path("heap.%p.pb.gz"), "--", "ruby", DEMO, "30000")
    assert status.success?, stderr
    assert_equal plain, stdout, "the program's output must not change"
    assert_match(/AuditLog#record ruby_sessions\.rb:16/, stderr)
    assert_match(/Sampling: 1 in 50 objects/, stderr)
    files = profiles_but_peaks(path("heap.*.pb.gz"))
    assert_equal 1, files.size
    profile = DecodedProfile.new(files.first)
    log = profile.raw.samples.select do |s|
      profile.frames(s).any? { |f| f.function == "AuditLog#record" && f.line == 16 }
    end
    # 30000 log strings, each sampled with probability 1/50: the estimate is 50 × Binomial(30000,
    # 1/50), standard deviation 50 × sqrt(30000 × 0.02 × 0.98) ≈ 1212; 5 of them is the bound.
    assert_in_delta 30_000, profile.sum(log, "inuse_objects"), 5 * 1212
  end

  # Exact mode through autorun, with a forked child: both processes write a profile at exit, and the
  # child's includes the objects it inherited. Each names its own process (pid=, reason=exit), as
  # each reported it in the manifest.
  def test_forked_children_write_their_own_profiles
    script = path("forking.rb")
    File.write(script, <<~RUBY)
      class Inherited; end
      class ChildOnly; end
      kept = Array.new(300) { Inherited.new }
      GC.start
      pid = fork do
        mine = Array.new(200) { ChildOnly.new }
        GC.start
        exit(mine.size == 200 ? 0 : 1)
      end
      File.write(#{path("pids").inspect}, "\#{Process.pid} \#{pid}")
      Process.wait(pid)
      exit($?.success? && kept.size == 300 ? 0 : 1)
    RUBY
    _, stderr, status = run_cli("run", "--ruby", "--sample-every", "1", "-o", path("fork.%p.pb.gz"),
                                "--top", "0", "--", "ruby", script)
    assert status.success?, stderr
    files = profiles_but_peaks(path("fork.*.pb.gz"))
    assert_equal 2, files.size, stderr
    profiles = files.map { |f| DecodedProfile.new(f) }
    child = profiles.find { |p| p.samples_of_class("ChildOnly").any? }
    parent = (profiles - [child]).first
    assert_equal 200, child.count_of("ChildOnly")
    assert_equal 300, child.count_of("Inherited")
    assert_equal 300, parent.count_of("Inherited")
    assert_empty parent.samples_of_class("ChildOnly")

    parent_pid, child_pid = File.read(path("pids")).split.map { |n| Integer(n, 10) }
    assert_equal parent_pid, parent.pid
    assert_equal child_pid, child.pid
    assert_equal %w[exit exit], [parent.reason, child.reason]
    listed = manifest_listing(stderr)
    assert_equal files.sort, listed.keys.sort, stderr
    files.zip(profiles) { |f, p| assert_equal listed.fetch(f), [p.pid, p.reason], f }
  end

  # A profile that could not be written (a per-pid directory that does not exist): the process
  # says why and heaprec run does not guess at another cause.
  def test_a_profile_that_could_not_be_written_is_not_guessed_about
    _, stderr, status = run_cli("run", "--ruby", "-o", path("%p/x.pb.gz"), "--", "ruby", "-e", "1")
    assert status.success?, stderr
    assert_match(/heaprec: could not write profile: /, stderr)
    assert_match(/no profile was written: 1 write failed \(the processes said why above\)/, stderr)
    refute_match(/SIGKILL/, stderr)
  end

  def test_program_exit_status_and_stdin_pass_through
    _, stderr, status = run_cli("run", "--ruby", "-o", path("x.%p.pb.gz"), "--",
                                "ruby", "-e", "exit 3")
    assert_equal 3, status.exitstatus, stderr
  end

  def test_a_bad_setting_leaves_the_program_running_unprofiled
    out, err, status = Open3.capture3({ "RUBYLIB" => File.dirname($LOADED_FEATURES.grep(/heaprec\.rb$/).first),
                                        "RUBYOPT" => "-rheaprec/autorun",
                                        "HEAPREC_SAMPLE_EVERY" => "lots",
                                        "HEAPREC_OUTPUT" => path("bad.pb.gz") },
                                      "ruby", "-e", "puts 6 * 7")
    assert status.success?
    assert_equal "42\n", out
    assert_match(/HEAPREC_SAMPLE_EVERY="lots" is not a positive integer/, err)
    assert_equal 1, err.lines.size, "one clear message"
    refute File.exist?(path("bad.pb.gz"))
  end

  def ruby_lib = File.dirname($LOADED_FEATURES.grep(/heaprec\.rb$/).first)

  # HEAPREC_OUTPUT naming a directory, as the native library reads it: the default name in it.
  def test_an_output_directory_gets_the_profile_by_its_default_name
    %w[existing slash/].each do |given|
      Dir.mkdir(path(given.chomp("/")))
      out, err, status = Open3.capture3({ "RUBYLIB" => ruby_lib, "RUBYOPT" => "-rheaprec/autorun",
                                          "HEAPREC_OUTPUT" => path(given) },
                                        "ruby", "-e", "puts Process.pid")
      assert status.success?, err
      # %e: "ruby" for a program given with -e, as for the native library.
      assert_equal ["heaprec.ruby.#{out.to_i}.pb.gz"], Dir.children(path(given.chomp("/"))), err
    end
  end

  def test_an_out_of_range_setting_leaves_the_program_running_unprofiled
    out, err, status = Open3.capture3({ "RUBYLIB" => ruby_lib, "RUBYOPT" => "-rheaprec/autorun",
                                        "HEAPREC_MAX_DEPTH" => "5000000000",
                                        "HEAPREC_OUTPUT" => path("range.pb.gz") },
                                      "ruby", "-e", "puts 6 * 7")
    assert status.success?, err
    assert_equal "42\n", out
    assert_match(/max_depth must be an Integer from 1 to 10000/, err)
    assert_equal 1, err.lines.size
  end

  # An interval dump still writing when the program exits: it finishes and is reported, and the
  # exit profile is written too.
  def test_exit_waits_for_an_interval_dump_in_progress
    script = path("slow_interval.rb")
    File.write(script, "Heaprec::Testing.write_delay = 1.0\nkept = Array.new(1000) { Object.new }\nsleep 0.5\n")
    _, stderr, status = run_cli("run", "--ruby", "--dump-interval", "0.3", "--top", "0",
                                "-o", path("iv.%p.pb.gz"), "--", "ruby", script)
    assert status.success?, stderr
    files = profiles_but_peaks(path("iv.*.pb.gz"))
    assert_equal 2, files.size, stderr
    assert_match(/wrote #{Dir[path("iv.*.pb.gz")].size} profiles/, stderr)
    refute_match(/could not write/, stderr)
    profiles = files.map { |f| DecodedProfile.new(f) }
    assert_equal %w[exit interval], profiles.map(&:reason).sort
    assert_equal 1, profiles.map(&:pid).uniq.size
    files.zip(profiles) { |f, p| assert_equal manifest_listing(stderr).fetch(f), [p.pid, p.reason], f }
  end

  # A bad setting from the environment under `heaprec run`: autorun hands its reason to heaprec run,
  # which says it once for all the program's processes, and does not guess at why no profile was
  # written. The program's output and exit status are its own.
  def test_a_bad_environment_setting_is_said_once_by_run
    out, err, status = run_cli("run", "--ruby", "-o", path("bad.%p.pb.gz"), "--",
                               "sh", "-c", "ruby -e 'puts 1'; ruby -e 'puts 2; exit 4'",
                               env: { "HEAPREC_RUBY_LIVENESS" => "weakmap" })
    assert_equal 4, status.exitstatus, err
    assert_equal "1\n2\n", out
    assert_equal ["heaprec: HEAPREC_RUBY_LIVENESS=\"weakmap\": is not one of object_id, weak_map; " \
                  "the program runs without heaprec\n"], err.lines.grep(/HEAPREC_RUBY_LIVENESS/)
    refute_match(/no profile was written/, err)
    assert_empty Dir[path("bad.*")]
  end

  # An extension this Ruby cannot load (one built for another Ruby, here a file that is not one):
  # the program runs, unprofiled, with its own output and exit status, and the reason is one line,
  # said by heaprec run once for all the program's Ruby processes. Before, `require` raised
  # LoadError from RUBYOPT and Ruby exited 1 without running the program.
  def test_an_extension_that_does_not_load_leaves_the_program_running
    broken = path("broken_lib")
    FileUtils.cp_r(ruby_lib, broken)
    File.write(File.join(broken, "heaprec", "heaprec_ext.so"), "not a shared object")
    out, err, status = Open3.capture3({ "RUBYLIB" => broken, "RUBYOPT" => "-rheaprec/autorun" },
                                      "ruby", "-e", "puts 6 * 7; exit 3")
    assert_equal [3, "42\n"], [status.exitstatus, out], err
    assert_match(/\Aheaprec: cannot load its extension \(.*heaprec_ext\.so.*\); the program runs without heaprec\n\z/, err)
    out, err, status = run_cli("run", "--ruby", "-o", path("none.%p.pb.gz"), "--",
                               "sh", "-c", "ruby -e 'puts 1'; ruby -e 'puts 2; exit 4'",
                               env: { "HEAPREC_RUBY_LIB" => broken })
    assert_equal [4, "1\n2\n"], [status.exitstatus, out], err
    assert_equal 1, err.lines.grep(/cannot load its extension/).size, err
    refute_match(/no profile was written/, err)
  end

  # --ruby-liveness: checked before the program runs, and named in the profile it writes.
  def test_ruby_liveness_flag
    out, err, status = run_cli("run", "--ruby", "--ruby-liveness", "weakmap", "--",
                               "ruby", "-e", "puts 42")
    assert_equal 2, status.exitstatus
    assert_empty out, "the program did not run"
    assert_equal "heaprec run: --ruby-liveness 'weakmap' is invalid: expected object_id or weak_map\n",
                 err
    %w[weak_map object_id].each do |backend|
      out, err, status = run_cli("run", "--ruby", "--ruby-liveness", backend, "--sample-every", "1",
                                 "--top", "0", "-o", path("#{backend}.%p.pb.gz"), "--", "ruby", "-e",
                                 "class Kept; end; $k = Array.new(300) { Kept.new }; GC.start; " \
                                 "puts Heaprec.stats[:liveness]")
      assert status.success?, err
      assert_equal "#{backend}\n", out
      profile = DecodedProfile.new(profiles_but_peaks(path("#{backend}.*.pb.gz")).fetch(0))
      assert_equal backend, profile.comment_value("liveness")
      assert_equal 300, profile.count_of("Kept")
    end
  end

  def test_run_refuses_native_only_options_with_ruby
    _, stderr, status = run_cli("run", "--ruby", "--dump-above", "1M", "--", "ruby", "-e", "1")
    refute status.success?
    assert_match(/dump-above/, stderr)
  end

  # Interval dumps make a series: leaks must rank the never-trimmed audit log first, and flame and
  # diff must read the profiles.
  def test_interval_dumps_feed_leaks_flame_and_diff
    script = path("growing.rb")
    File.write(script, <<~RUBY)
      log = []
      cache = {}
      40.times do |round|
        20_000.times { |i| log << "entry \#{round} \#{i}" }   # grows without bound
        cache[round % 3] = Array.new(2_000) { |i| "c\#{i}" }  # bounded
        GC.start
        sleep 0.05
      end
    RUBY
    _, stderr, status = run_cli("run", "--ruby", "--sample-every", "20", "--seed", "3",
                                "--dump-interval", "0.2", "-o", path("series.%p.pb.gz"),
                                "--", "ruby", script)
    assert status.success?, stderr
    series = Dir[path("series.*.pb.gz")].sort
    assert_operator series.size, :>=, 4, stderr

    stdout, stderr, status = run_cli("leaks", *series)
    assert status.success?, stderr
    first_site = stdout.lines.find { |l| l =~ /growing\.rb/ }
    assert_match(/block \(2 levels\) in <main> growing\.rb:4/, first_site)

    html = path("flame.html")
    _, stderr, status = run_cli("flame", "-o", html, series.last)
    assert status.success?, stderr
    assert_includes File.read(html), "growing.rb"

    stdout, stderr, status = run_cli("diff", series[1], series[-2])
    assert status.success?, stderr
    assert_match(/growing\.rb:4/, stdout)
  end

  # A parent and its forked workers, each with interval dumps: `heaprec leaks` must make one series
  # per process (from the pid= comments), so the worker that leaks is found in its own series and
  # its site appears in no other. With the processes merged, its growth would be averaged with the
  # others' and the series would be named by no pid.
  def test_leaks_separates_a_parent_and_its_forked_workers
    script = path("workers.rb")
    File.write(script, <<~RUBY)
      class Leaky
        def initialize = (@log = [])
        def grow(round) = 2_000.times { |i| @log << "entry \#{round} \#{i}" } # never trimmed
      end
      class Bounded
        def initialize = (@cache = {})
        def refill(round) = (@cache[round % 3] = Array.new(2_000) { |i| "c\#{round} \#{i}" })
      end
      def work(rounds)
        rounds.times do |round|
          yield round
          GC.start
          sleep 0.05
        end
      end
      leaky = fork { log = Leaky.new; work(40) { |round| log.grow(round) } }
      steady = fork { cache = Bounded.new; work(40) { |round| cache.refill(round) } }
      File.write(#{path("pids").inspect}, "\#{Process.pid} \#{leaky} \#{steady}")
      exit(Process.waitall.all? { |_, status| status.success? } ? 0 : 1)
    RUBY
    profiles = path("profiles")
    Dir.mkdir(profiles)
    _, stderr, status = run_cli("run", "--ruby", "--sample-every", "20", "--seed", "5",
                                "--dump-interval", "0.2", "--top", "0",
                                "-o", File.join(profiles, "w.%p.pb.gz"), "--", "ruby", script)
    assert status.success?, stderr
    parent, leaky, steady = File.read(path("pids")).split.map { |n| Integer(n, 10) }
    files = Dir[File.join(profiles, "*.pb.gz")]
    pid_of = files.to_h { |f| [f, DecodedProfile.new(f).pid] }
    assert_equal [parent, leaky, steady].sort, pid_of.values.uniq.sort, stderr

    stdout, stderr, status = run_cli("leaks", profiles, "--format", "json", "--top", "0")
    assert status.success?, stderr
    series = JSON.parse(stdout).fetch("series").to_h { |s| [s.fetch("pid"), s] }
    assert_equal [parent, leaky, steady].sort, series.keys.sort
    series.each do |pid, s|
      # The series, and its exit profile set aside (not a point of the growth series).
      # Peak profiles are left out of a series: chosen for being a maximum, they would bias it.
      series_files = s.fetch("files") + [s.fetch("final_file")].compact
      expected = files.select { |f| pid_of[f] == pid && !f.end_with?(".peak.pb.gz") }
      assert_equal expected.sort, series_files.sort, "pid #{pid}"
    end
    grows = ->(site) { site.fetch("site").end_with?("Leaky#grow") } # or its block, by Ruby version
    first = series.fetch(leaky).fetch("sites").first
    assert grows[first], "the leaking worker's first site: #{first.inspect}"
    assert first.fetch("suspect"), first.inspect
    [parent, steady].each do |pid|
      assert_empty series.fetch(pid).fetch("sites").select(&grows), "pid #{pid} never ran Leaky#grow"
    end

    stdout, stderr, status = run_cli("leaks", profiles, "--pid", leaky.to_s)
    assert status.success?, stderr
    assert_match(/^pid #{leaky}: \d+ profiles/, stdout)
    refute_match(/^pid #{parent}:/, stdout)
  end

  # A block of the class body: its frame's label has angle brackets, as <main> does.
  KEEP_STRINGS = ->(n) { Array.new(n) { "s" * 100 } }

  # Go's pprof reads the profile as is, with or without its own symbolization: Ruby's names (with
  # angle brackets, which pprof's C++ name simplification could take for template arguments) come
  # out as they were written.
  def test_go_pprof_reads_the_profile
    pprof = ENV["HEAPREC_PPROF_PATH"]
    skip "pprof not built" unless pprof && File.executable?(pprof)
    Heaprec.start(sample_every: 1)
    keep = KEEP_STRINGS.call(100)
    full_gc
    Heaprec.dump(path("go.pb.gz"))
    [[], ["-symbolize=none"]].each do |flags|
      stdout, stderr, status = Open3.capture3(pprof, "-top", *flags, path("go.pb.gz"))
      assert status.success?, stderr
      assert_match(/CliTest#test_go_pprof_reads_the_profile/, stdout)
      assert_match(/<class:CliTest>/, stdout)
    end
    assert_equal 100, keep.size
  end
end
