# frozen_string_literal: false
#
# The three workloads of the Ruby front end's cost benchmark (bench/ruby_overhead.py, `ruby_cost`):
#
#     ruby rb_cost.rb churn [N]   object churn: N iterations of small objects (an Object with two
#                                 ivars, a short String, a 3-element Array, a 2-key Hash), one in
#                                 64 kept in a ring of 4096 (default 1200000)
#     ruby rb_cost.rb json [N]    JSON.parse of a ~6 MB document, N times (default 10); the document
#                                 is generated here from Random.new(42): 20000 records of strings,
#                                 numbers, booleans, nulls, nested arrays and objects
#     ruby rb_cost.rb erb [N]     an ERB template (stdlib) rendered N times (default 4000) over
#                                 50 rows of records: escaping, loops, interpolation
#
# Deterministic: each prints one line with a checksum (CRC-32) of what it computed, so a profiled
# run can be checked against a plain one. Nothing printed depends on object ids, hash seeds or time.
require "zlib"

mode = ARGV.fetch(0, "churn")
n = ARGV[1] && Integer(ARGV[1])

case mode
when "churn"
  Item = Struct.new(:id, :name)
  class Node
    def initialize(value, tag)
      @value = value
      @tag = tag
    end
    attr_reader :value, :tag
  end
  n ||= 1_200_000
  ring = Array.new(4096)
  crc = 0
  n.times do |i|
    node = Node.new(i, "t#{i & 1023}")
    pair = [node, i.to_s, Item.new(i, node.tag)]
    h = { id: i, pair: pair }
    ring[(i >> 6) & 4095] = h if (i & 63).zero?
    crc = Zlib.crc32(pair[1], crc) if (i & 1023).zero?
  end
  kept = ring.compact
  puts "churn n=#{n} kept=#{kept.size} crc=#{crc} last=#{kept.last[:pair][2].name}"
when "json"
  require "json"
  n ||= 10
  rng = Random.new(42)
  words = %w[alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike]
  records = Array.new(20_000) do |i|
    {
      "id" => i, "name" => "#{words[rng.rand(words.size)]} #{words[rng.rand(words.size)]}",
      "price" => (rng.rand * 1000).round(2), "active" => rng.rand(2) == 1, "note" => nil,
      "tags" => Array.new(rng.rand(6)) { words[rng.rand(words.size)] },
      "address" => { "street" => "#{rng.rand(9999)} #{words[rng.rand(words.size)]} st",
                     "zip" => format("%05d", rng.rand(100_000)), "geo" => [rng.rand * 90, rng.rand * 180] },
      "history" => Array.new(rng.rand(4)) { |k| { "at" => 1_600_000_000 + k, "qty" => rng.rand(50) } }
    }
  end
  doc = JSON.generate(records)
  records = nil
  crc = 0
  n.times do
    parsed = JSON.parse(doc)
    crc = Zlib.crc32(parsed[rng.rand(parsed.size)].to_s, crc)
  end
  puts "json bytes=#{doc.bytesize} n=#{n} crc=#{crc}"
when "erb"
  require "erb"
  n ||= 4000
  template = ERB.new(<<~'HTML', trim_mode: "-")
    <table class="orders">
    <%- rows.each_with_index do |row, i| -%>
      <tr class="<%= i.even? ? "even" : "odd" %>">
        <td><%= row[:id] %></td><td><%= ERB::Util.html_escape(row[:customer]) %></td>
        <td><%= format("%.2f", row[:total]) %></td>
        <td><%- row[:items].each do |item| -%><span><%= item.upcase %></span><%- end -%></td>
      </tr>
    <%- end -%>
    </table>
  HTML
  rng = Random.new(42)
  rows = Array.new(50) do |i|
    { id: i, customer: "Customer <#{i}> & \"co\"", total: rng.rand * 500,
      items: Array.new(1 + rng.rand(4)) { |k| "item-#{k}-#{rng.rand(100)}" } }
  end
  crc = 0
  bytes = 0
  n.times do
    html = template.result_with_hash(rows: rows)
    bytes += html.bytesize
    crc = Zlib.crc32(html, crc)
  end
  puts "erb n=#{n} bytes=#{bytes} crc=#{crc}"
else
  abort "usage: rb_cost.rb churn|json|erb [N]"
end
