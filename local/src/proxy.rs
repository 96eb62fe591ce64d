//! A fault-injecting TCP proxy to put between a client and one master.
//!
//! [`FaultProxy::start`] listens on `127.0.0.1:<free port>` and forwards every connection to
//! its master. Faults switch at run time, without restarting the proxy, with the semantics of
//! Toxiproxy's toxics:
//!
//! | call | effect |
//! |------|--------|
//! | [`set_latency`](FaultProxy::set_latency) | each chunk in that direction waits `latency ± jitter` after it arrived; order is kept, connections do not wait for each other. `Both` delays requests *and* replies, so a round trip gains about twice the latency. Delays round up to tokio's 1 ms timer tick. |
//! | [`set_down`](FaultProxy::set_down) | the port is closed (connects are refused) and live connections are cut; `false` listens again on the same port. |
//! | [`set_blackhole`](FaultProxy::set_blackhole) | connections are accepted, bytes are read and discarded both ways, nothing is answered. Lifting it closes the connections that lost bytes (their requests and replies would no longer pair up); the others carry on. |
//! | [`reset_next`](FaultProxy::reset_next) | the next connection to carry bytes (either way) is closed with RST (`SO_LINGER 0`) on both sides; those bytes are dropped. One shot. |
//! | [`clear`](FaultProxy::clear) | removes every fault. |
//!
//! A fault applies from the next bytes read after the call returns. With no fault on, the data
//! path is a plain copy (one atomic load per chunk, no timer, no allocation).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::time::Duration;
//! use redlock_local::LocalMasters;
//! use redlock_local::proxy::{Direction, FaultProxies};
//!
//! let masters = LocalMasters::start(5).expect("redis-server");
//! let proxies = FaultProxies::start(&masters).await?;
//! let urls = proxies.urls(); // give these to the client under test
//! proxies[1].set_latency(Direction::Downstream, Duration::from_millis(50), Duration::ZERO);
//! proxies[2].set_blackhole(true);
//! // ... acquire through the faulty network ...
//! proxies.clear();
//! # Ok(()) }
//! ```

mod connection;
mod faults;
mod set;
mod shared;
mod single;

pub use faults::{Direction, Faults, Latency};
pub use set::FaultProxies;
pub use single::FaultProxy;
