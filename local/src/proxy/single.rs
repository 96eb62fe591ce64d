//! One proxy: its handle (the fault switches), and the accept task that owns its port and
//! its connections.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use super::connection;
use super::faults::{Direction, Faults, Latency};
use super::shared::Shared;

/// A TCP proxy in front of one master, with faults switchable at run time (see the
/// [module docs](super)). Dropping it closes its port and every connection it carries.
pub struct FaultProxy {
    local_addr: SocketAddr,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    runtime: Handle,
    accept_task: JoinHandle<()>,
}

impl fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultProxy")
            .field("local_addr", &self.local_addr)
            .field("upstream", &self.upstream)
            .field("faults", &self.faults().to_string())
            .field("connections", &self.connections())
            .finish()
    }
}

impl FaultProxy {
    /// Binds `127.0.0.1:0` and forwards every accepted connection to `upstream`; runs on the
    /// current tokio runtime (panics outside one, like `tokio::spawn`).
    pub async fn start(upstream: SocketAddr) -> io::Result<FaultProxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let local_addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            faults: watch::Sender::new(Faults::default()),
            reset_armed: AtomicBool::new(false),
            cuts: AtomicU64::new(0),
            rebound: Mutex::new(None),
            connections: AtomicUsize::new(0),
        });
        let accept_task = tokio::spawn(accept_loop(listener, local_addr, upstream, shared.clone()));
        Ok(FaultProxy {
            local_addr,
            upstream,
            shared,
            runtime: Handle::current(),
            accept_task,
        })
    }

    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The master's address.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// `redis://127.0.0.1:PORT` of the proxy.
    pub fn url(&self) -> String {
        format!("redis://{}", self.local_addr)
    }

    /// Adds `latency ± jitter` to every chunk going `direction`; zero for both removes it.
    /// Setting one direction leaves the other as it was.
    pub fn set_latency(&self, direction: Direction, latency: Duration, jitter: Duration) {
        let wanted = Latency { latency, jitter };
        self.shared.faults.send_if_modified(|f| {
            let before = *f;
            if direction.includes_upstream() {
                f.upstream_latency = wanted;
            }
            if direction.includes_downstream() {
                f.downstream_latency = wanted;
            }
            *f != before
        });
    }

    /// `true`: refuse new connections and cut existing ones. `false`: listen again on the
    /// same port (connections are accepted again when this returns, unless the port was
    /// taken in between; then the proxy keeps trying to bind it).
    pub fn set_down(&self, down: bool) {
        if down {
            // A listener bound by an earlier `set_down(false)` and not yet taken must not stay open.
            lock(&self.shared.rebound).take();
            self.shared.cuts.fetch_add(1, Ordering::AcqRel);
            self.shared.faults.send_modify(|f| f.down = true);
            return;
        }
        if !self.shared.faults.borrow().down {
            return;
        }
        // Bind here rather than in the accept task, so the port accepts again on return.
        let _entered = self.runtime.enter();
        if let Ok(listener) = bind(self.local_addr) {
            *lock(&self.shared.rebound) = Some(listener);
        }
        self.shared.faults.send_modify(|f| f.down = false);
    }

    /// `true`: accept connections, read and discard their bytes both ways, never answer.
    /// `false`: forward again; connections that lost bytes meanwhile are closed.
    pub fn set_blackhole(&self, on: bool) {
        self.shared.faults.send_if_modified(|f| {
            let changed = f.blackhole != on;
            f.blackhole = on;
            changed
        });
    }

    /// Resets (RST, `SO_LINGER 0`) the next connection that carries bytes, either way.
    pub fn reset_next(&self) {
        self.shared.reset_armed.store(true, Ordering::Release);
        // Bump the version so the fast path of every connection looks at the flag.
        self.shared.faults.send_modify(|_| {});
    }

    /// Removes every fault (a lifted `down` listens again, as with `set_down(false)`).
    pub fn clear(&self) {
        self.shared.reset_armed.store(false, Ordering::Release);
        self.set_down(false);
        self.shared.faults.send_if_modified(|f| {
            let changed = *f != Faults::default();
            *f = Faults::default();
            changed
        });
    }

    /// The faults now on.
    pub fn faults(&self) -> Faults {
        Faults {
            reset_armed: self.shared.reset_armed.load(Ordering::Acquire),
            ..*self.shared.faults.borrow()
        }
    }

    /// Live proxied connections (accepted and not yet closed).
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::Relaxed)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // The accept task owns the listener and the connection tasks (a JoinSet): aborting it
        // drops them all, which closes every socket.
        self.accept_task.abort();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Binds a listener on `addr` with `SO_REUSEADDR`, so the port of a proxy that was down can be
/// taken again although its old connections linger in TIME_WAIT. Needs a runtime context.
fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// Accepts connections and owns their tasks; closes and reopens the port for `down`.
async fn accept_loop(
    listener: TcpListener,
    addr: SocketAddr,
    upstream: SocketAddr,
    shared: Arc<Shared>,
) {
    let mut faults = shared.faults.subscribe();
    let mut listener = Some(listener);
    let mut connections = JoinSet::new();
    let mut cuts_seen = 0;
    let mut bind_pause = MIN_BIND_PAUSE;
    loop {
        let down = faults.borrow_and_update().down;
        let cuts = shared.cuts.load(Ordering::Acquire);
        if cuts != cuts_seen {
            cuts_seen = cuts;
            listener = None;
            connections.abort_all();
        }
        if down {
            listener = None;
        } else if listener.is_none() {
            listener = lock(&shared.rebound).take().or_else(|| bind(addr).ok());
            if listener.is_none() {
                // The port was taken meanwhile: retry with back-off until it is free again.
                tokio::select! {
                    _ = faults.changed() => {}
                    () = tokio::time::sleep(bind_pause) => {}
                }
                bind_pause = (bind_pause * 2).min(MAX_BIND_PAUSE);
                continue;
            }
            bind_pause = MIN_BIND_PAUSE;
        }
        tokio::select! {
            changed = faults.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            accepted = accept(listener.as_ref()) => match accepted {
                Ok((stream, _)) => {
                    let counted = connection::Counted::new(&shared);
                    connections.spawn(connection::serve(stream, upstream, shared.clone(), counted));
                }
                // E.g. out of file descriptors: do not spin on it.
                Err(_) => tokio::time::sleep(MIN_BIND_PAUSE).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

const MIN_BIND_PAUSE: Duration = Duration::from_millis(5);
const MAX_BIND_PAUSE: Duration = Duration::from_millis(500);

async fn accept(listener: Option<&TcpListener>) -> io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    }
}
