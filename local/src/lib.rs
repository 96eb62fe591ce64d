//! The test and measurement infrastructure of Redlock Suite, kept out of the lock client:
//!
//! - [`LocalMasters`]: real `redis-server` or `valkey-server` processes on free loopback ports that can be
//!   paused, resumed, killed and restarted, and never outlive the process that started them;
//! - [`proxy`]: a TCP proxy in front of a master with faults switchable at run time (latency,
//!   down, blackhole, reset);
//! - [`resp`]: the one small RESP codec every test, benchmark and the load generator use to
//!   talk to masters behind the client's back (and to write purpose-built test servers);
//! - [`eventually`], [`eventually_blocking`], [`wait_for_exit`]: bounded waits for tests, and
//!   [`with_default_signals`] for the child processes they signal;
//! - the `redlock-masters` binary: local masters for other languages' tests, driven over stdin.
//!
//! Used by the tests of every crate, the benchmarks (`bench/`) and the load generator.

mod child;
mod error;
mod masters;
pub mod proxy;
pub mod resp;
pub mod timer;
mod wait;

pub use child::with_default_signals;
pub use masters::{
    die_with_parent, private_ca, Launch, LocalError, LocalMasters, ServerKind, TlsFiles,
    FAKETIME_LIB_ENV, SERVER_ENV,
};
pub use wait::{eventually, eventually_blocking, wait_for_exit};
