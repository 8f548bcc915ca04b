//! Processes a command starts and must never leave behind (`larder up`, the experiments):
//!
//! - `child`: one started process (killed if we die; stderr watched for its address).
//! - `probe`: plain HTTP GETs to see whether a process answers, and to read what it says.
//! - `signals`: SIGINT, SIGTERM and SIGCHLD, taken synchronously by the main loop.

pub mod child;
pub mod probe;
pub mod signals;
