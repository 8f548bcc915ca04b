//! The parts of the config read on every request, compiled once per config (the URL
//! mapper, the head limits, the health rules, the rendered router header, the TLS
//! configurations read from their files) and swapped whole on reload, so a request takes
//! one `Arc` and sees one config throughout.

use std::sync::Arc;

use policy::TargetMapper;

use crate::config::RouterConfig;
use crate::error::RouterError;
use crate::health;

pub(crate) struct Settings {
    pub config: RouterConfig,
    pub mapper: TargetMapper,
    pub head_limits: http1::Limits,
    pub health: health::Rules,
    /// `X-Larder-Router: <name>\r\n`, rendered once per config, when that header is on.
    pub router_field: Option<Box<[u8]>>,
    /// The TLS server configuration (certificates read from their files), when `[tls]`
    /// has certificates: each TLS handshake takes the one current then.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The TLS client configuration for `https://` nodes (their CA read from its file),
    /// when `[node_tls]` names one: each new connection to such a node takes it.
    pub node_tls: Option<Arc<rustls::ClientConfig>>,
}

impl Settings {
    pub(crate) fn new(config: RouterConfig) -> Result<Settings, RouterError> {
        let mapper = TargetMapper::new(config.mapper_config()?);
        let head_limits = http1::Limits {
            max_header_bytes: config.limits.max_header_bytes,
            max_headers: config.limits.max_headers,
            max_uri_len: config.limits.max_uri_bytes,
        };
        let health = health::Rules::new(&config.health);
        let router_field = config
            .router_header
            .then(|| format!("X-Larder-Router: {}\r\n", config.router_name()).into_bytes().into());
        let tls = if config.tls.cert.is_empty() {
            None
        } else {
            Some(crate::tls::server_config(&config.tls, config.http2.enabled)?)
        };
        let node_tls = match config.node_tls.ca.as_str() {
            "" => None,
            ca => Some(crate::node_tls::client_config(ca)?),
        };
        Ok(Settings { config, mapper, head_limits, health, router_field, tls, node_tls })
    }
}
