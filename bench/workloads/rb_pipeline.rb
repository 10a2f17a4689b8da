# frozen_string_literal: false
#
# Allocation-heavy Ruby: a JSON request pipeline, for the overhead of heaprec's Ruby front end.
#
#     ruby rb_pipeline.rb [REQUESTS]      (default 30000; bench/run.py --quick uses fewer)
#
# Every request is generated as a nested Hash, serialized with JSON.generate, parsed back, validated,
# normalized (strings downcased, stripped, split), priced, grouped, rendered as a response Hash and
# serialized again: lots of short-lived Strings, Hashes, Arrays and Floats. Some of it stays: a
# session per user (a growing Hash of Hashes), an order history per user, an audit log with one
# frozen line per request, an index of SKUs, and a bounded response cache that evicts (medium-lived
# objects). Deterministic: its own seeded Random, insertion-ordered Hashes, nothing printed that
# depends on object ids, hash seeds or time. Prints one line with a checksum (CRC-32 of every
# response body) and the sizes of what it keeps, so a profiled run can be checked against a plain one.
require "json"
require "zlib"

class Pipeline
  WORDS = %w[alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike
             november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee
             zulu amber cobalt crimson indigo jade ochre saffron scarlet teal umber violet].freeze
  CATEGORIES = %w[books garden kitchen toys tools music games sports office travel].freeze
  CACHE_LIMIT = 2000

  attr_reader :sessions, :audit, :sku_index, :cache, :checksum, :bytes_out

  def initialize(seed)
    @rng = Random.new(seed)
    @sessions = {}     # user id -> session Hash: long-lived, grows
    @audit = []        # one frozen String per request: long-lived, grows
    @sku_index = {}    # sku -> [count, revenue]: long-lived, grows then saturates
    @cache = {}        # request key -> response body: bounded, oldest evicted (medium-lived)
    @checksum = 0
    @bytes_out = 0
  end

  def word
    WORDS[@rng.rand(WORDS.size)]
  end

  def generate_request(i)
    user = @rng.rand(12_000)
    items = Array.new(1 + @rng.rand(6)) do
      { "sku" => "SKU-#{word.upcase}-#{@rng.rand(5000)}",
        "category" => CATEGORIES[@rng.rand(CATEGORIES.size)],
        "qty" => 1 + @rng.rand(4),
        "price" => (@rng.rand(100_000) / 100.0),
        "note" => "  #{word} #{word} #{word}  " }
    end
    { "id" => i,
      "user" => { "id" => user, "name" => "#{word.capitalize} #{word.capitalize}",
                  "email" => "#{word}.#{user}@example.COM", "tags" => Array.new(3) { word } },
      "items" => items,
      "coupon" => (@rng.rand(5).zero? ? "SAVE#{@rng.rand(30)}" : nil),
      "meta" => { "ua" => "Mozilla/5.0 (#{word}; #{word}) Ruby/#{RUBY_VERSION}", "retries" => 0 } }
  end

  def validate(req)
    raise "bad request #{req['id']}" unless req["user"].is_a?(Hash) && req["items"].is_a?(Array)
    req["items"].each do |it|
      raise "bad item in #{req['id']}" unless it["qty"].is_a?(Integer) && it["price"].is_a?(Numeric)
    end
  end

  def normalize(req)
    user = req["user"]
    { "user_id" => user["id"],
      "name" => user["name"].strip.split(" ").map(&:capitalize).join(" "),
      "email" => user["email"].downcase,
      "tags" => user["tags"].map { |t| t.downcase.to_sym }.uniq.sort,
      "lines" => req["items"].map do |it|
        { sku: it["sku"], category: it["category"].to_sym, qty: it["qty"],
          price: it["price"], words: it["note"].strip.split }
      end,
      "coupon" => req["coupon"] }
  end

  def price(order)
    discount = order["coupon"] ? order["coupon"].delete("SAVE").to_i / 100.0 : 0.0
    by_category = order["lines"].group_by { |l| l[:category] }
    totals = by_category.transform_values do |lines|
      lines.sum { |l| l[:qty] * l[:price] }.round(2)
    end
    subtotal = totals.values.sum.round(2)
    { totals: totals, subtotal: subtotal, discount: (subtotal * discount).round(2),
      total: (subtotal * (1 - discount)).round(2) }
  end

  def remember(req, order, bill)
    uid = order["user_id"]
    session = (@sessions[uid] ||= { "email" => order["email"], "name" => order["name"],
                                    "orders" => [], "spent" => 0.0, "tags" => [] })
    session["orders"] << { "id" => req["id"], "total" => bill[:total],
                           "skus" => order["lines"].map { |l| l[:sku] } }
    session["spent"] = (session["spent"] + bill[:total]).round(2)
    session["tags"] = (session["tags"] | order["tags"])
    order["lines"].each do |l|
      entry = (@sku_index[l[:sku]] ||= [0, 0.0])
      entry[0] += l[:qty]
      entry[1] = (entry[1] + l[:qty] * l[:price]).round(2)
    end
    @audit << "#{req['id']} user=#{uid} lines=#{order['lines'].size} total=#{bill[:total]}".freeze
  end

  def respond(req, order, bill)
    body = JSON.generate({ "request" => req["id"], "user" => order["user_id"],
                           "status" => "ok", "total" => bill[:total],
                           "categories" => bill[:totals].map { |c, v| { "name" => c.to_s, "amount" => v } },
                           "words" => order["lines"].flat_map { |l| l[:words] }.tally.sort.first(5) })
    key = "#{order['user_id']}:#{order['lines'].map { |l| l[:sku] }.sort.join(',')}"
    @cache.delete(@cache.first[0]) if @cache.size >= CACHE_LIMIT
    @cache[key] = body
    body
  end

  def handle(i)
    wire = JSON.generate(generate_request(i))
    req = JSON.parse(wire)
    validate(req)
    order = normalize(req)
    bill = price(order)
    remember(req, order, bill)
    body = respond(req, order, bill)
    @checksum = Zlib.crc32(body, @checksum)
    @bytes_out += body.bytesize + wire.bytesize
  end
end

requests = Integer(ARGV.fetch(0, "30000"))
pipeline = Pipeline.new(20_261_130)
requests.times { |i| pipeline.handle(i) }
orders = pipeline.sessions.each_value.sum { |s| s["orders"].size }
printf("rb_pipeline requests=%d sessions=%d orders=%d audit=%d skus=%d cache=%d bytes=%d crc=%08x\n",
       requests, pipeline.sessions.size, orders, pipeline.audit.size, pipeline.sku_index.size,
       pipeline.cache.size, pipeline.bytes_out, pipeline.checksum)
