#!/usr/bin/env bash
# The installed heaprec, two ways, checked from the installed files alone:
#  - the Debian package: cpack makes it from the build tree into a scratch directory; lintian must
#    report no error (its warnings are printed); its Depends must name the libraries heaprec links;
#    it is unpacked with dpkg-deb -x into a scratch root;
#  - `cmake --install BUILD --prefix SCRATCH`.
# In each, the installed heaprec (with no HEAPREC_LIBRARY and no build tree on PATH) profiles a
# small program and reports its allocating function; a program built with
# `pkg-config --cflags --libs heaprec` links the installed libheaprec.so and writes a profile
# through the C API; the man pages read without a groff warning; the bash completion completes.
# With the Ruby front end built, it is in a package of its own, ruby-heaprec (heaprec must not
# depend on libruby), and `cmake --install` puts it in Ruby's vendor directories under the prefix;
# from either, the installed `heaprec run --ruby` profiles a Ruby program.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR LIBDIR [RUBY_VENDORDIR RUBY_VENDORARCHDIR]
# (CMAKE_INSTALL_LIBDIR and the Ruby directories relative to the prefix, ruby/CMakeLists.txt)
set -euo pipefail
build=$1 source=$2 libdir=$3 ruby_lib=${4:-} ruby_arch=${5:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/heaprec-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

fail() {
  echo "package_test: $*" >&2
  exit 1
}
step() { echo "package_test: $* ($(($(date +%s) - start)) s)"; }

cc -O1 -g -fno-omit-frame-pointer -o "$work/alloc_program" "$source/tests/package/alloc_program.c"

# check_tree ROOT PREFIX: PREFIX is where the files are under ROOT (/usr in the package).
check_tree() {
  local root=$1 prefix=$2 name=$3
  local top=$root$prefix out=$work/$name
  mkdir -p "$out"
  for file in bin/heaprec "$libdir/heaprec/libheaprec.so" include/heaprec/heaprec.h include/heaprec/runtime.h \
    "$libdir/pkgconfig/heaprec.pc" share/bash-completion/completions/heaprec \
    share/man/man1/heaprec.1.gz share/man/man1/heaprec-run.1.gz share/doc/heaprec/LICENSE; do
    [[ -f $top/$file ]] || fail "$name: $prefix/$file is missing"
  done
  [[ ! -e $top/$libdir/libheaprec.so ]] || fail "$name: libheaprec.so is in the loader's path"

  # Profiling from the installed files alone.
  env -u HEAPREC_LIBRARY -u LD_LIBRARY_PATH PATH=/usr/bin:/bin \
    "$top/bin/heaprec" run -o "$out/run.%p.pb.gz" -- "$work/alloc_program" >"$out/run.log" 2>&1 ||
    fail "$name: heaprec run failed: $(cat "$out/run.log")"
  local profile
  profile=$(compgen -G "$out/run.*[0-9].pb.gz" | head -1) # the exit profile, not the peak's
  [[ -n $profile ]] || fail "$name: no profile written: $(cat "$out/run.log")"
  grep -q package_test_allocate "$out/run.log" ||
    fail "$name: the run's summary does not name package_test_allocate: $(cat "$out/run.log")"
  env PATH=/usr/bin:/bin "$top/bin/heaprec" report "$profile" >"$out/report.txt" 2>&1 ||
    fail "$name: heaprec report failed: $(cat "$out/report.txt")"
  grep -q 'package_test_allocate' "$out/report.txt" ||
    fail "$name: the report does not name package_test_allocate: $(cat "$out/report.txt")"

  # The C API through pkg-config, linked against the installed library. heaprec.pc names the
  # prefix it was installed under; the package's /usr is under ROOT here, which pkg-config is told
  # with PKG_CONFIG_SYSROOT_DIR, as for any package unpacked outside / (pkgconf puts ROOT in front
  # of the run path too, so the program runs as built).
  local sysroot=''
  [[ -z $prefix ]] || sysroot=$root
  grep -qx "prefix=${prefix:-$root}" "$top/$libdir/pkgconfig/heaprec.pc" ||
    fail "$name: heaprec.pc's prefix is not ${prefix:-$root}: $(cat "$top/$libdir/pkgconfig/heaprec.pc")"
  local flags
  flags=$(PKG_CONFIG_PATH=$top/$libdir/pkgconfig PKG_CONFIG_LIBDIR=/nonexistent \
    PKG_CONFIG_SYSROOT_DIR=$sysroot pkg-config --cflags --libs heaprec)
  [[ $flags == *"-I$top/include "* && $flags == *"-L$top/$libdir/heaprec "* &&
    $flags == *"-Wl,-rpath,$top/$libdir/heaprec "* && $flags == *-lheaprec* ]] ||
    fail "$name: pkg-config gives $flags"
  # shellcheck disable=SC2086  # the flags are words
  cc -DUSE_API -o "$out/api_program" "$source/tests/package/alloc_program.c" $flags
  linked=$(env -u LD_LIBRARY_PATH ldd "$out/api_program" | awk '$1 == "libheaprec.so" { print $3 }')
  [[ -n $linked && $(realpath "$linked") == "$(realpath "$top/$libdir/heaprec/libheaprec.so")" ]] ||
    fail "$name: the C API program loads libheaprec.so from '$linked'"
  env -u LD_PRELOAD -u LD_LIBRARY_PATH "$out/api_program" "$out/api.pb.gz" ||
    fail "$name: the C API program failed"
  "$top/bin/heaprec" report "$out/api.pb.gz" >"$out/api.txt" 2>&1 ||
    fail "$name: heaprec report failed on the C API's profile: $(cat "$out/api.txt")"
  grep -q package_test_allocate "$out/api.txt" ||
    fail "$name: the C API's profile does not name package_test_allocate: $(cat "$out/api.txt")"

  # Man pages: one per command, each read without a warning (as lintian reads them).
  local pages
  pages=$(ls "$top/share/man/man1")
  for command in report symbolize flame diff leaks; do
    [[ $pages == *"heaprec-$command.1.gz"* ]] || fail "$name: no heaprec-$command(1): $pages"
  done
  for page in "$top"/share/man/man1/*.1.gz; do
    warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
      "$page" 2>&1 >/dev/null)
    [[ -z $warnings ]] || fail "$name: $page: $warnings"
  done
  MANPAGER=cat MANWIDTH=100 man -l "$top/share/man/man1/heaprec-run.1.gz" >"$out/man.txt" 2>&1
  grep -q -- '--sample-interval' "$out/man.txt" || fail "$name: heaprec-run(1): $(cat "$out/man.txt")"

  # Bash completion: a command from a prefix, an option of a command from a prefix.
  local completed
  completed=$(PATH=$top/bin:/usr/bin:/bin bash -c '
    source "$1"
    COMP_WORDS=(heaprec rep); COMP_CWORD=1; _heaprec; echo "${COMPREPLY[*]}"
    COMP_WORDS=(heaprec run --sample-i); COMP_CWORD=2; _heaprec; echo "${COMPREPLY[*]}"
  ' _ "$top/share/bash-completion/completions/heaprec")
  [[ $completed == $'report\n--sample-interval' ]] || fail "$name: completion gave: $completed"
}

# check_ruby TOP NAME: the Ruby front end in Ruby's vendor directories under TOP, used by TOP's
# `heaprec run --ruby` with no RUBYLIB or HEAPREC_RUBY_LIB.
check_ruby() {
  local top=$1 name=$2
  for file in "$ruby_lib/heaprec.rb" "$ruby_lib/heaprec/autorun.rb" \
    "$ruby_arch/heaprec/heaprec_ext.so"; do
    [[ -f $top/$file ]] || fail "$name: $file is missing"
  done
  env -u HEAPREC_RUBY_LIB -u RUBYLIB PATH=/usr/bin:/bin "$top/bin/heaprec" run --ruby \
    --sample-every 1 -o "$work/$name/ruby.%p.pb.gz" -- ruby -e "\$kept = Array.new(100) { 'x' * 50 }" \
    >"$work/$name/ruby.log" 2>&1 || fail "$name: heaprec run --ruby failed: $(cat "$work/$name/ruby.log")"
  if ! grep -q 'ruby front end' "$work/$name/ruby.log" ||
    ! compgen -G "$work/$name/ruby.*.pb.gz" >/dev/null; then
    fail "$name: the Ruby front end wrote no profile: $(cat "$work/$name/ruby.log")"
  fi
}

# The packages, made from the tree that was built.
cpack -G DEB -B "$work/cpack" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 ||
  fail "cpack failed: $(cat "$work/cpack.log")"
deb=$(compgen -G "$work/cpack/heaprec_*.deb") || fail "cpack made no heaprec_*.deb: $(ls "$work/cpack")"
ruby_debs=()
if [[ -n $ruby_lib ]]; then
  ruby_deb=$(compgen -G "$work/cpack/ruby-heaprec_*.deb") ||
    fail "cpack made no ruby-heaprec_*.deb: $(ls "$work/cpack")"
  ruby_debs=("$ruby_deb")
fi
step "made $(cd "$work/cpack" && echo *.deb)"

lintian --no-cfg --fail-on none "$deb" "${ruby_debs[@]}" >"$work/lintian.log" 2>&1 ||
  fail "lintian failed to run: $(cat "$work/lintian.log")"
cat "$work/lintian.log"
! grep -q '^E: ' "$work/lintian.log" || fail "lintian reports errors"
step "lintian: $(grep -c '^W: ' "$work/lintian.log" || true) warnings, no error"

depends=$(dpkg-deb -f "$deb" Depends)
for library in libc6 libdw1 libelf1 zlib1g libzstd1 libdeflate0 libstdc++6; do
  [[ $depends == *"$library"* ]] || fail "heaprec's Depends lacks $library: $depends"
done
[[ $depends != *libruby* ]] || fail "heaprec depends on libruby: $depends"
[[ $(dpkg-deb -f "$deb" Recommends) == *libdebuginfod1* ]] || fail "Recommends lacks libdebuginfod1"

mkdir -p "$work/root" "$work/package"
dpkg-deb -x "$deb" "$work/root"
[[ -f $work/root/usr/share/doc/heaprec/copyright ]] || fail "heaprec has no copyright file"
if find "$work/root" -name '*.rb' -o -name 'heaprec_ext.so' | grep -q .; then
  fail "the heaprec package holds the Ruby front end"
fi
check_tree "$work/root" /usr package
if [[ -n $ruby_lib ]]; then
  [[ $(dpkg-deb -f "$ruby_deb" Depends) == *libruby3* ]] ||
    fail "ruby-heaprec's Depends lacks libruby: $(dpkg-deb -f "$ruby_deb" Depends)"
  dpkg-deb -x "$ruby_deb" "$work/root"
  [[ -f $work/root/usr/share/doc/ruby-heaprec/copyright ]] || fail "ruby-heaprec has no copyright file"
  check_ruby "$work/root/usr" package
fi
step "the packages' files work"

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
  fail "cmake --install failed: $(cat "$work/install.log")"
[[ ! -e $work/prefix/share/lintian ]] || fail "cmake --install installed the package's lintian file"
check_tree "$work/prefix" "" install
[[ -z $ruby_lib ]] || check_ruby "$work/prefix" install
step "cmake --install's files work"
