# frozen_string_literal: true

require "socket"
require "tmpdir"

module Heaprec
  # The profile over HTTP, as native programs serve it (HEAPREC_HTTP, `heaprec run --http`):
  # GET /debug/pprof/heap answers with a profile of the live heap now, which `go tool pprof URL`,
  # `heaprec fetch` and `heaprec ui` read. One thread accepts one connection at a time; each request
  # dumps into a private temporary file (reason http) and sends it. ADDR is a port (on 127.0.0.1),
  # HOST:PORT or a Unix socket path; a host other than loopback needs HEAPREC_HTTP_PUBLIC=1, as the
  # profile shows the program's code and data sizes to whoever can connect. Port 0 takes a free
  # one. The start-up line on stderr says where it serves. Only the process that started it serves:
  # a forked child closes its copy of the listening socket.
  class HttpServer
    PATH = "/debug/pprof/heap"
    LOOPBACK = ["127.0.0.1", "::1", "localhost"].freeze

    # `dump_lock`: held around each dump, the lock autorun's other dumps (peak, interval, signal,
    # the ending) take, so a request waits for them instead of failing.
    def self.start(address, public_ok, dump_lock: Mutex.new)
      new(address, public_ok, dump_lock).tap(&:run)
    end

    def initialize(address, public_ok, dump_lock)
      @server = listen(address, public_ok)
      @owner = Process.pid
      @dump_lock = dump_lock
    end

    def run
      warn "heaprec: serving #{url}"
      @thread = Heaprec._quietly do
        Thread.new do
          Thread.current.name = "heaprec-http"
          Heaprec._quietly { loop { serve(@server.accept) } }
        rescue IOError, SystemCallError
          nil # closed: the process is ending or forked
        end
      end
    end

    # In a forked child: the parent keeps serving; the child's copy of the socket is closed.
    def close_in_child
      @server.close unless @server.closed?
    end

    def url
      address = @server.local_address
      return "unix:#{address.unix_path}#{PATH}" if address.unix?

      host = address.ipv6? ? "[#{address.ip_address}]" : address.ip_address
      "http://#{host}:#{address.ip_port}#{PATH}"
    end

    private

    def listen(address, public_ok)
      return UNIXServer.new(address) if address.include?("/")

      host, port = address.match?(/\A\d+\z/) ? ["127.0.0.1", address] : address.rpartition(":").values_at(0, 2)
      host = host.delete_prefix("[").delete_suffix("]")
      unless public_ok || LOOPBACK.include?(host)
        raise ArgumentError, "HEAPREC_HTTP=#{address}: #{host} is not loopback; set HEAPREC_HTTP_PUBLIC=1 " \
                             "to serve profiles to other machines"
      end
      TCPServer.new(host, Integer(port, 10))
    end

    def serve(client)
      request = client.gets.to_s
      # The headers are read and ignored: a GET has no body.
      while (line = client.gets) && line != "\r\n"; end
      method, target = request.split(" ", 3)
      path = target.to_s.split("?", 2).first
      if path != PATH
        respond(client, "404 Not Found", "text/plain", "not found: heaprec serves #{PATH}\n")
      elsif method != "GET" && method != "HEAD"
        respond(client, "405 Method Not Allowed", "text/plain", "use GET\n")
      elsif !Heaprec.running? # dormant, or detached
        respond(client, "503 Service Unavailable", "text/plain",
                "heaprec: not sampling (heaprec attach #{Process.pid} switches it on)\n")
      else
        respond(client, "200 OK", "application/octet-stream", profile_now, head: method == "HEAD")
      end
    rescue StandardError => e
      respond(client, "500 Internal Server Error", "text/plain", "heaprec: #{e.message}\n") rescue nil
    ensure
      client.close
    end

    def profile_now
      Dir.mktmpdir("heaprec-http") do |dir|
        path = File.join(dir, "heap.pb.gz")
        @dump_lock.synchronize { Heaprec._dump(path, "http") }
        File.binread(path)
      end
    end

    def respond(client, status, type, body, head: false)
      client.write("HTTP/1.1 #{status}\r\nContent-Type: #{type}\r\nContent-Length: #{body.bytesize}\r\n" \
                   "Connection: close\r\n\r\n")
      client.write(body) unless head
    end
  end
end
