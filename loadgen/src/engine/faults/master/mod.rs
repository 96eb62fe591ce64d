//! Master faults (`run --fault SPEC`): [`spec`] parses `KIND:WHO[:ARG]@WHEN`, [`schedule`]
//! applies each step on time (killing, pausing and restarting local masters, switching the
//! fault proxies of `redlock_local::proxy`) and logs it as a [`FaultEvent`].

pub mod schedule;
pub mod spec;

pub use schedule::{FaultEvent, FaultSchedule};
pub use spec::FaultSpec;
