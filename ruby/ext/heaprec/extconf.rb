# frozen_string_literal: true

# Builds heaprec_ext for `gem build`/`gem install` from this repository. The extension compiles the
# heap recorder core from the checkout's src/core (beside ruby/) rather than a copy of it, and takes
# its version from the checkout's VERSION file, so the gem must be built from a checkout. CMake
# builds the same extension for the tests (ruby/CMakeLists.txt).
require "mkmf"

core = File.expand_path("../../../src/core", __dir__)
abort "heaprec: the core sources are not at #{core}: build the gem from a heaprec checkout" unless Dir.exist?(core)
version_file = File.expand_path("../../../VERSION", __dir__)
abort "heaprec: no VERSION file at #{version_file}: build the gem from a heaprec checkout" unless File.file?(version_file)
version = File.read(version_file).strip
abort "heaprec: zlib headers missing (apt-get install zlib1g-dev)" unless have_header("zlib.h")
abort "heaprec: protozero headers missing (apt-get install libprotozero-dev)" unless MakeMakefile["C++"].have_header("protozero/pbf_writer.hpp")

# Every core source: a list by name drifted once (heap_snapshot.cc, split out of heap_recorder.cc,
# was left out and the extension linked, then failed to load).
core_sources = Dir[File.join(core, "*.cc")].map { |f| File.basename(f) }.sort
$srcs = Dir[File.join(__dir__, "*.cc")].map { |f| File.basename(f) } + core_sources
$VPATH << core
$INCFLAGS << " -I#{File.dirname(core)} -I#{File.expand_path("../../../include", __dir__)}"
$CXXFLAGS << " -std=c++20 -fvisibility=hidden -fno-rtti -DHEAPREC_VERSION=\\\"#{version}\\\""
$LDFLAGS << " -Wl,--exclude-libs,ALL"
$libs << " -lz"
create_makefile("heaprec/heaprec_ext")
