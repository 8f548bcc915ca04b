//! The other nodes a node forwards later requests on adopted connections to
//! (`forward.rs`): a client with its idle keep-alive connections for each, made on first
//! use, the forwards under way to each within [`ForwardConfig`]'s bound, and the counts
//! the load report gives.

use crate::forward_config::ForwardConfig;
use crate::origin::OriginClient;
use crate::origin::OriginConfig;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;

/// The other nodes forwarded to, each with its pool, and what forwarding did.
pub struct Forwarder {
    config: ForwardConfig,
    owners: RefCell<HashMap<SocketAddr, Rc<Owner>>>,
    /// Requests answered with another node's response.
    pub forwarded: Cell<u64>,
    /// Forwards that failed (unreachable, a server error, too slow, cut short): served here.
    pub failures: Cell<u64>,
}

/// One node forwarded to: its client (and idle connections), and the forwards under way.
struct Owner {
    client: OriginClient,
    busy: Cell<usize>,
}

/// A forward under way to one owner, counted until dropped (after its body is sent).
pub struct Busy(Rc<Owner>);

impl Busy {
    /// The client of the node this forward goes to.
    pub fn client(&self) -> &OriginClient {
        &self.0.client
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.set(self.0.busy.get() - 1);
    }
}

impl Forwarder {
    pub fn new(config: ForwardConfig) -> Forwarder {
        Forwarder {
            config,
            owners: RefCell::default(),
            forwarded: Cell::new(0),
            failures: Cell::new(0),
        }
    }

    /// A slot for one forward to `addr`, none when it has as many as allowed.
    pub(crate) fn take(&self, addr: SocketAddr) -> Option<Busy> {
        let owner = {
            let mut owners = self.owners.borrow_mut();
            match owners.get(&addr) {
                Some(o) => Rc::clone(o),
                None => {
                    let mut cfg = OriginConfig::new(Vec::new());
                    cfg.timeout = self.config.timeout;
                    cfg.max_idle_per_origin = self.config.max_connections_per_node;
                    let owner =
                        Owner { client: OriginClient::for_node(addr, &cfg)?, busy: 0.into() };
                    Rc::clone(owners.entry(addr).or_insert(Rc::new(owner)))
                }
            }
        };
        if owner.busy.get() >= self.config.max_connections_per_node {
            return None;
        }
        owner.busy.set(owner.busy.get() + 1);
        Some(Busy(owner))
    }

    pub(crate) fn max_buffered_bytes(&self) -> u64 {
        self.config.max_buffered_bytes
    }

    pub(crate) fn count(cell: &Cell<u64>) {
        cell.set(cell.get().wrapping_add(1));
    }
}
