//! Fault-injecting TCP proxy placed between a client and one master (feature `local`).
//! Work in progress: see the faults issue.
