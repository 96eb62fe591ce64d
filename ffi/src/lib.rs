//! C ABI of redlock-core (work in progress: see the C ABI issue).
