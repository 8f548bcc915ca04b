//! `testkit`: what larder's tests share, so each harness piece exists once. A
//! dev-dependency only; nothing here ships.
//!
//! Map of the crate:
//! - [`TempDir`] (`temp_dir.rs`): a fresh scratch directory, removed on drop.
//! - [`lines`] (`lines.rs`): a reader's lines on a channel, so every wait has a deadline.
//! - [`Spawned`], [`output_within`] (`child.rs`): a child process (the `larder` binary)
//!   whose output and exit arrive on channels, signalled by name and killed if a test
//!   fails or it outlives its limit.

#![forbid(unsafe_code)]

mod child;
mod lines;
mod temp_dir;

pub use child::{output_within, Spawned};
pub use lines::lines;
pub use temp_dir::TempDir;
