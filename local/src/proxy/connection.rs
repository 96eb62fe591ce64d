//! One proxied connection: a pump per direction, each a plain read → write loop until a
//! fault is switched on.
//!
//! Fast path: with no fault on, a pump reads into its buffer (allocated once per connection),
//! checks one atomic (the fault settings' version) and writes the bytes on. No timer, no
//! allocation, no lock per chunk. Faults are applied to the next bytes read after they were
//! switched on; faults that must act on idle connections (`down`, lifting a blackhole) are
//! also watched while a fault is on, and `down` cuts idle connections from the accept task.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::faults::{Faults, Latency};
use super::shared::Shared;

/// How long connecting to the master may take before the client connection is closed.
const UPSTREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Read buffer of each direction.
const BUFFER_SIZE: usize = 16 * 1024;
/// Bytes a delayed direction may hold before it stops reading (back-pressure to the sender).
const MAX_DELAYED_BYTES: usize = 4 * 1024 * 1024;

/// Counts a live connection from accept until its task ends (also when it is aborted).
pub(super) struct Counted(Arc<Shared>);

impl Counted {
    pub(super) fn new(shared: &Arc<Shared>) -> Self {
        shared.connections.fetch_add(1, Ordering::Relaxed);
        Counted(shared.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Why a direction stopped early; any of these ends the whole connection.
#[derive(Debug)]
enum Stop {
    /// The socket failed (peer gone, reset, ...).
    Io,
    /// `reset_next` fired on this connection: close both sides with RST.
    Reset,
    /// The proxy went down, or a blackhole that swallowed bytes of this connection was lifted
    /// (the byte stream lost data, so requests and replies no longer pair up): close it.
    Cut,
}

impl From<io::Error> for Stop {
    fn from(_: io::Error) -> Self {
        Stop::Io
    }
}

/// Serves one accepted client: connects to the master and pumps both ways until either side
/// ends, an I/O error occurs or a fault closes the connection.
pub(super) async fn serve(
    mut client: TcpStream,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    _counted: Counted,
) {
    // Accepted in the instant before `down` reached the accept task: never proxy it.
    if shared.faults.borrow().down {
        return;
    }
    if shared.faults.borrow().blackhole && !swallow_until_blackhole_lifts(&client, &shared).await {
        return;
    }
    let mut server =
        match tokio::time::timeout(UPSTREAM_CONNECT_TIMEOUT, TcpStream::connect(upstream)).await {
            Ok(Ok(server)) => server,
            // The master is unreachable: closing the client is what it would see without us.
            _ => return,
        };
    // Redis traffic is small request/reply messages: never let Nagle hold them back.
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let outcome = {
        let (client_read, client_write) = client.split();
        let (server_read, server_write) = server.split();
        let requests = Pump::new(true, client_read, server_write, &shared).run();
        let replies = Pump::new(false, server_read, client_write, &shared).run();
        tokio::try_join!(requests, replies)
    };
    if let Err(Stop::Reset) = outcome {
        // SO_LINGER 0: dropping the sockets sends RST instead of FIN, to both peers.
        let _ = client.set_zero_linger();
        let _ = server.set_zero_linger();
    }
}

/// A connection accepted into a blackhole: read and discard without even connecting to the
/// master (so it is silent whatever state the master is in). Returns true if it may be
/// proxied once the blackhole is lifted: it is still open and lost no bytes (otherwise its
/// requests and replies could no longer pair up).
async fn swallow_until_blackhole_lifts(client: &TcpStream, shared: &Shared) -> bool {
    let mut faults = shared.faults.subscribe();
    let mut buf = [0u8; 4096];
    let mut discarded = false;
    loop {
        let now = *faults.borrow_and_update();
        if now.down {
            return false;
        }
        if !now.blackhole {
            return !discarded;
        }
        tokio::select! {
            _ = faults.changed() => {}
            ready = client.readable() => {
                if ready.is_err() {
                    return false;
                }
                match client.try_read(&mut buf) {
                    Ok(0) => return false,
                    Ok(_) => {
                        // As in a pump, an armed reset takes precedence over the blackhole.
                        if shared.reset_armed.swap(false, Ordering::AcqRel) {
                            let _ = client.set_zero_linger();
                            return false;
                        }
                        discarded = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => return false,
                }
            }
        }
    }
}

/// What one direction currently has to do with the bytes it reads.
#[derive(Debug, Clone, Copy, Default)]
struct Mode {
    latency: Latency,
    blackhole: bool,
    down: bool,
    /// `reset_next` may be armed: the next chunk tries to consume it.
    reset_may_be_armed: bool,
}

impl Mode {
    fn is_plain(&self) -> bool {
        self.latency.is_zero() && !self.blackhole && !self.down && !self.reset_may_be_armed
    }
}

/// A chunk held back by latency.
struct Delayed {
    due: Instant,
    bytes: Vec<u8>,
}

/// Copies one direction of a connection, applying the faults that concern it.
struct Pump<'a, R, W> {
    upstream: bool,
    reader: R,
    writer: W,
    shared: &'a Shared,
    faults: watch::Receiver<Faults>,
    mode: Mode,
    buf: Box<[u8]>,
    delayed: VecDeque<Delayed>,
    delayed_bytes: usize,
    /// The reader reached end of stream.
    eof: bool,
    /// Bytes of this direction were swallowed by a blackhole.
    discarded: bool,
}

impl<'a, R, W> Pump<'a, R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    fn new(upstream: bool, reader: R, writer: W, shared: &'a Shared) -> Self {
        Pump {
            upstream,
            reader,
            writer,
            shared,
            faults: shared.faults.subscribe(),
            mode: Mode::default(),
            buf: vec![0; BUFFER_SIZE].into_boxed_slice(),
            delayed: VecDeque::new(),
            delayed_bytes: 0,
            eof: false,
            discarded: false,
        }
    }

    async fn run(mut self) -> Result<(), Stop> {
        self.refresh()?;
        loop {
            if self.mode.is_plain() && self.delayed.is_empty() {
                // Fast path: a plain copy plus one atomic load per chunk.
                let n = self.reader.read(&mut self.buf).await?;
                if n == 0 {
                    return self.finish().await;
                }
                if self.faults.has_changed().unwrap_or(false) {
                    self.refresh()?;
                }
                if self.mode.is_plain() {
                    self.writer.write_all(&self.buf[..n]).await?;
                } else {
                    self.on_chunk(n).await?;
                }
                continue;
            }
            if self.eof && self.delayed.is_empty() {
                return self.finish().await;
            }
            let due = self.delayed.front().map(|chunk| chunk.due);
            let may_read = !self.eof && self.delayed_bytes < MAX_DELAYED_BYTES;
            tokio::select! {
                biased;
                _ = self.faults.changed() => self.refresh()?,
                () = sleep_until(due) => self.deliver_front().await?,
                read = self.reader.read(&mut self.buf), if may_read => match read? {
                    0 => self.eof = true,
                    n => self.on_chunk(n).await?,
                },
            }
        }
    }

    /// Reads the current fault settings; acts on those that concern the connection as a whole.
    fn refresh(&mut self) -> Result<(), Stop> {
        let faults = *self.faults.borrow_and_update();
        self.mode = Mode {
            latency: faults.latency(self.upstream),
            blackhole: faults.blackhole,
            down: faults.down,
            reset_may_be_armed: self.shared.reset_armed.load(Ordering::Acquire),
        };
        if self.mode.down || (self.discarded && !self.mode.blackhole) {
            return Err(Stop::Cut);
        }
        if self.mode.blackhole && !self.delayed.is_empty() {
            // Not yet delivered, so never delivered: the blackhole swallows it.
            self.delayed.clear();
            self.delayed_bytes = 0;
            self.discarded = true;
        }
        Ok(())
    }

    /// Handles `n` fresh bytes in `buf` while some fault is (or was just) on.
    async fn on_chunk(&mut self, n: usize) -> Result<(), Stop> {
        if self.mode.down {
            return Err(Stop::Cut);
        }
        if self.mode.reset_may_be_armed {
            // Exactly one connection consumes an armed reset.
            if self.shared.reset_armed.swap(false, Ordering::AcqRel) {
                return Err(Stop::Reset);
            }
            self.mode.reset_may_be_armed = false;
        }
        if self.mode.blackhole {
            self.discarded = true;
            return Ok(());
        }
        if self.mode.latency.is_zero() && self.delayed.is_empty() {
            self.writer.write_all(&self.buf[..n]).await?;
            return Ok(());
        }
        // Toxiproxy's latency: each chunk waits its delay from its arrival, and never
        // overtakes the chunk before it.
        let arrived = Instant::now();
        let mut due = arrived
            .checked_add(self.mode.latency.sample())
            .unwrap_or_else(far_future);
        if let Some(last) = self.delayed.back() {
            due = due.max(last.due);
        }
        self.delayed_bytes += n;
        self.delayed.push_back(Delayed {
            due,
            bytes: self.buf[..n].to_vec(),
        });
        Ok(())
    }

    async fn deliver_front(&mut self) -> Result<(), Stop> {
        if let Some(chunk) = self.delayed.pop_front() {
            self.delayed_bytes -= chunk.bytes.len();
            self.writer.write_all(&chunk.bytes).await?;
        }
        Ok(())
    }

    /// End of stream from the reader: pass the half-close on.
    async fn finish(&mut self) -> Result<(), Stop> {
        self.writer.shutdown().await?;
        Ok(())
    }
}

/// Sleeps until `due`, or forever when there is nothing to wait for.
async fn sleep_until(due: Option<Instant>) {
    match due {
        // Finer than tokio's millisecond timer: delays of a fraction of a millisecond are
        // what network profiles add.
        Some(due) => crate::timer::sleep_until(due.into_std()).await,
        None => std::future::pending().await,
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}
