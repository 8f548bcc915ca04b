//! One module per subcommand; each has `Args` (clap) and `run(args) -> anyhow::Result<()>`.

pub mod bench;
pub mod experiment;
pub mod hosts;
pub mod node;
pub mod peer;
pub mod purge;
pub mod route;
pub mod sim;
pub mod trace;
pub mod up;
