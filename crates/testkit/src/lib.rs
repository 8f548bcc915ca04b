//! `testkit`: what larder's tests share, so each harness piece exists once. A
//! dev-dependency only; nothing here ships.
//!
//! Map of the crate:
//! - [`TempDir`] (`temp_dir.rs`): a fresh scratch directory, removed on drop.
//! - [`lines`] (`lines.rs`): a reader's lines on a channel, so every wait has a deadline.
//! - [`get_once`] (`get_once.rs`): one GET on a fresh connection, read to the close.
//! - [`TestOrigin`] (`origin.rs`): a scriptable origin web server for caching nodes.
//! - [`Response`] (`response.rs`): a response as a test client saw it, its head
//!   parse, and [`header`] lookup by name.
//! - [`Spawned`], [`output_within`] (`child.rs`): a child process (the `larder` binary)
//!   whose output and exit arrive on channels, signalled by name and killed if a test
//!   fails or it outlives its limit.
//! - [`h2_client_config`] (`tls_client.rs`): a TLS client trusting one CA, offering `h2`.

#![forbid(unsafe_code)]

mod child;
mod get_once;
mod lines;
mod origin;
mod response;
mod temp_dir;
mod tls_client;

pub use child::{output_within, Spawned};
pub use get_once::{get_once, get_once_bytes};
pub use lines::lines;
pub use origin::{frame_body, Route, TestOrigin};
pub use response::{header, Response};
pub use temp_dir::TempDir;
pub use tls_client::h2_client_config;
