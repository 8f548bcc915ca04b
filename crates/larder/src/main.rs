//! `larder`: the one binary. Each subcommand lives in its own file under `cmd/`.

// `unsafe` only in `memory.rs` (the allocator's collect calls); everywhere else it is an error.
#![deny(unsafe_code)]

use clap::{Parser, Subcommand};

mod cmd;
mod console;
mod memory;
mod progress;

/// mimalloc rather than glibc's malloc: the router allocates and frees many small buffers per
/// request, and glibc's malloc/free were 15% of its CPU time serving HTTP/2.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// larder: a locality-aware cluster web server.
///
/// A front-end routes every HTTP request to the back-end node whose memory most likely
/// holds what it needs (LARD, extended LARD, HACC), while keeping every node's load in
/// bounds. `larder up` starts a whole local cluster; `larder sim` studies the policies on a
/// trace before any socket is opened.
#[derive(Parser, Debug)]
#[command(name = "larder", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
/// Each variant's help text is its `Args` type's doc comment (in `cmd/`), so it is written once.
enum Command {
    Trace(cmd::trace::Args),
    Sim(Box<cmd::sim::Args>),
    Node(Box<cmd::node::Args>),
    Bench(Box<cmd::bench::Args>),
    Route(Box<cmd::route::Args>),
    Peer(Box<cmd::peer::Args>),
    Up(Box<cmd::up::Args>),
    Purge(cmd::purge::Args),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Nodes give the memory of bursts of clients back (`memory`); one-shot commands exit,
    // and `larder route` collects on its own (a thread more would also cost a router of
    // one thread glibc's single-thread fast path on every socket call).
    if matches!(cli.command, Command::Node(_) | Command::Peer(_)) {
        if let Err(e) = memory::purge_in_background() {
            eprintln!("larder: warning: cannot start the memory purge thread ({e})");
        }
    }
    let result = match cli.command {
        Command::Trace(args) => cmd::trace::run(args),
        Command::Sim(args) => cmd::sim::run(*args),
        Command::Node(args) => cmd::node::run(*args),
        Command::Bench(args) => cmd::bench::run(*args),
        Command::Route(args) => cmd::route::run(*args),
        Command::Peer(args) => cmd::peer::run(*args),
        Command::Up(args) => cmd::up::run(*args),
        Command::Purge(args) => cmd::purge::run(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("larder: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
