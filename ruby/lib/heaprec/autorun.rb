# frozen_string_literal: true

# Profiles an unmodified program: `heaprec run --ruby -- ruby app.rb` loads this file through
# RUBYOPT=-rheaprec/autorun. Settings come from the environment, as for the native profiler:
#
#   HEAPREC_OUTPUT         output template: %p pid, %t time, %e program (default heaprec.%e.%p.pb.gz)
#   HEAPREC_SAMPLE_EVERY   sample each object with probability 1/N (default 1000; 1 = every object)
#   HEAPREC_RUBY_LIVENESS  object_id or weak_map: how dumps learn which objects live (default: the
#                          Ruby's, Heaprec.default_liveness)
#   HEAPREC_DUMP_INTERVAL  also dump every S seconds (numbered files), for `heaprec leaks`
#   HEAPREC_DUMP_SIGNAL    also dump when this signal arrives (SIGUSR2, USR2 or a number)
#   HEAPREC_HTTP           serve GET /debug/pprof/heap on a port, HOST:PORT or a Unix socket path
#                          (HEAPREC_HTTP_PUBLIC=1 for a host other than loopback)
#   HEAPREC_DORMANT        1: sample nothing until `heaprec attach PID` (needs HEAPREC_DUMP_SIGNAL)
#   HEAPREC_SEED           fixed sampling seed; HEAPREC_MAX_DEPTH frames per stack (default 400)
#   HEAPREC_MANIFEST       set by `heaprec run`: where each written file is reported
#
# A bad setting, or an extension this Ruby cannot load (built for another Ruby), is reported on
# stderr (under `heaprec run`, by heaprec run, once for all processes) and the program runs
# unprofiled: the profiler must never stop the program. Dump failures are reported on stderr and
# never change the program's exit status.
#
# Endings get the profile native programs get, named the same way: exit (a normal exit or an
# exception), terminated (a signal such as SIGTERM or SIGINT ended the program: Ruby raises it as
# a SignalException and runs at_exit), _exit (exit!, which skips at_exit: forking job runners end
# their children so). A ractor stops heaprec (Ruby 3.1 crashes otherwise); the profile up to then
# is written first (reason detach). SIGKILL and crashes leave the peak profile (NAME.peak.pb.gz,
# written as the heap grows) and the last interval profile, or without an interval the checkpoint
# in the final profile's file (written every minute).
module Heaprec
  module Autorun
    # Why this process runs unprofiled, in one line. Under `heaprec run` it goes to the manifest
    # (one O_APPEND write, as the extension's lines), and heaprec run says it once for all the
    # program's processes, instead of guessing why no profile was written; otherwise, stderr. Pure
    # Ruby: it also reports an extension that did not load.
    def self.decline(message)
      line = "#{Process.pid}\tdeclined\t#{message.tr("\t\n", "  ")}\n"
      File.open(ENV["HEAPREC_MANIFEST"].to_s, File::WRONLY | File::APPEND) { |f| f.syswrite(line) }
    rescue SystemCallError, IOError
      warn message
    end
  end
end

begin
  require "heaprec"
rescue LoadError => e
  # heaprec_ext built for another Ruby (`heaprec run --ruby` with a Ruby of the program's own), or
  # missing: the program still runs, as it would have without heaprec.
  Heaprec::Autorun.decline("heaprec: cannot load its extension (#{e.message}); the program runs " \
                           "without heaprec")
  return
end

