//! A small HTTP/1.1 server for the workbench: one thread per connection, at most
//! [`Limits::connections`] at once, one request per connection (`Connection: close`).
//!
//! Why not a framework: the workbench serves a handful of JSON endpoints and three embedded
//! files to a few annotators, from a daemon that is otherwise thread-based, and what matters is
//! that no client can harm it: a body over [`Limits::max_body`] is refused (413) before it is
//! read, headers over [`MAX_HEAD`] bytes are refused (431), a client that sends too slowly is
//! cut off by socket timeouts ([`Limits::timeout`]), and a flood of connections beyond the limit
//! gets 503 at once instead of threads. At the limit, a new connection first takes the place of
//! the oldest one still sending its request head: sockets held half-open (a slow-loris client)
//! never lock another client out, as they did for the 10 s of their timeout; only requests
//! being answered fill the limit. `httparse` (a well-kept, dependency-free parser, the one
//! under hyper) reads the request head; everything else is std.
//!
//! This module knows nothing of the workbench: it turns bytes into a [`Request`] and a
//! [`Response`] into bytes.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most bytes of request line and headers read.
pub const MAX_HEAD: usize = 16 * 1024;

/// How much one client may ask of the server.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request body accepted, in bytes.
    pub max_body: usize,
    /// Longest wait for a client's next bytes, and for it to take ours.
    pub timeout: Duration,
    /// Connections served at once; more are answered 503.
    pub connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_body: 1 << 20, timeout: Duration::from_secs(10), connections: 64 }
    }
}

/// A request as the handlers see it.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The path, without the query string.
    pub path: String,
    /// The `Authorization: Bearer` token, if any.
    pub bearer: Option<String>,
    /// The `Host`, `Origin`, `Content-Type` and `Sec-Fetch-Site` headers, if given: where the
    /// request says it goes and where a browser says it comes from.
    pub host: Option<String>,
    pub origin: Option<String>,
    pub content_type: Option<String>,
    pub fetch_site: Option<String>,
    pub body: Vec<u8>,
}

/// A response: a status and a body of some content type.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, value: &serde_json::Value) -> Response {
        Response { status, content_type: "application/json", body: value.to_string().into_bytes() }
    }

    /// An error as JSON: `{"error": message}`.
    pub fn error(status: u16, message: impl Into<String>) -> Response {
        Response::json(status, &serde_json::json!({ "error": message.into() }))
    }

    /// 204 No Content.
    pub fn empty() -> Response {
        Response { status: 204, content_type: "text/plain", body: Vec::new() }
    }

    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n\
             Content-Security-Policy: default-src 'self'; style-src 'self'; img-src 'self' data:; \
             frame-ancestors 'none'\r\n\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        out.write_all(head.as_bytes())?;
        out.write_all(&self.body)?;
        out.flush()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Why a connection's request could not be read; answered with the status it carries.
#[derive(Debug)]
struct Refused(Response);

/// Serves `handler` on `listener` until `stop` is set: the listener waits for a connection
/// (`poll(2)`) at most 200 ms at a time, so a stop is seen within that and a connection is
/// taken at once. (Sleeping between non-blocking accepts instead cost every request up to the
/// sleep: 50 ms at the median.)
pub fn serve<H>(listener: TcpListener, limits: Limits, stop: &AtomicBool, handler: Arc<H>) -> io::Result<()>
where
    H: Fn(Request) -> Response + Send + Sync + 'static,
{
    listener.set_nonblocking(true)?;
    let open = Arc::new(AtomicUsize::new(0));
    let heads = Arc::new(Heads::default());
    while !stop.load(Ordering::Relaxed) {
        let (stream, _) = match listener.accept() {
            Ok(conn) => conn,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait_readable(&listener, Duration::from_millis(200));
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Out of descriptors and the like: wait, do not spin.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
        };
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(limits.timeout));
        let _ = stream.set_write_timeout(Some(limits.timeout));
        if open.fetch_add(1, Ordering::AcqRel) >= limits.connections && !heads.evict_oldest() {
            open.fetch_sub(1, Ordering::AcqRel);
            let mut stream = stream;
            let _ = Response::error(503, "too many connections; try again").write_to(&mut stream);
            continue;
        }
        // Recorded here, in the order connections come, not when its thread first runs: under
        // load a handler may start late, and a connection beyond the limit must still find
        // the half-open ones to take the place of (seen: a request refused while 80 threads
        // of half-open sockets had not run yet).
        let ticket = heads.enter(&stream);
        let (counted, handler, shared) = (Arc::clone(&open), Arc::clone(&handler), Arc::clone(&heads));
        let spawned = std::thread::Builder::new().name("workbench-http".into()).spawn(move || {
            handle(stream, limits, &*handler, &shared, ticket);
            counted.fetch_sub(1, Ordering::AcqRel);
        });
        if spawned.is_err() {
            // The connection was dropped (closed) with the closure.
            open.fetch_sub(1, Ordering::AcqRel);
            if let Some(ticket) = ticket {
                heads.leave(ticket);
            }
        }
    }
    Ok(())
}

/// The connections still sending their request head, oldest first: those a new connection may
/// take the place of at the limit.
#[derive(Default)]
struct Heads {
    next: AtomicU64,
    reading: Mutex<Vec<(u64, Instant, TcpStream)>>,
}

impl Heads {
    /// Records a connection whose head is being read; its ticket, if it could be recorded.
    fn enter(&self, stream: &TcpStream) -> Option<u64> {
        let clone = stream.try_clone().ok()?;
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        self.reading.lock().unwrap_or_else(|p| p.into_inner()).push((ticket, Instant::now(), clone));
        Some(ticket)
    }

