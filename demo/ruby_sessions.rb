# frozen_string_literal: true

# A toy Ruby web-session store for trying heaprec's Ruby front end:
#
#   heaprec run --ruby -- ruby demo/ruby_sessions.rb 200000
#
# It handles generated requests. Each request parses a small header block and builds a response
# (garbage, freed right away), and it keeps a session per user. It also keeps an audit log of every
# request that it never trims: the leak a profile should point at.
class AuditLog
  def initialize
    @entries = []
  end

  def record(user, path)
    @entries << "#{user} #{path} #{@entries.size}" # never trimmed
  end

  def size = @entries.size
end

class SessionStore
  def initialize
    @sessions = {}
  end

  def touch(user)
    session = (@sessions[user] ||= { user: user, visits: 0, cart: [] })
    session[:visits] += 1
    session[:cart] << "item-#{session[:visits]}" if (session[:visits] % 7).zero?
    session
  end

  def size = @sessions.size
end

def parse_headers(raw)
  raw.split("\n").to_h { |line| line.split(": ", 2) }
end

def render(session, headers)
  "<p>#{headers['Host']}: #{session[:user]} visit #{session[:visits]}</p>".upcase
end

requests = Integer(ARGV.fetch(0, "200000"))
store = SessionStore.new
log = AuditLog.new
rng = Random.new(42)
bytes = 0
requests.times do |i|
  user = "user#{rng.rand(5_000)}"
  path = "/page/#{rng.rand(100)}"
  headers = parse_headers("Host: example.org\nUser-Agent: demo/#{i % 10}\nAccept: */*")
  session = store.touch(user)
  log.record(user, path)
  bytes += render(session, headers).bytesize
end
puts "ruby_sessions: #{requests} requests, #{store.size} sessions, #{log.size} log entries, " \
     "#{bytes} bytes rendered"
