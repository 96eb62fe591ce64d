//! The suites that install the global OpenTelemetry meter provider, in a binary of their own:
//! every client built anywhere in the process while a provider is installed reports to it, so
//! no other test may run beside them, and they run one at a time ([`ONE_PROVIDER_AT_A_TIME`]).
#![cfg(feature = "otel")]

mod common;

mod otel;
mod otel_from_start;
mod prometheus_exporter;

/// Held for the whole of each test here: one installs its provider, builds its clients and
/// reads its figures before the next installs another.
pub static ONE_PROVIDER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