    /// The head of `ticket` was read (or the connection ended).
    fn leave(&self, ticket: u64) {
        self.reading.lock().unwrap_or_else(|p| p.into_inner()).retain(|(t, _, _)| *t != ticket);
    }

    /// Cuts off the connection that has been sending its head the longest (its thread's read
    /// fails, and it ends); false if no connection is sending its head.
    fn evict_oldest(&self) -> bool {
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let Some(oldest) = reading.iter().enumerate().min_by_key(|(_, (_, since, _))| *since).map(|(i, _)| i) else {
            return false;
        };
        let (_, _, stream) = reading.swap_remove(oldest);
        let _ = stream.shutdown(std::net::Shutdown::Both);
        true
    }
}

/// Serves one connection, recorded in `heads` under `ticket` while its head is read.
fn handle<H: Fn(Request) -> Response>(
    mut stream: TcpStream,
    limits: Limits,
    handler: &H,
    heads: &Heads,
    ticket: Option<u64>,
) {
    let read = read_request(&mut stream, limits);
    if let Some(ticket) = ticket {
        heads.leave(ticket);
    }
    let response = match read {
        Ok(request) => handler(request),
        Err(Refused(response)) => response,
    };
    let _ = response.write_to(&mut stream);
    // Closing with unread bytes (a refused body) would reset the connection, and the client
    // could lose the response: say we are done, then read what is left, within bounds.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut rest = Deadline { stream: &mut stream, deadline: std::time::Instant::now() + Duration::from_secs(2) };
    let _ = io::copy(&mut (&mut rest).take(2 * limits.max_body as u64), &mut io::sink());
}

/// Reads one request: the head (at most [`MAX_HEAD`] bytes), then a body of `Content-Length`
/// bytes (at most `limits.max_body`, refused before it is read). The whole request must arrive
/// within `limits.timeout`: a client that trickles a byte at a time is cut off too.
fn read_request(stream: &mut TcpStream, limits: Limits) -> Result<Request, Refused> {
    let deadline = std::time::Instant::now() + limits.timeout;
    let mut stream = Deadline { stream, deadline };
    let timed_out = |e: &io::Error| matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut);
    let mut buf = vec![0u8; 4096];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            if buf.len() >= MAX_HEAD {
                return Err(Refused(Response::error(431, format!("request head over {MAX_HEAD} bytes"))));
            }
            buf.resize((buf.len() * 2).min(MAX_HEAD), 0);
        }
        let n = match stream.read(&mut buf[filled..]) {
            Ok(0) => return Err(Refused(Response::error(400, "the connection closed before a whole request"))),
            Ok(n) => n,
            Err(e) if timed_out(&e) => return Err(Refused(Response::error(408, "the request came too slowly"))),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Refused(Response::error(400, e.to_string()))),
        };
        filled += n;
        let mut headers = [httparse::EMPTY_HEADER; 48];
        let mut req = httparse::Request::new(&mut headers);
        let head_len = match req.parse(&buf[..filled]) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => continue,
            Err(e) => return Err(Refused(Response::error(400, format!("malformed request: {e}")))),
        };
        let method = req.method.unwrap_or("").to_string();
        let path = req.path.unwrap_or("/").split('?').next().unwrap_or("/").to_string();
        let header = |name: &str| {
            req.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| String::from_utf8_lossy(h.value))
        };
        let bearer = header("authorization")
            .and_then(|v| v.strip_prefix("Bearer ").map(|t| t.trim().to_string()))
            .filter(|t| !t.is_empty());
        if header("transfer-encoding").is_some() {
            return Err(Refused(Response::error(411, "send a Content-Length, not a chunked body")));
        }
        let length = match header("content-length") {
            None => 0,
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map_err(|_| Refused(Response::error(400, format!("bad Content-Length {v:?}"))))?,
        };
        if length > limits.max_body {
            return Err(Refused(Response::error(
                413,
                format!("a body of {length} bytes; at most {}", limits.max_body),
            )));
        }
        let mut body = buf[head_len..filled].to_vec();
        body.truncate(length);
        let start = body.len();
        body.resize(length, 0);
        let mut got = start;
        while got < length {
            match stream.read(&mut body[got..]) {
                Ok(0) => return Err(Refused(Response::error(400, "the body ended before its Content-Length"))),
                Ok(n) => got += n,
                Err(e) if timed_out(&e) => return Err(Refused(Response::error(408, "the body came too slowly"))),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Refused(Response::error(400, e.to_string()))),
            }
        }
        let (host, origin) = (header("host").map(|v| v.trim().to_string()), header("origin").map(|v| v.to_string()));
        let content_type = header("content-type").map(|v| v.to_string());
        let fetch_site = header("sec-fetch-site").map(|v| v.to_string());
        return Ok(Request { method, path, bearer, host, origin, content_type, fetch_site, body });
    }
}

/// Waits until `listener` has a connection to accept, or `timeout`.
fn wait_readable(listener: &TcpListener, timeout: Duration) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, for the length given; poll only writes its revents.
        unsafe { libc::poll(&mut fd, 1, timeout.as_millis() as libc::c_int) };
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = listener;
        std::thread::sleep(timeout.min(Duration::from_millis(20)));
    }
}

/// A stream whose reads time out at a fixed instant, however the bytes trickle in.
struct Deadline<'a> {
    stream: &'a mut TcpStream,
    deadline: std::time::Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf)
    }
}

/// Binds `addr`; an address that is taken or not local says so.
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr)
}
