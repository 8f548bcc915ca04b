//! Trace-driven cluster simulator (being written).
