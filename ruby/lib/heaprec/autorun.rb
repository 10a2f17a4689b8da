# frozen_string_literal: true

# Profiles an unmodified program: `heaprec run --ruby -- ruby app.rb` loads this file through
# RUBYOPT=-rheaprec/autorun. Settings come from the environment, as for the native profiler:
#
#   HEAPREC_OUTPUT         output template: %p pid, %t time, %e program (default heaprec.%e.%p.pb.gz)
#   HEAPREC_SAMPLE_EVERY   sample each object with probability 1/N (default 1000; 1 = every object)
#   HEAPREC_DUMP_INTERVAL  also dump every S seconds (numbered files), for `heaprec leaks`
#   HEAPREC_DUMP_SIGNAL    also dump when this signal arrives (SIGUSR2, USR2 or a number)
#   HEAPREC_HTTP           serve GET /debug/pprof/heap on a port, HOST:PORT or a Unix socket path
#                          (HEAPREC_HTTP_PUBLIC=1 for a host other than loopback)
#   HEAPREC_SEED           fixed sampling seed; HEAPREC_MAX_DEPTH frames per stack (default 400)
#   HEAPREC_MANIFEST       set by `heaprec run`: where each written file is reported
#
# A bad setting is reported on stderr and the program runs unprofiled: the profiler must never stop
# the program. Dump failures are reported the same way and never change the program's exit status.
#
# Endings get the profile native programs get, named the same way: exit (a normal exit or an
# exception), terminated (a signal such as SIGTERM or SIGINT ended the program: Ruby raises it as
# a SignalException and runs at_exit), _exit (exit!, which skips at_exit: forking job runners end
# their children so). A ractor stops heaprec (Ruby 3.1 crashes otherwise); the profile up to then
# is written first (reason detach). SIGKILL and crashes leave the last interval profile.
require "heaprec"

module Heaprec
  module Autorun
    class SettingError < StandardError; end

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

    def program_name
      File.basename($PROGRAM_NAME.to_s).then { |n| n.empty? ? "ruby" : n }
    end

    def dump(reason, sequence)
      path = Heaprec._expand_output_template(@output, sequence, program_name)
      Heaprec._dump(path, reason) # the profile's reason= comment, as in the manifest
      manifest = ENV["HEAPREC_MANIFEST"]
      if manifest && !manifest.empty?
        Heaprec._append_to_manifest(manifest, reason, path)
      else
        warn "heaprec: wrote #{path}"
      end
    rescue StandardError, NoMemoryError => e
      warn "heaprec: could not write profile: #{e.message}"
    end

    # The profile a process ends with, once: at_exit, exit! and a ractor may each try.
    def final_dump(reason)
      return unless Heaprec.running? && !@final_written
      @final_written = true
      stop_interval_dumps
      dump(reason, 0)
    end

    # How the program is ending, from the exception at_exit sees: a signal is "terminated".
    def ending_reason(error) = error.is_a?(SignalException) ? "terminated" : "exit"

    # A dump on a signal, as native programs have it. The trap only starts a thread: a trap handler
    # may not take locks, and the dump must not run inside whatever the main thread was doing. A
    # handler the program had before is still called.
    def install_dump_signal
      name = ENV["HEAPREC_DUMP_SIGNAL"]
      return if name.nil? || name.empty?
      signal = name.match?(/\A\d+\z/) ? Integer(name, 10) : name.delete_prefix("SIG")
      @signal_dumps = 0
      previous = Signal.trap(signal) do |number|
        Thread.new do
          Heaprec._exclude_this_thread
          dump("signal", @signal_dumps += 1)
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
      @http = Heaprec::HttpServer.start(address, ENV["HEAPREC_HTTP_PUBLIC"] == "1")
    rescue StandardError => e
      warn "heaprec: not serving HTTP: #{e.message}"
    end

    def close_http_in_child = @http&.close_in_child

    # Interval dumps run in a thread; a forked child starts its own (threads do not survive fork).
    # It is stopped by asking, not killed: a dump in progress (writing without the GVL) finishes
    # and is reported, and the exit dump never finds one still running.
    def start_interval_dumps
      return unless @interval.positive?
      @sequence = 0
      @lock = Mutex.new
      @wake = ConditionVariable.new
      @stopping = false
      @interval_thread = Thread.new do
        Thread.current.name = "heaprec-dump"
        Heaprec._exclude_this_thread
        loop do
          stop = @lock.synchronize do
            @wake.wait(@lock, @interval) unless @stopping
            @stopping
          end
          break if stop
          dump("interval", @sequence += 1)
        end
      end
    end

    def stop_interval_dumps
      return unless @interval_thread&.alive?
      @lock.synchronize do
        @stopping = true
        @wake.signal
      end
      @interval_thread.join
    end

    def install
      @output = ENV.fetch("HEAPREC_OUTPUT", "").then { |o| o.empty? ? "heaprec.%e.%p.pb.gz" : o }
      @interval = seconds_setting("HEAPREC_DUMP_INTERVAL")
      options = {
        sample_every: integer_setting("HEAPREC_SAMPLE_EVERY", Heaprec::DEFAULT_SAMPLE_EVERY),
        max_depth: integer_setting("HEAPREC_MAX_DEPTH", Heaprec::DEFAULT_MAX_DEPTH)
      }
      seed = ENV["HEAPREC_SEED"]
      options[:seed] = Integer(seed, 10) if seed && !seed.empty?
      install_dump_signal
      Heaprec.start(**options)
      @final_written = false
      start_interval_dumps
      start_http
      at_exit { final_dump(ending_reason($!)) }
    rescue SettingError, ArgumentError, RangeError, RuntimeError, NotImplementedError => e
      warn "heaprec: #{e.message}; the program runs without heaprec"
    end

    # Process._fork is the hook every fork goes through (Ruby >= 3.1). A child has written nothing
    # yet: its own final profile is still to come.
    module ForkHook
      def _fork
        pid = super
        if pid.zero? && Heaprec.running?
          Heaprec::Autorun.instance_variable_set(:@final_written, false)
          Heaprec::Autorun.start_interval_dumps
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
