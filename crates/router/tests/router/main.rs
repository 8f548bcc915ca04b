//! The router end to end: real listeners on 127.0.0.1:0, small back-ends written here
//! (recording, gated, killable, reporting load), a plain keep-alive test client.

mod admin;
mod bad_nodes;
mod caching_nodes;
mod corpus;
mod discovery;
mod dispatch;
mod dns_server;
mod early_response;
mod failover;
mod fake;
mod faults;
mod handoff;
mod http2;
mod in_process_nodes;
mod invalidation;
mod lenient;
mod node_tls;
mod one_placement;
mod peers;
mod placement;
mod purge;
mod slow_headers;
mod smuggling;
mod splice;
mod support;
mod tls;
mod under_load;
mod upgrades;
