//! redlock-local's integration tests, one binary: each file a module.

mod common;

mod fake_clock;
mod masters;
mod proxy;
mod redlock_masters;
