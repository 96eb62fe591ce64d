//! The load generator's integration tests, one binary: each file a module, each running the
//! built `redlock-loadgen` against real local masters.

mod common;

mod agents;
mod baselines;
mod capacity;
mod cli;
mod compare_modes;
mod deploy;
mod docs_commands;
mod faults;
mod fencing;
mod gates;
mod history_agreement;
mod hostile_results;
mod html_escaping;
mod locks;
mod merge;
mod network;
mod prometheus;
mod prometheus_hostile;
mod real_run;
mod reports;
mod robustness;
mod safe_capacity;
mod scenarios;
mod storage_and_collect;
mod uncertainty;
