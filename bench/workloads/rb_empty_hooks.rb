# frozen_string_literal: true
#
# bench/ruby_overhead.py's floor for the Ruby front end: loaded before the program,
#
#     RUBYLIB=<build>/lib/ruby RUBYOPT=-r/path/to/rb_empty_hooks.rb HEAPREC_BENCH_EMPTY_HOOKS=newobj
#
# it turns on the VM's object events with C hooks that do nothing (heaprec's extension,
# Heaprec::Testing.empty_event_hooks): `newobj`, or `newobj,freeobj` for both events. What a run
# costs over plain ruby then is what any profiler built on these events pays before doing any work.
# The extension only: heaprec.rb would load more code (rubygems' version classes), which moves the
# GC's schedule on some workloads (see docs/benchmarks.md, "Ruby front end: cost at the default").
require "heaprec/heaprec_ext"

events = ENV.fetch("HEAPREC_BENCH_EMPTY_HOOKS", "newobj").split(",")
Heaprec::Testing.empty_event_hooks(events.include?("newobj"), events.include?("freeobj"))