module Heaprec
  module Autorun
    class SettingError < StandardError; end

    DUMP_LOCK = Mutex.new

    module_function

    def integer_setting(name, default)
      value = ENV[name]
      return default if value.nil? || value.empty?
      Integer(value, 10).tap { |n| raise SettingError if n < 1 }
    rescue ArgumentError, SettingError
      raise SettingError, "#{name}=#{value.inspect} is not a positive integer"
    end

    def seconds_setting(name)
      value = ENV[name]
      return 0.0 if value.nil? || value.empty?
      Float(value).tap { |s| raise SettingError if s.negative? || !s.finite? }
    rescue ArgumentError, SettingError
      raise SettingError, "#{name}=#{value.inspect} is not a number of seconds such as 10 or 0.5"
    end

    # HEAPREC_RUBY_LIVENESS: the liveness backend (ruby_support.rb), when not the Ruby's default.
    def liveness_setting
      value = ENV["HEAPREC_RUBY_LIVENESS"].to_s
      return nil if value.empty?
      backend = Heaprec::LIVENESS_BACKENDS.find { |b| b.to_s == value }
      reason = backend ? Heaprec.unusable_liveness_reason(backend) : "is not one of object_id, weak_map"
      raise SettingError, "HEAPREC_RUBY_LIVENESS=#{value.inspect}: #{reason}" if reason

      backend
    end

    # The script's name; "ruby" for a program given with -e or on stdin ($0 is "-e" or "-").
    def program_name
      File.basename($PROGRAM_NAME.to_s).then { |n| n.empty? || n.start_with?("-") ? "ruby" : n }
    end

    # Its allocations (the path, the messages) are heaprec's: the final dump runs on the program's
    # main thread, in at_exit.
    def dump(reason, sequence)
      path = nil
      Heaprec._quietly do
        path = Heaprec._expand_output_template(@output, sequence, program_name)
        path = Heaprec._peak_path(path) if reason == "peak"
        # One dump at a time (the extension refuses a second): the peak, interval, signal and exit
        # dumps wait for each other rather than fail.
        DUMP_LOCK.synchronize { Heaprec._dump(path, reason) } # reason=, as in the manifest
        if manifest
          Heaprec._append_to_manifest(manifest, reason, path)
        else
          warn "heaprec: wrote #{path}"
        end
      end
    rescue StandardError, NoMemoryError => e
      warn "heaprec: could not write profile: #{e.message}"
      note_unwritten(path)
    end

    # Under heaprec run, which then knows a write failed rather than guess why there is no profile.
    def note_unwritten(path)
      Heaprec._append_to_manifest(manifest, "unwritten", path.to_s) if manifest
    rescue StandardError
      nil
    end

    # `heaprec run`'s manifest (schema/manifest.h), or nil outside it.
    def manifest = ENV["HEAPREC_MANIFEST"].then { |m| m.nil? || m.empty? ? nil : m }

    # The profile a process ends with, once: at_exit, exit! and a ractor may each try.
    def final_dump(reason)
      return unless Heaprec.running? && !@final_written
      @final_written = true
      stop_interval_dumps
      stop_peak_watch
      dump(reason, 0)
    end

    # How the program is ending, from the exception at_exit sees: a signal is "terminated".
    def ending_reason(error) = error.is_a?(SignalException) ? "terminated" : "exit"

    # HEAPREC_DUMP_SIGNAL as a signal number (from SIGUSR2, USR2 or 12), or nil when unset.
    def dump_signal_setting
      value = ENV["HEAPREC_DUMP_SIGNAL"].to_s
      return nil if value.empty?
      name = value.delete_prefix("SIG")
      return Integer(name, 10) if name.match?(/\A\d+\z/)
      Signal.list.fetch(name) { raise SettingError, "HEAPREC_DUMP_SIGNAL=#{value.inspect} is not a signal" }
    end

    # A dump on a signal, as native programs have it. The trap only starts a thread: a trap handler
    # may not take locks, and the dump must not run inside whatever the main thread was doing. A
    # handler the program had before is still called.
    def install_dump_signal
      signal = dump_signal_setting
      return if signal.nil?
      @signal_dumps = 0
      previous = Signal.trap(signal) do |number|
        Heaprec._quietly do
          Thread.new { Heaprec._quietly { dump("signal", @signal_dumps += 1) } }
        end
        previous.call(number) if previous.respond_to?(:call)
      end
    end

    # The HTTP endpoint. It failing to start (a port in use) is reported and the program is still
    # profiled: its endings and intervals keep their profiles.
    def start_http
      address = ENV["HEAPREC_HTTP"]
      return if address.nil? || address.empty?
      require "heaprec/http"
      @http = Heaprec::HttpServer.start(address, ENV["HEAPREC_HTTP_PUBLIC"] == "1", dump_lock: DUMP_LOCK)
    rescue StandardError => e
      warn "heaprec: not serving HTTP: #{e.message}"
    end

    def close_http_in_child = @http&.close_in_child

    # Work every `period` seconds on a thread of heaprec's own (named, its allocations not
    # sampled), until stopped. Stopping is asking, not killing: a dump in progress (writing without
    # the GVL) finishes and is reported, and the exit dump never finds one still running. Threads
    # do not survive fork: a child starts its own.
    class Ticker
      def initialize(name, period, &work)
        @lock = Mutex.new
        @wake = ConditionVariable.new
        @stopping = false
        # The new thread's VM stack is allocated here, by this thread: heaprec's, not the program's.
        @thread = Heaprec._quietly { Thread.new { run(name, period, &work) } }
      end

      def run(name, period, &work)
        Thread.current.name = name
        Heaprec._quietly do
          loop do
            stop = @lock.synchronize do
              @wake.wait(@lock, period) unless @stopping
              @stopping
            end
            break if stop
            work.call
          end
        end
      end
      private :run

      def stop
        return unless @thread.alive? && @thread != Thread.current
        @lock.synchronize do
          @stopping = true
          @wake.signal
        end
        @thread.join
      end
    end

    # Interval dumps (HEAPREC_DUMP_INTERVAL), a numbered series. Without one the same thread keeps
    # a checkpoint: every CHECKPOINT_SECONDS the final profile's file is written with the heap as
    # it is (reason interval), and the exit dump replaces it. A process that ends without running
    # Ruby code (SIGKILL, a crash in a C extension) leaves the heap of at most a minute before, as
    # native programs leave their heap record; one file, not a series, so a process running for
    # weeks leaves no litter. A dump at the default sampling takes milliseconds (docs/benchmarks.md,
    # "Ruby front end"): once a minute it costs nothing measurable.
    CHECKPOINT_SECONDS = 60.0 unless const_defined?(:CHECKPOINT_SECONDS) # a test sets it first

    def start_interval_dumps
      numbered = @interval.positive?
      sequence = 0
      @interval_ticker = Ticker.new("heaprec-dump", numbered ? @interval : CHECKPOINT_SECONDS) do
        dump("interval", numbered ? sequence += 1 : 0)
      end
    end

    def stop_interval_dumps = @interval_ticker&.stop

    # The peak profile, as native programs have it: NAME.peak.pb.gz, rewritten whenever the live
    # heap (the VM's live slots from GC.stat in bytes, plus the estimated live native bytes when
    # they are sampled: Heaprec._live_bytes) is 1.1x what it was at the last write (or at the
    # start); at most once a second, and at most a tenth of the time in peak dumps (a dump holds
    # the GVL for its liveness pass). The dump is of the heap as it is then, so the condition is on the current size, not
    # the highest seen: a heap that grew and shrank again between two checks is not written as
    # its peak. The count also holds objects that died since the last GC (at most the free slots
    # the GC left): it decides when to look, the dump measures. Polled, not hooked: a GC event
    # hook is one more hook the VM walks on every allocation while heaprec samples (2.3% of an
    # allocation loop's CPU, measured). A process killed by SIGKILL or the OOM killer leaves the
    # file on disk.
    PEAK_GROWTH = 1.1
    PEAK_POLL_SECONDS = 0.25

    def start_peak_watch
      @peak_written = Heaprec._live_bytes
      @peak_not_before = monotonic_now + 1.0
      @peak_ticker = Ticker.new("heaprec-peak", PEAK_POLL_SECONDS) { write_peak_if_grown }
    end

    def write_peak_if_grown
      live = Heaprec._live_bytes
      return if !Heaprec.running? || live < @peak_written * PEAK_GROWTH || monotonic_now < @peak_not_before
      started = monotonic_now
      dump("peak", 0)
      took = monotonic_now - started
      @peak_written = live
      @peak_not_before = monotonic_now + [1.0, 9 * took].max
    end

    def stop_peak_watch = @peak_ticker&.stop

    def monotonic_now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    DEFAULT_OUTPUT = "heaprec.%e.%p.pb.gz"

    # A directory (existing, or written with a trailing "/") means the default name in it, as for
    # the native library and `heaprec run -o DIR`.
    def output_template(given)
      return DEFAULT_OUTPUT if given.empty?
      return given unless given.end_with?("/") || (!given.include?("%") && File.directory?(given))

      File.join(given, DEFAULT_OUTPUT)
    end

    def install
      @output = output_template(ENV.fetch("HEAPREC_OUTPUT", ""))
      @interval = seconds_setting("HEAPREC_DUMP_INTERVAL")
      options = {
        sample_every: integer_setting("HEAPREC_SAMPLE_EVERY", Heaprec::DEFAULT_SAMPLE_EVERY),
        max_depth: integer_setting("HEAPREC_MAX_DEPTH", Heaprec::DEFAULT_MAX_DEPTH)
      }
      seed = ENV["HEAPREC_SEED"]
      options[:seed] = Integer(seed, 10) if seed && !seed.empty?
      liveness = liveness_setting
      options[:liveness] = liveness if liveness
      @options = options
      @dormant = switch_setting("HEAPREC_DORMANT")
      # What heaprec sets up from here (its threads, signal handler, HTTP server and the libraries
      # that loads, the at_exit proc) is heaprec's own, not the program's: none of it is sampled.
      Heaprec._quietly do
        if @dormant
          listen_for_commands
        else
          install_dump_signal
          start_profiling
        end
        start_http
        at_exit { final_dump(ending_reason($!)) }
      end
    rescue SettingError, ArgumentError, RangeError, RuntimeError, NotImplementedError => e
      Autorun.decline("heaprec: #{e.message}; the program runs without heaprec")
    end

    def dormant? = @dormant

    def start_profiling
      Heaprec.start(**@options)
      @final_written = false
      start_interval_dumps
      start_peak_watch
    end

    # Dormant (HEAPREC_DORMANT=1, `heaprec run --ruby --dormant`): nothing is sampled until
    # `heaprec attach PID`; `heaprec detach PID` writes the profile so far (reason detach) and
    # stops again. The commands come on the dump signal with a sigqueue value, as for native
    # programs (schema/control.h); the extension's handler notes them (Signal.trap cannot see the
    # value) and this thread, named after the state as the native dump thread is (the CLI reads
    # the name back to confirm), carries them out. A plain `kill -SIGNAL` is a dump while attached.
    CONTROL_POLL_SECONDS = 0.1

    def listen_for_commands
      number = dump_signal_setting
      raise SettingError, "HEAPREC_DORMANT=1 needs HEAPREC_DUMP_SIGNAL, which carries attach and detach" if number.nil?
      Heaprec._listen_for_commands(number)
      @signal_dumps = 0
      @ever_attached = false
      start_control_thread
    end

    def control_thread_name
      return "heaprec:on" if Heaprec.running?
      @ever_attached ? "heaprec:off" : "heaprec:dormant"
    end

    # Named by the thread that starts it, before the program's code runs on: `heaprec attach`
    # recognizes a dormant Ruby program by this name, so it must be there as soon as the program
    # is (named from inside, the new thread could be late).
    def start_control_thread
      @control_thread = Heaprec._quietly do
        Thread.new do
          Heaprec._quietly do
            loop do
              sleep CONTROL_POLL_SECONDS
              carry_out(Heaprec._next_command)
            end
          end
        end
      end
      @control_thread.name = control_thread_name
    end

    def carry_out(command)
      return if command.nil?
      case command
      when :attach
        return if Heaprec.running?
        start_profiling
        @ever_attached = true
      when :detach
        return unless Heaprec.running?
        final_dump("detach")
        Heaprec.stop
      when :dump
        dump("signal", @signal_dumps += 1) if Heaprec.running?
      end
      Thread.current.name = control_thread_name
    rescue StandardError, NotImplementedError => e
      warn "heaprec: #{command}: #{e.message}"
    end

    def switch_setting(name)
      value = ENV[name].to_s
      return false if ["", "0", "false", "no", "off"].include?(value)
      return true if %w[1 true yes on].include?(value)
      raise SettingError, "#{name}=#{value.inspect} is not 1 or 0"
    end

    # Process._fork is the hook every fork goes through (Ruby >= 3.1). A child has written nothing
    # yet: its own final profile is still to come.
    module ForkHook
      def _fork
        pid = super
        # A dormant parent's child is dormant too, and attachable: its own control thread.
        Heaprec::Autorun.start_control_thread if pid.zero? && Heaprec::Autorun.dormant?
        if pid.zero? && Heaprec.running?
          Heaprec::Autorun.instance_variable_set(:@final_written, false)
          Heaprec::Autorun.start_interval_dumps
          Heaprec::Autorun.start_peak_watch
          Heaprec::Autorun.close_http_in_child
        end
        pid
      end
    end

    # exit! skips at_exit: the profile is written first, as native programs write one at _exit.
    module ExitBangHook
      def exit!(*args)
        Heaprec::Autorun.final_dump("_exit")
        super
      end
    end

    # Kernel#exit! is private, as every Kernel function called without a receiver.
    module PrivateExitBangHook
      include ExitBangHook
      private :exit!
    end

    # Ractor.new stops heaprec (Heaprec::RactorGuard); what was gathered until then is written.
    module RactorHook
      def new(*args, **kwargs, &block)
        Heaprec::Autorun.final_dump("detach") if Heaprec.running?
        super
      end
    end
  end
end

Process.singleton_class.prepend(Heaprec::Autorun::ForkHook)
Process.singleton_class.prepend(Heaprec::Autorun::ExitBangHook)
Kernel.prepend(Heaprec::Autorun::PrivateExitBangHook)
Kernel.singleton_class.prepend(Heaprec::Autorun::ExitBangHook)
Ractor.singleton_class.prepend(Heaprec::Autorun::RactorHook) if defined?(Ractor)
Heaprec::Autorun.install
