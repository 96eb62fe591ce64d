//! The HTTP side of `--prometheus`: a small HTTP/1.1 server on one thread of its own, answering
//! `GET /metrics` with the live figures from the moment the address is bound until the run
//! (and the optional linger) is over.
//!
//! A scraper can never hold the run: the server is one thread whatever the scrapers do (a
//! single-threaded tokio runtime), it holds at most [`MAX_CONNECTIONS`] connections, each
//! connection gets one request whose head must arrive within [`REQUEST_TIMEOUT`] and fit in
//! [`MAX_REQUEST_HEAD`] bytes, the answer must be taken within [`WRITE_TIMEOUT`], and then the
//! connection is closed (no keep-alive, so a pipelining client gets one answer). Stopping the
//! server drops every connection at once: it never waits on a scraper.
//!
//! Slow clients cannot lock a scraper out either: when every slot is taken, a new connection
//! takes the slot of the oldest one still sending its request head (that one is closed); only
//! when every slot is answering a request is the newcomer told 503.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::encode::{self, CONTENT_TYPE};
use super::LiveFigures;
use crate::error::LoadgenError;

/// Connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 32;
/// Bytes of a request head (request line and headers); a longer one is answered 431.
pub const MAX_REQUEST_HEAD: usize = 8 * 1024;
/// How long a connection may take to send its request head.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a scraper may take to read its answer.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// `--prometheus ADDR`: `HOST:PORT` to listen on (`:PORT`: loopback, 127.0.0.1; port 0: any
/// free port). Listening beyond loopback takes an explicit host, e.g. `0.0.0.0:9464`.
pub fn parse_listen_address(text: &str) -> Result<SocketAddr, String> {
    let bad = |why: String| {
        format!(
            "{text:?} is not an address to listen on ({why}): write HOST:PORT, e.g. 127.0.0.1:9464, [::1]:9464, :9464 (loopback) or 0.0.0.0:9464 (every interface)"
        )
    };
    let Some((host, port)) = text.trim().rsplit_once(':') else {
        return Err(bad("no port".into()));
    };
    let port: u16 = port
        .parse()
        .map_err(|_| bad(format!("port {port:?} is not a number from 0 to 65535")))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    // An IP address is taken as it is; a name is resolved.
    (host, port)
        .to_socket_addrs()
        .map_err(|e| bad(format!("cannot resolve {host:?}: {e}")))?
        .next()
        .ok_or_else(|| bad(format!("{host:?} has no address")))
}

