# The preload library's parsers of untrusted text, relative to src/preload: compiled into
# libheaprec.so, into the static libraries the CLI and the tests link (CMakeLists.txt), and by the
# fuzzers (fuzz/CMakeLists.txt), from this one list.
set(heaprec_preload_http_parser_sources http/address.cc http/request.cc http/symbol_query.cc)
# Reads untrusted files rather than text (the symbol tables the HTTP endpoint names addresses with).
set(heaprec_preload_elf_symbol_sources http/elf_symbols.cc)
set(heaprec_preload_settings_sources control/settings.cc process/environment.cc)
