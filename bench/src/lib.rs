//! Benchmark support (work in progress: see the benchmarks issue).
