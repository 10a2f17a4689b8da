# frozen_string_literal: true

require_relative "test_helper"
require "open3"

# `heaprec run --ruby --dormant`: a Ruby program that samples nothing until `heaprec attach PID`,
# and `heaprec detach PID` to stop again, as native programs have it (docs/design/ruby.md,
# "Dormant"). The program and the test take turns through files in the test's directory.
class DormantTest < HeaprecTestCase
  def heaprec = ENV.fetch("HEAPREC_BIN")

  def wait_for(name, timeout = 30)
    deadline = Time.now + timeout
    sleep 0.02 until File.exist?(path(name)) || Time.now > deadline
    assert File.exist?(path(name)), "the program never wrote #{name}"
    File.read(path(name))
  end

  # Starts `source` under `heaprec run --ruby --dormant`; returns the run's thread, whose value
  # is [stdout, stderr, status].
  def start_dormant(source)
    script = path("program.rb")
    # A step's file appears whole (written aside, then renamed): a reader never sees it empty.
    File.write(script, "def step(name) = File.rename(File.join(#{@dir.inspect}, name + '.tmp')" \
                       ".tap { |t| File.write(t, Process.pid.to_s) }, File.join(#{@dir.inspect}, name))\n" \
                       "def wait_for(name) = (sleep 0.02 until File.exist?(File.join(#{@dir.inspect}, name)))\n" +
                       source)
    Thread.new do
      Open3.capture3(heaprec, "run", "--ruby", "--dormant", "--dump-signal", "SIGUSR2",
                     "--sample-every", "1", "--top", "0", "-o", path("d.%p.pb.gz"), "--",
                     "ruby", script)
    end
  end

  def control(verb, pid) = Open3.capture3(heaprec, verb, pid.to_s)

  def thread_names(pid) = Dir["/proc/#{pid}/task/*/comm"].map { |f| File.read(f).chomp }

  # Attach: only objects allocated from then on are sampled, each exactly (sample_every 1).
  # Detach: the profile so far (reason detach), and nothing more at exit.
  def test_attach_samples_from_then_on_and_detach_writes_what_it_gathered
    run = start_dormant(<<~RUBY)
      class Before; end
      class After; end
      before = Array.new(1000) { Before.new }
      step("ready")
      wait_for("go")
      after = Array.new(700) { After.new }
      GC.start
      step("allocated")
      wait_for("stop")
      puts "held \#{before.size + after.size}"
    RUBY
    pid = Integer(wait_for("ready"), 10)
    assert_includes thread_names(pid), "heaprec:dormant"

    out, err, status = control("attach", pid)
    assert status.success?, err
    assert_match(/process #{pid} \(started dormant\) samples now/, out + err)
    assert_includes thread_names(pid), "heaprec:on"
    _, err, status = control("attach", pid)
    refute status.success?
    assert_match(/has heaprec attached already/, err)
    _, err, status = control("dump", pid)
    refute status.success?
    assert_match(/`kill -USR2 #{pid}` asks it for a profile/, err)

    File.write(path("go"), "")
    wait_for("allocated")
    _, err, status = control("detach", pid)
    assert status.success?, err
    assert_includes thread_names(pid), "heaprec:off"
    _, err, status = control("detach", pid)
    refute status.success?
    assert_match(/is not attached/, err)

    File.write(path("stop"), "")
    out, err, status = run.value
    assert status.success?, err
    assert_equal "held 1700\n", out
    profiles = profiles_but_peaks(path("d.*.pb.gz")).map { |f| DecodedProfile.new(f) }
    assert_equal ["detach"], profiles.map(&:reason), err
    assert_equal 700, profiles.first.count_of("After")
    assert_equal 0, profiles.first.count_of("Before")
  end

  # Never attached: no file, the run says why; a plain kill -USR2 is a dump request, which a
  # dormant program ignores (it does not die of the signal).
  def test_a_program_never_attached_writes_nothing_and_survives_the_dump_signal
    run = start_dormant(<<~RUBY)
      step("ready")
      wait_for("go")
      puts "still here"
    RUBY
    pid = Integer(wait_for("ready"), 10)
    Process.kill("USR2", pid)
    sleep 0.3
    File.write(path("go"), "")
    out, err, status = run.value
    assert status.success?, err
    assert_equal "still here\n", out
    assert_empty Dir[path("d.*.pb.gz")]
    assert_match(/no profile was written \(dormant, never attached\)/, err)
  end

  # A dormant parent's forked worker is dormant too, with its own control thread: attached alone,
  # it writes its own profile at exit, and the parent none.
  def test_a_forked_worker_is_attachable_on_its_own
    run = start_dormant(<<~RUBY)
      class Work; end
      worker = fork do
        step("worker")
        wait_for("go")
        $kept = Array.new(400) { Work.new }
        GC.start # objects are reported once they have survived a GC
      end
      Process.wait(worker)
      exit($?.success? ? 0 : 1)
    RUBY
    worker = Integer(wait_for("worker"), 10)
    deadline = Time.now + 10
    sleep 0.02 until thread_names(worker).include?("heaprec:dormant") || Time.now > deadline
    _, err, status = control("attach", worker)
    assert status.success?, err
    File.write(path("go"), "")
    _, err, status = run.value
    assert status.success?, err
    profiles = profiles_but_peaks(path("d.*.pb.gz")).map { |f| DecodedProfile.new(f) }
    assert_equal [[worker, "exit"]], profiles.map { |p| [p.pid, p.reason] }, err
    assert_equal 400, profiles.first.count_of("Work")
  end
end
