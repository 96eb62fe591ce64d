//! Python extension over redlock-core (work in progress: see the Python issue).
