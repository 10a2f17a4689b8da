"""A stand-in for Pyroscope's HTTP ingest API, for the push tests: no Pyroscope server can run on the
test machines, so this one checks every request against the rules Pyroscope documents and
implements (docs/design/push.md names the source of each), and records it.

    /usr/bin/python3 pyroscope_receiver.py LOG [--fail-first N] [--reject]
    /usr/bin/python3 pyroscope_receiver.py --self-test PROFILE.pb.gz

The second form checks the checks: it sends requests that each break one rule, and PROFILE in a
good one, to a receiver of its own, and prints "self-test: N refused, 1 accepted" or what went wrong.

Listens on an ephemeral loopback port and prints "ready PORT". Each request is answered:
  400 "violation: ..."  when it breaks a rule (and logged with "violation");
  503                   for the first N requests with --fail-first N;
  400 "rejected by test" for every request with --reject;
  200                   otherwise.
LOG gets one JSON object per request: status, violation, app, labels, from, until, time_nanos,
sample_types, body_sha256, org_id (X-Scope-OrgID), authorization.
"""
import gzip
import hashlib
import json
import re
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

APP_NAME = re.compile(r"^[A-Za-z0-9_./-]+$")  # labelset.IsServiceNameRuneAllowed
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")  # Prometheus model.LabelName.IsValid
HEAP_TYPES = {("inuse_space", "bytes"), ("inuse_objects", "count"), ("alloc_space", "bytes"),
              ("alloc_objects", "count")}


class Violation(Exception):
    pass


