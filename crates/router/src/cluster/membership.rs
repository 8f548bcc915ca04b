//! The membership: which nodes are in, reconciled with where they come from — the config
//! as given (file and flags) and the nodes DNS discovery found ([`Sources`]); a reload and
//! a discovery change both apply their union the same way — and told to the policy.
//!
//! Node ids are dense and follow addresses: a node keeps its id across reloads, a new
//! address gets the next id, a removed node keeps its slot but leaves the membership. A
//! removed node that comes back under its name on a new address (discovery's SRV
//! targets) takes its old slot again.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use policy::{NodeId, NodeState};

use crate::cluster::node::NodeStatus;
use crate::cluster::placement::Placement;
use crate::config::{NodeConfig, RouterConfig};
use crate::error::RouterError;
use crate::health;
use crate::poison::Recover;
use crate::upstream::Upstream;

/// Where the membership comes from: the config as given and the nodes discovery found.
/// Held while a change applies, so reloads and discovery take turns.
pub(crate) struct Sources {
    pub given: RouterConfig,
    pub found: Vec<NodeConfig>,
}

/// The nodes a discovery change brought in and took out, by name.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Change {
    pub joined: Vec<String>,
    pub left: Vec<String>,
}

impl Sources {
    /// `given` with the found nodes after its own; a found address the config already
    /// lists stays the config's.
    pub(crate) fn merged(given: &RouterConfig, found: &[NodeConfig]) -> RouterConfig {
        let mut c = given.clone();
        for n in found {
            if !c.nodes.iter().any(|m| m.addr == n.addr) {
                c.nodes.push(n.clone());
            }
        }
        c
    }

    /// Who joins and who leaves when discovery finds `found` instead of what it found.
    pub(crate) fn change(&self, found: &[NodeConfig]) -> Change {
        let named = |list: &[NodeConfig], other: &[NodeConfig]| -> Vec<String> {
            list.iter().filter(|n| !other.contains(n)).map(|n| n.display_name()).collect()
        };
        Change { joined: named(found, &self.found), left: named(&self.found, found) }
    }
}

impl Placement {
    /// Make `config`'s nodes the membership (by address: weights, names, how they are
    /// spoken to; new slots and their `upstreams`), and take its policy parameters.
    pub(crate) fn reconcile(
        &mut self,
        config: &RouterConfig,
        upstreams: &RwLock<Vec<Arc<Upstream>>>,
    ) -> Result<(), RouterError> {
        let ids = self.take_slots(config, &mut upstreams.write().recover());
        self.set_spec(config.policy_spec(&ids)?)?;
        self.peer_fill = config.peer_fill;
        let n = self.nodes.len();
        self.view.resize(n);
        self.view.set_weights(config.load.weights());
        self.find_local(config);
        Ok(())
    }

    /// The slot of each of `config`'s nodes, in config order; slots of nodes it no longer
    /// lists leave the membership and drop their pooled connections.
    fn take_slots(
        &mut self,
        config: &RouterConfig,
        upstreams: &mut Vec<Arc<Upstream>>,
    ) -> Vec<NodeId> {
        let mut ids = Vec::with_capacity(config.nodes.len());
        for n in &config.nodes {
            let id = match self.nodes.iter().position(|s| s.addr == n.addr) {
                Some(i) => {
                    let s = &mut self.nodes[i];
                    s.configured = true;
                    s.weight = n.weight;
                    s.load_report = n.load_report;
                    s.name = n.display_name().into();
                    if !upstreams[i].is_for(&n.address()) {
                        // Same address, now spoken to otherwise (TLS on or off, another
                        // certificate name): connections afresh.
                        upstreams[i].clear();
                        upstreams[i] = Arc::new(Upstream::new(&n.address()));
                    }
                    NodeId(i as u32)
                }
                None => match self.returning(n) {
                    // The node is back under its name on a new address (an SRV target
                    // whose pod moved): its old slot, afresh.
                    Some(id) => {
                        self.nodes[id.index()] = NodeStatus::new(n);
                        self.view.report(id, 0.0, 0.0);
                        self.view.report_in_flight(id, 0);
                        self.view.report_miss_bytes(id, 0);
                        self.view.set_holdings(id, None);
                        self.warmup.forget(id);
                        upstreams[id.index()] = Arc::new(Upstream::new(&n.address()));
                        id
                    }
                    None => {
                        let id = NodeId(self.nodes.len() as u32);
                        self.nodes.push(NodeStatus::new(n));
                        upstreams.push(Arc::new(Upstream::new(&n.address())));
                        id
                    }
                },
            };
            ids.push(id);
        }
        for (i, s) in self.nodes.iter_mut().enumerate() {
            if !ids.contains(&NodeId(i as u32)) && s.configured {
                s.configured = false;
                upstreams[i].clear();
            }
        }
        ids
    }

