# attach_test.sh's Ruby target: as attach_target.c's read mode, in the interpreter.
before = Array.new(1000) { "b" * 4096 }
puts "ready #{Process.pid}"
$stdout.flush
$stdin.gets

def after_attach_site
  Array.new(2000) { |i| (i % 128).chr * 65536 }
end

after = after_attach_site
before = nil
puts "sum #{after.sum { |s| s.getbyte(65535) }}"
$stdout.flush
$stdin.gets
exit 7
