# A fixture for the layering check's parser rule (tests/layering/CMakeLists.txt): the one parser
# below includes the library's state, which the heaprec command does not link.
set(heaprec_preload_http_parser_sources http/address.cc)
set(heaprec_preload_settings_sources)