    /// A removed node's slot that `n` may take: same name, nothing in flight. So a node
    /// that comes back on a new address keeps its id, and slots do not pile up as
    /// addresses change under stable names.
    fn returning(&self, n: &NodeConfig) -> Option<NodeId> {
        let name = n.display_name();
        (0..self.nodes.len()).map(|i| NodeId(i as u32)).find(|&id| {
            let s = &self.nodes[id.index()];
            !s.configured && *s.name == *name && self.view.in_flight(id) == 0
        })
    }

    /// Tell the policy the current membership at `now` (weights include slow start).
    pub(crate) fn push_membership(&mut self, rules: &health::Rules, now: Instant) {
        let warms_up = self.spec.warms_nodes_up();
        let states: Vec<NodeState> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.configured)
            .map(|(i, n)| NodeState {
                id: NodeId(i as u32),
                // Where the warm-up gives a node its share as its cache fills, a
                // timed slow start on top would only hold a warm node back.
                weight: if warms_up && n.reported_at.is_some() {
                    n.weight.saturating_mul(health::WEIGHT_SCALE)
                } else {
                    n.health.weight(n.weight, now, rules)
                },
                up: n.health.is_up(),
                name: NodeState::name_hash(&n.name),
            })
            .collect();
        let at = self.clock.at(now);
        self.policy.membership(&states, at);
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use crate::cluster::tests::config;
    use crate::cluster::{Change, Cluster};
    use crate::config::NodeConfig;

    #[test]
    fn discovered_nodes_merge_with_the_config_and_outlive_its_reload() {
        let c = Cluster::new(config(1)).unwrap();
        let found = |ports: &[u16]| -> Vec<NodeConfig> {
            let node = |p: u16| NodeConfig {
                name: format!("pod-{p}"),
                ..NodeConfig::new(SocketAddr::from(([127, 0, 0, 2], p)))
            };
            ports.iter().map(|&p| node(p)).collect()
        };
        let members = |c: &Cluster| -> Vec<String> {
            let p = c.placement();
            let mut names: Vec<String> =
                p.nodes.iter().filter(|n| n.configured).map(|n| n.name.to_string()).collect();
            names.sort();
            names
        };
        let change = c.set_discovered(found(&[1, 2])).unwrap().unwrap();
        assert_eq!(change, Change { joined: vec!["pod-1".into(), "pod-2".into()], left: vec![] });
        assert_eq!(c.set_discovered(found(&[1, 2])).unwrap(), None, "nothing changed");
        assert_eq!(members(&c), ["127.0.0.1:1000", "pod-1", "pod-2"]);
        c.reload(config(2)).unwrap();
        assert_eq!(members(&c), ["127.0.0.1:1000", "127.0.0.1:1001", "pod-1", "pod-2"]);
        let change = c.set_discovered(found(&[2, 3])).unwrap().unwrap();
        assert_eq!(change, Change { joined: vec!["pod-3".into()], left: vec!["pod-1".into()] });
        assert_eq!(members(&c), ["127.0.0.1:1000", "127.0.0.1:1001", "pod-2", "pod-3"]);
        assert_eq!(c.static_nodes(), 2);
        // A found address the config lists stays the config's node.
        let mut same = found(&[]);
        same.push(NodeConfig { name: "dup".into(), ..config(1).nodes[0].clone() });
        c.set_discovered(same).unwrap();
        assert_eq!(members(&c), ["127.0.0.1:1000", "127.0.0.1:1001"]);
    }

    #[test]
    fn a_node_back_under_its_name_on_a_new_address_takes_its_old_slot() {
        let c = Cluster::new(config(1)).unwrap();
        let pod = |port: u16| NodeConfig {
            name: "pod-0".into(),
            ..NodeConfig::new(SocketAddr::from(([127, 0, 0, 2], port)))
        };
        c.set_discovered(vec![pod(1)]).unwrap();
        // Moved in one round: the old slot is still in use while the new one is placed.
        c.set_discovered(vec![pod(2)]).unwrap();
        c.set_discovered(vec![]).unwrap();
        c.set_discovered(vec![pod(3)]).unwrap();
        let p = c.placement();
        assert_eq!(p.nodes.len(), 3, "slots: the config's node, pod-0 twice");
        let at: Vec<_> = p.nodes.iter().filter(|n| n.configured).map(|n| n.addr.port()).collect();
        assert_eq!(at, [1000, 3]);
        assert_eq!(c.upstreams()[1].addr, pod(3).addr);
    }

    #[test]
    fn reload_keeps_ids_by_address() {
        let c = Cluster::new(config(2)).unwrap();
        let mut next = config(3);
        next.nodes.remove(0);
        c.reload(next).unwrap();
        let p = c.placement();
        assert_eq!(p.nodes.len(), 3);
        assert!(!p.nodes[0].configured);
        assert!(p.nodes[1].configured && p.nodes[2].configured);
        assert_eq!(p.nodes[2].addr.port(), 1002);
    }
}