def varint(data, i):
    value, shift = 0, 0
    while True:
        if i >= len(data):
            raise Violation("truncated varint in the profile")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def fields(data):
    """(field number, wire type, value) of a protobuf message: bytes for wire type 2."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 2:
            length, i = varint(data, i)
            value, i = data[i:i + length], i + length
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise Violation("bad protobuf wire type %d" % wire)
        yield number, wire, value


def read_profile(body):
    """sample types as (type, unit) and time_nanos of a gzipped profile.proto."""
    if body[:2] != b"\x1f\x8b":
        raise Violation("the body is not gzip")
    raw = gzip.decompress(body)
    strings, types, time_nanos = [], [], 0
    for number, wire, value in fields(raw):
        if number == 6 and wire == 2:  # string_table
            strings.append(value.decode("utf-8"))
        elif number == 1 and wire == 2:  # sample_type
            t = {n: v for n, w, v in fields(value) if w == 0}
            types.append((t.get(1, 0), t.get(2, 0)))
        elif number == 9 and wire == 0:  # time_nanos
            time_nanos = value
    return [(strings[t], strings[u]) for t, u in types], time_nanos


def parse_name(name):
    """app and labels of "app{k=v,...}" (labelset.Parse, with the stricter Prometheus names)."""
    m = re.fullmatch(r"([^{}]*)\{([^{}]*)\}", name)
    if not m:
        raise Violation("name is not APP{LABELS}: %r" % name)
    app, body = m.group(1), m.group(2)
    if not APP_NAME.match(app):
        raise Violation("bad application name %r" % app)
    labels = {}
    for pair in body.split(",") if body else []:
        if pair.count("=") != 1:
            raise Violation("bad label %r" % pair)
        k, v = pair.split("=")
        if not LABEL_NAME.match(k) or k.startswith("__") or k in ("service_name", "pyroscope_spy"):
            raise Violation("bad or reserved label name %r" % k)
        if not v or v != v.strip():
            raise Violation("bad label value %r" % v)
        if k in labels:
            raise Violation("label %r twice" % k)
        labels[k] = v
    return app, labels


def check(handler, body):
    record = {}
    if handler.command != "POST":
        raise Violation("method %s, not POST" % handler.command)
    url = urllib.parse.urlsplit(handler.path)
    if url.path != "/ingest":
        raise Violation("path %s, not /ingest" % url.path)
    query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
    for key in ("name", "from", "until", "format"):
        if len(query.get(key, [])) != 1:
            raise Violation("query parameter %s missing or repeated" % key)
    if query["format"][0] != "pprof":
        raise Violation("format=%s, not pprof" % query["format"][0])
    record["app"], record["labels"] = parse_name(query["name"][0])
    start, until = query["from"][0], query["until"][0]
    if not (start.isdigit() and until.isdigit() and len(start) == 10 and len(until) == 10):
        raise Violation("from/until are not Unix seconds: %s %s" % (start, until))
    record["from"], record["until"] = int(start), int(until)
    if record["until"] < record["from"]:
        raise Violation("until < from")
    content_type = handler.headers.get("Content-Type", "")
    if content_type != "application/octet-stream":
        raise Violation("Content-Type %r for a raw format=pprof body" % content_type)
    types, time_nanos = read_profile(body)
    for t, _ in types:
        if "-" in t:
            raise Violation("sample type %r has a '-'" % t)
    if set(types) != HEAP_TYPES or len(types) != 4:
        raise Violation("sample types %r" % types)
    if not record["from"] <= time_nanos // 10**9 <= record["until"]:
        raise Violation("time_nanos %d outside [from, until]" % time_nanos)
    record["time_nanos"] = time_nanos
    record["sample_types"] = ["%s/%s" % t for t in types]
    return record


class Handler(BaseHTTPRequestHandler):
    def handle_any(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        with state["lock"]:
            state["count"] += 1
            count = state["count"]
        try:
            record = check(self, body)
            if count <= state["fail_first"]:
                status, reply = 503, "unavailable (test)"
            elif state["reject"]:
                status, reply = 400, "rejected by test"
            else:
                status, reply = 200, ""
        except Violation as v:
            record = {"violation": str(v)}
            status, reply = 400, "violation: %s" % v
        except Exception as e:  # a body the checks could not read is a violation too
            record = {"violation": "unreadable: %r" % e}
            status, reply = 400, "violation: unreadable"
        record["status"] = status
        record["body_sha256"] = hashlib.sha256(body).hexdigest()
        record["org_id"] = self.headers.get("X-Scope-OrgID")
        record["authorization"] = self.headers.get("Authorization")
        with state["lock"]:
            with open(state["log"], "a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
        data = reply.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET = do_PUT = handle_any

    def log_message(self, *args):
        pass


state = {"lock": threading.Lock(), "count": 0, "fail_first": 0, "reject": False}


def self_test(profile_path):
    import os
    import tempfile
    import urllib.request
    with open(profile_path, "rb") as f:
        good = f.read()
    state["log"] = os.path.join(tempfile.mkdtemp(), "log")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    types, time_nanos = read_profile(good)
    t = time_nanos // 10**9
    ok = {"name": "app{env=prod}", "from": str(t), "until": str(t + 1), "format": "pprof"}
    octet = "application/octet-stream"
    bad = [
        ("GET", "/ingest", ok, octet, good),
        ("POST", "/push", ok, octet, good),
        ("POST", "/ingest", dict(ok, name="app"), octet, good),
        ("POST", "/ingest", dict(ok, name="my app{}"), octet, good),
        ("POST", "/ingest", dict(ok, name="app{bad-name=1}"), octet, good),
        ("POST", "/ingest", dict(ok, name="app{__name__=x}"), octet, good),
        ("POST", "/ingest", dict(ok, name="app{service_name=x}"), octet, good),
        ("POST", "/ingest", dict(ok, name="app{a=1,a=2}"), octet, good),
        ("POST", "/ingest", dict(ok, name="app{a=}"), octet, good),
        ("POST", "/ingest", dict(ok, **{"from": str(t * 1000)}), octet, good),
        ("POST", "/ingest", dict(ok, until=str(t - 1)), octet, good),
        ("POST", "/ingest", dict(ok, **{"from": str(t + 5), "until": str(t + 6)}), octet, good),
        ("POST", "/ingest", dict(ok, format="folded"), octet, good),
        ("POST", "/ingest", {k: v for k, v in ok.items() if k != "until"}, octet, good),
        ("POST", "/ingest", ok, "multipart/form-data; boundary=x", good),
        ("POST", "/ingest", ok, octet, gzip.decompress(good)),
        ("POST", "/ingest", ok, octet, gzip.compress(gzip.decompress(good).replace(
            b"inuse_space", b"inuse-space"))),
    ]
    refused = 0
    for method, path, query, content_type, body in bad + [("POST", "/ingest", ok, octet, good)]:
        url = "http://127.0.0.1:%d%s?%s" % (server.server_address[1], path,
                                             urllib.parse.urlencode(query))
        request = urllib.request.Request(url, data=body if method == "POST" else None,
                                         method=method, headers={"Content-Type": content_type})
        try:
            status = urllib.request.urlopen(request).status
        except urllib.error.HTTPError as e:
            status = e.code
        if (status == 200) != (path == "/ingest" and query is ok and body is good and
                               content_type == octet and method == "POST"):
            print("self-test: %s %s %r %s answered %d" % (method, path, query, content_type,
                                                         status))
            sys.exit(1)
        refused += status != 200
    print("self-test: %d refused, 1 accepted" % refused)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--self-test"]:
        self_test(args[1])
        return
    state["log"] = args.pop(0)
    while args:
        arg = args.pop(0)
        if arg == "--fail-first":
            state["fail_first"] = int(args.pop(0))
        elif arg == "--reject":
            state["reject"] = True
        else:
            sys.exit("unknown argument " + arg)
    open(state["log"], "w").close()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("ready %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
