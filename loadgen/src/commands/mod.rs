//! One module per subcommand, each called by the one dispatcher ([`crate::app`]), which starts
//! the runtime and the signal listener once ([`shared::Session`]).

pub mod capacity;
pub mod collect;
pub mod compare;
pub mod compare_runs;
pub mod merge;
pub mod output;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod shared;
pub mod sweep;
