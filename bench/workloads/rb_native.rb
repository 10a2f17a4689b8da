# frozen_string_literal: false

# Ruby's native heap: strings longer than an object slot, arrays and hash tables keep their
# contents in malloc'd memory, which is what heaprec's LD_PRELOAD library sees in a Ruby program.
# Keeps a table of N records live, replacing a third of the older ones as it goes. Deterministic.
#
#   ruby rb_native.rb [N]      (default 200000)
n = Integer(ARGV.fetch(0, "200000"))
table = {}
n.times do |i|
  table["key-#{i}"] = ["value-" * (1 + (i % 8)), i.to_s * 4, [i] * (i % 16), { i => i.to_s }]
  table.delete("key-#{i - 1000}") if i >= 1000 && (i % 3).zero?
end
puts table.size