/// A running exporter: serves the figures until dropped.
#[derive(Debug)]
pub struct Exporter {
    figures: Arc<LiveFigures>,
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Binds `address` and starts serving `figures`. An address that cannot be bound (in
    /// use, not local, not permitted) is a usage error naming it.
    pub fn start(address: SocketAddr, figures: Arc<LiveFigures>) -> Result<Exporter, LoadgenError> {
        let cannot = |e: std::io::Error| {
            LoadgenError::Usage(format!("--prometheus {address}: cannot listen there: {e}"))
        };
        let listener = std::net::TcpListener::bind(address).map_err(cannot)?;
        listener.set_nonblocking(true).map_err(cannot)?;
        let address = listener.local_addr().map_err(cannot)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| LoadgenError::Failed(format!("starting the --prometheus server: {e}")))?;
        let registry = encode::registry(Arc::clone(&figures));
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("prometheus".into())
            .spawn(move || {
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, serve(listener, registry, stopped));
                // Dropping the tasks closes every connection still open, whatever its state.
                drop(local);
                runtime.shutdown_background();
            })
            .map_err(|e| LoadgenError::Failed(format!("starting the --prometheus server: {e}")))?;
        Ok(Exporter {
            figures,
            address,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Where it listens (the port chosen when ADDR asked for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The figures it serves (what the run adds to).
    pub fn figures(&self) -> Arc<LiveFigures> {
        Arc::clone(&self.figures)
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Prompt: the server thread never blocks on a connection (every read and write is
        // awaited under a timeout on its one runtime, and the stop wins over all of them).
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The connections being served, on the server's one thread.
#[derive(Default)]
struct Slots {
    busy: usize,
    /// Connections still sending their request head, oldest first: the ones a newcomer may
    /// displace.
    reading: VecDeque<(u64, AbortHandle)>,
    next_id: u64,
}

/// A connection's hold on its slot: given back when its task ends, finished or aborted.
struct Slot {
    slots: Rc<RefCell<Slots>>,
    id: u64,
}

impl Slot {
    /// Its request head has arrived: no newcomer may displace it now.
    fn head_read(&self) {
        self.slots
            .borrow_mut()
            .reading
            .retain(|(id, _)| *id != self.id);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut slots = self.slots.borrow_mut();
        slots.busy -= 1;
        slots.reading.retain(|(id, _)| *id != self.id);
    }
}

/// A slot for a new connection: a free one, else the one of the oldest connection still
/// sending its head (closed now); `None` when every slot is answering a request.
fn take_slot(slots: &Rc<RefCell<Slots>>) -> Option<Slot> {
    let mut s = slots.borrow_mut();
    if s.busy >= MAX_CONNECTIONS {
        let (_, oldest) = s.reading.pop_front()?;
        // Its task is dropped at once (before it runs again), and gives its slot back then.
        oldest.abort();
    }
    s.busy += 1;
    s.next_id += 1;
    Some(Slot {
        slots: Rc::clone(slots),
        id: s.next_id,
    })
}

/// Accepts connections until `stopped`; each is answered by a task of its own, at most
/// [`MAX_CONNECTIONS`] at once (and the ones being closed to make room).
async fn serve(
    listener: std::net::TcpListener,
    registry: Registry,
    mut stopped: oneshot::Receiver<()>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let registry = Rc::new(registry);
    let slots = Rc::new(RefCell::new(Slots::default()));
    loop {
        let accepted = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of descriptors or an aborted handshake: let it pass instead of spinning.
            Err(_) => {
                tokio::select! {
                    _ = &mut stopped => return,
                    () = tokio::time::sleep(Duration::from_millis(10)) => continue,
                }
            }
        };
        match take_slot(&slots) {
            Some(slot) => {
                let registry = Rc::clone(&registry);
                let id = slot.id;
                let task = tokio::task::spawn_local(async move {
                    answer(stream, &registry, &slot).await;
                    drop(slot);
                });
                slots
                    .borrow_mut()
                    .reading
                    .push_back((id, task.abort_handle()));
            }
            // Every slot answering: a short refusal if the socket takes it at once, then closed.
            None => {
                let _ = stream.try_write(&response(
                    "503 Service Unavailable",
                    "text/plain; charset=utf-8",
                    "busy: too many scrapers connected, try again\n",
                ));
            }
        }
    }
}

/// One connection: one request, one answer, closed.
async fn answer(mut stream: TcpStream, registry: &Registry, slot: &Slot) {
    let head = tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await;
    slot.head_read();
    let reply = match head {
        Ok(Ok(Some(line))) => route(&line, registry),
        Ok(Ok(None)) => response(
            "431 Request Header Fields Too Large",
            "text/plain; charset=utf-8",
            &format!("a request head holds at most {MAX_REQUEST_HEAD} bytes\n"),
        ),
        // Hung up, or too slow: nobody to answer.
        Ok(Err(_)) | Err(_) => return,
    };
    let _ = tokio::time::timeout(WRITE_TIMEOUT, async {
        stream.write_all(&reply).await?;
        stream.shutdown().await
    })
    .await;
}

/// Reads a request head (up to the blank line): its request line, or `None` when the head
/// does not fit in [`MAX_REQUEST_HEAD`] bytes.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        // Search only where the end could be: the new bytes and the three before them.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&chunk[..n]);
        if let Some(end) = head[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            if from + end > MAX_REQUEST_HEAD {
                return Ok(None);
            }
            let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
            return Ok(Some(String::from_utf8_lossy(line).trim_end().to_string()));
        }
        if head.len() > MAX_REQUEST_HEAD {
            return Ok(None);
        }
    }
}

/// The answer to a request line.
fn route(request_line: &str, registry: &Registry) -> Vec<u8> {
    let mut words = request_line.split_ascii_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    match (method, path) {
        ("GET", "/metrics") => response("200 OK", CONTENT_TYPE, &encode::render(registry)),
        ("GET", "/") => response(
            "200 OK",
            "text/plain; charset=utf-8",
            "redlock-loadgen: the running figures are at /metrics\n",
        ),
        _ => response(
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found: the figures are at GET /metrics\n",
        ),
    }
}

/// A whole HTTP/1.1 answer that closes the connection.
fn response(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_are_ip_and_port() {
        assert_eq!(
            parse_listen_address("127.0.0.1:9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_listen_address(":9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert!(parse_listen_address("localhost:9464")
            .unwrap()
            .ip()
            .is_loopback());
        let e = parse_listen_address("127.0.0.1:99999").unwrap_err();
        assert!(
            e.contains("\"127.0.0.1:99999\"") && e.contains("65535"),
            "{e}"
        );
        let e = parse_listen_address("127.0.0.1").unwrap_err();
        assert!(e.contains("no port"), "{e}");
    }

    /// 40 clients that connect and never finish their request (more than there are slots)
    /// do not keep an ordinary scrape out: it takes the oldest one's slot.
    #[test]
    fn slow_clients_holding_every_slot_do_not_lock_out_a_scrape() {
        use std::io::{Read, Write};
        let exporter = Exporter::start("127.0.0.1:0".parse().unwrap(), Arc::default()).unwrap();
        let address = exporter.address();
        let mut slow = Vec::new();
        for _ in 0..MAX_CONNECTIONS + 8 {
            let mut s = std::net::TcpStream::connect(address).unwrap();
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            slow.push(s);
        }
        let mut scrape = std::net::TcpStream::connect(address).unwrap();
        scrape
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        scrape
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        scrape.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        drop(slow);
    }

    #[test]
    fn an_address_in_use_is_a_usage_error_naming_it() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = taken.local_addr().unwrap();
        let e = Exporter::start(address, Arc::default()).unwrap_err();
        let LoadgenError::Usage(message) = e else {
            panic!("not a usage error: {e:?}");
        };
        assert!(
            message.contains(&format!("--prometheus {address}")),
            "{message}"
        );
    }
}
