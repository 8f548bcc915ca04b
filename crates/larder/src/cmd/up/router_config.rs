//! The router's configuration: the user's `--config` (or nothing) with the nodes `larder
//! up` started put in as `[[nodes]]`, so they get short names (n1, n2, …) in
//! X-Larder-Node and /stats and the router polls their load reports (hit ratios).

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;
use toml::{Table, Value};

/// The policy when neither `--policy` nor `--config` names one.
pub const DEFAULT_POLICY: &str = "lard-r";
/// The router's own default, which a config without `[policy] kind` gets.
const ROUTER_DEFAULT_POLICY: &str = "rr";

pub struct RouterConfig {
    table: Table,
}

impl RouterConfig {
    /// The user's config file, or an empty one with `DEFAULT_POLICY`.
    pub fn new(user: Option<&Path>) -> anyhow::Result<RouterConfig> {
        let Some(path) = user else {
            let mut c = RouterConfig { table: Table::new() };
            c.set_policy(DEFAULT_POLICY);
            return Ok(c);
        };
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let table = text.parse::<Table>().with_context(|| format!("parsing {}", path.display()))?;
        Ok(RouterConfig { table })
    }

    pub fn set_policy(&mut self, kind: &str) {
        self.set(Some("policy"), "kind", kind);
    }

    /// Sets `key` in the `[section]` table (created if missing), or at the top level
    /// without a section.
    pub fn set(&mut self, section: Option<&str>, key: &str, value: impl Into<Value>) {
        let table = match section {
            None => &mut self.table,
            Some(name) => {
                let entry = self.table.entry(name).or_insert_with(|| Table::new().into());
                if !entry.is_table() {
                    *entry = Table::new().into();
                }
                entry.as_table_mut().expect("made a table above")
            }
        };
        table.insert(key.into(), value.into());
    }

    pub fn policy(&self) -> &str {
        self.table
            .get("policy")
            .and_then(|p| p.get("kind"))
            .and_then(Value::as_str)
            .unwrap_or(ROUTER_DEFAULT_POLICY)
    }

    /// Replaces the config's nodes with these (name, address) pairs.
    pub fn set_nodes(&mut self, nodes: &[(String, SocketAddr)]) {
        let nodes = nodes.iter().map(|(name, addr)| {
            Value::from(Table::from_iter([
                ("name".to_string(), Value::from(name.as_str())),
                ("addr".to_string(), Value::from(addr.to_string())),
                ("load_report".to_string(), Value::from(true)),
            ]))
        });
        self.table.insert("nodes".into(), Value::Array(nodes.collect()));
    }

    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let text = toml::to_string(&self.table).context("writing the router config")?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
    }
}
