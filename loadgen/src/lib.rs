//! Load generator library (work in progress: see the load generator issue).
