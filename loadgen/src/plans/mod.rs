//! Plans: what a command asks for, composed from runs of the engine (`crate::engine`, one
//! run of one configuration against one target). Turns of runs side by side ([`turns`]),
//! runs under faults and the scenario matrix ([`faults`]), the capacity search ([`capacity`]),
//! the sweep's levels ([`sweep`]) and load from many machines ([`coordinator`]). A plan may
//! hand results to the readers (renderers, merge); the engine never does.

pub mod capacity;
pub mod coordinator;
pub mod faults;
pub mod sweep;
pub mod turns;
