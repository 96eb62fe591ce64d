//! Support for the criterion benchmarks of `redlock-core` (`benches/*.rs`) and the
//! `bench-report` tool that turns criterion's saved estimates into the tables and ratios of
//! docs/src/benchmarks.md.
//!
//! Every benchmark runs against real `redis-server` masters on free loopback ports
//! ([`fixture::Masters`]), started once per criterion group; after each benchmark the masters
//! are checked for keys a release should have deleted, then flushed.

pub mod client_cpu;
pub mod fixture;
pub mod peers;
pub mod report;
