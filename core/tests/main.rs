//! The core's integration tests, one binary: each file a module, against real local masters.
//!
//! Three suites run in binaries of their own because they change the whole process: `otel`
//! (tests/global_meter.rs: they install the global OpenTelemetry meter provider, which every
//! client built meanwhile would report to), `hostile` (it counts panics anywhere in its
//! process with a panic hook) and `paused_client` (it stops its own process with SIGSTOP).

mod common;

mod acquire_release;
mod blocking;
mod config;
mod connection;
mod extend;
mod faults;
mod fencing;
mod fencing_bound;
mod fencing_model;
mod messages;
mod metrics_sink;
mod mutual_exclusion;
mod native_commands;
mod overload;
mod redaction;
mod spans;
mod tls;
