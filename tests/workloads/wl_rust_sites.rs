// A small Rust service as people write one, for the end-to-end tests
// (tests/e2e/rust_program_test.cc): requests for 500 users served through a cache that never
// evicts, a log that keeps every request, and a boxed session kept for every tenth request. Each
// allocation site is a function of its own (never inlined) with one allocating line, marked
// `// site:`; the test reads those markers for the lines it expects. Live bytes at exit (which
// drops nothing), with `heaprec run --sample-interval 1`, each site's own (not its callees'):
//
//   site                   objects  bytes each  live bytes
//   load_value                 500        4096   2,048,000  (the cache's values, calloc)
//   new_session                400        1024     409,600  (Box<Session>)
//   format_entry              4000          64     256,000  (the log's lines)
//   RequestLog::record           1   4096 x 24      98,304  (the log's Vec<String>, grown by
//                                                            doubling from 4 to 4096: 11 buffers)
//   Cache::get_or_load         501           -     ~55,000  (500 9-byte keys, and the hash table:
//                                                            1024 buckets, as hashbrown lays them)
//   Server::open_session         1     512 x 8       4,096  (the Vec<Box<Session>>, 4 to 512)
//
// Usage: wl_rust_sites [REQUESTS]   (default 4000; the table is for the default)
use std::collections::HashMap;
use std::fmt::Write;

const USERS: usize = 500;
const VALUE_SIZE: usize = 4096;
const LINE_CAPACITY: usize = 64;
const REQUESTS_PER_SESSION: usize = 10;
const SCRATCH: usize = 1016; // a Session is 1024 bytes

struct Cache {
    map: HashMap<String, Vec<u8>>,
}

impl Cache {
    #[inline(never)]
    fn get_or_load(&mut self, key: &str) -> &[u8] {
        if !self.map.contains_key(key) {
            let value = load_value(key);
            self.map.insert(key.to_string(), value); // site: Cache::get_or_load
        }
        &self.map[key]
    }
}

// What a real cache would read from disk or the network.
#[inline(never)]
fn load_value(key: &str) -> Vec<u8> {
    let mut value = vec![0u8; VALUE_SIZE]; // site: load_value
    value[0] = key.len() as u8;
    value
}

struct RequestLog {
    lines: Vec<String>,
}

impl RequestLog {
    #[inline(never)]
    fn record(&mut self, line: String) {
        self.lines.push(line); // site: RequestLog::record
    }
}

#[inline(never)]
fn format_entry(request: usize, user: &str, bytes: usize) -> String {
    let mut line = String::with_capacity(LINE_CAPACITY); // site: format_entry
    write!(line, "GET /users/{} #{} {}B", user, request, bytes).unwrap();
    line
}

struct Session {
    id: u64,
    scratch: [u8; SCRATCH],
}

#[inline(never)]
fn new_session(id: u64) -> Box<Session> {
    let scratch = [id as u8; SCRATCH];
    Box::new(Session { id, scratch }) // site: new_session
}

struct Server {
    cache: Cache,
    log: RequestLog,
    sessions: Vec<Box<Session>>,
}

impl Server {
    #[inline(never)]
    fn open_session(&mut self, id: u64) {
        self.sessions.push(new_session(id)); // site: Server::open_session
    }

    fn handle(&mut self, request: usize) {
        let user = format!("user-{:04}", request % USERS);
        let bytes = self.cache.get_or_load(&user).len();
        let line = format_entry(request, &user, bytes);
        self.log.record(line);
        if request % REQUESTS_PER_SESSION == 0 {
            self.open_session(request as u64);
        }
    }
}

fn main() {
    let requests: usize = std::env::args()
        .nth(1)
        .map_or(4000, |a| a.parse().expect("REQUESTS"));
    let mut server = Server {
        cache: Cache {
            map: HashMap::new(),
        },
        log: RequestLog { lines: Vec::new() },
        sessions: Vec::new(),
    };
    for request in 0..requests {
        server.handle(request);
    }
    let scratch: usize = server
        .sessions
        .iter()
        .map(|s| s.scratch[1] as usize + s.id as usize)
        .sum();
    println!(
        "rust-sites requests={} cached={} sessions={} logged={} checksum={}",
        requests,
        server.cache.map.len(),
        server.sessions.len(),
        server.log.lines.len(),
        scratch
    );
    // Ends without dropping the server, as a service that runs until it is stopped never frees
    // its state: the profile written at exit holds all of it.
    std::process::exit(0);
}
