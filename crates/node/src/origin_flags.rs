//! The caching settings of a node in front of an origin as flags (with the `clap`
//! feature): `larder node` takes them, and `larder up --origin` takes the same ones and
//! hands them to every node it starts ([`OriginFlags::to_args`]), so the two never
//! disagree on a name or a default.

use std::time::Duration;

use clap::ValueEnum;

use crate::origin::OriginConfig;

/// How a caching node stores and fetches (`#[command(flatten)]` them into a command).
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct OriginFlags {
    /// An origin response that sets a cookie (Set-Cookie) is never stored by default: only
    /// the client whose request fetched it gets it. store-without stores it with every
    /// Set-Cookie removed (for origins that set tracking cookies on static files): the
    /// fetching client still gets its cookie, every other client the object without one.
    #[arg(long, value_enum, value_name = "MODE", default_value = "never-store")]
    pub origin_set_cookie: crate::origin::SetCookie,
    /// The Host the origin is sent, and so what the cache keys name. origin (the default):
    /// the origin URL's own authority, one site, objects keyed by path, so a client cannot
    /// split the cache by sending other names for the site. client: the client's Host, and
    /// objects keyed by host and path, for an origin server hosting several sites (virtual
    /// hosts; set the router's mapping.host_in_key too, so each site is placed on its own).
    #[arg(long, value_enum, value_name = "MODE", default_value = "origin")]
    pub origin_host: crate::origin::OriginHost,
    /// Seconds that a URL whose origin response could not be shared (Set-Cookie, no-store,
    /// private, Vary: *) sends its requests straight to the origin instead of having them
    /// wait for one fetch they could not use (hit-for-miss); a cacheable response ends it
    /// at once. 0 turns it off.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub origin_uncacheable_secs: u64,
    /// Seconds an origin response without Cache-Control max-age/s-maxage or Expires stays
    /// fresh (for the statuses HTTP allows to be cached that way, such as 200 and 404).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub origin_default_ttl: u64,
    /// A response without Cache-Control max-age/s-maxage or Expires but with Last-Modified
    /// stays fresh for this percentage of the time since it was last modified (RFC 9111
    /// heuristic freshness), instead of --origin-default-ttl; 0 turns it off, and so does
    /// --origin-default-ttl 0 (only explicit freshness, as Varnish's default_ttl=0).
    #[arg(long, value_name = "PERCENT", default_value_t = 10)]
    pub origin_heuristic_percent: u32,
    /// Longest heuristic freshness in seconds (a file unchanged for years is still
    /// rechecked daily by default).
    #[arg(long, value_name = "SECS", default_value_t = 86_400)]
    pub origin_heuristic_max_secs: u64,
    /// Seconds past expiry a stale response may be served when the origin is unreachable,
    /// times out or answers 500/502/503/504 (a response's own stale-if-error wins;
    /// must-revalidate, proxy-revalidate, s-maxage and no-cache forbid it).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub origin_stale_if_error: u64,
    /// Obey the targeted fields of RFC 9213: Larder-Cache-Control, else CDN-Cache-Control,
    /// when the origin sends one that is a valid Structured Field Dictionary, decides
    /// storing and freshness instead of Cache-Control and Expires (which are still passed
    /// on to clients). false ignores both fields.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub origin_targeted_cache_control: bool,
    /// Grace: seconds past expiry a stale response is served at once (X-Larder-Cache:
    /// GRACE) while one background request refreshes it (a response's own
    /// stale-while-revalidate wins; no-cache, must-revalidate, proxy-revalidate and
    /// s-maxage forbid it). 0 revalidates before serving, as HTTP does by default.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub origin_grace: u64,
    /// Milliseconds allowed for an origin fetch up to the response head, and for each wait
    /// for body bytes after it; 504 Gateway Timeout when exceeded before the head.
    #[arg(long, default_value_t = 10_000)]
    pub origin_timeout_ms: u64,
    /// Milliseconds a fill from another node of the cluster (a peer a router names for a
    /// replica) may take to connect and answer, and each wait for body bytes after it;
    /// beyond it, or when the peer fails or refuses, the miss is filled from the origin.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub origin_peer_timeout_ms: u64,
    /// KiB per slice of an origin object larger than --max-cached-file-kb: such an object
    /// is stored as slices of this size, each fetched from the origin with a Range request
    /// and held by one node of the cluster (the --peer nodes share them), so a large object
    /// costs the origin at most one request per slice cluster-wide.
    #[arg(long, value_name = "KIB", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(4..=65_536))]
    pub slice_kb: u64,
    /// Largest origin object in MiB stored as slices; a larger one is relayed uncached.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub max_object_mb: u64,
    /// Idle keep-alive connections kept open per origin.
    #[arg(long, default_value_t = 32)]
    pub origin_max_idle: usize,
    /// Largest origin response head in KiB (502 Bad Gateway beyond).
    #[arg(long, default_value_t = 64)]
    pub origin_max_head_kb: usize,
    /// Most header fields in an origin response head (502 Bad Gateway beyond).
    #[arg(long, default_value_t = 128)]
    pub origin_max_head_fields: usize,
}

impl OriginFlags {
    /// Set these on the origin settings `o`.
    pub fn apply(&self, o: &mut OriginConfig) {
        o.defaults.ttl = Duration::from_secs(self.origin_default_ttl);
        o.defaults.stale_if_error = Duration::from_secs(self.origin_stale_if_error);
        o.defaults.targeted = self.origin_targeted_cache_control;
        o.defaults.heuristic_percent = self.origin_heuristic_percent;
        o.defaults.heuristic_max = Duration::from_secs(self.origin_heuristic_max_secs);
        o.defaults.stale_while_revalidate = Duration::from_secs(self.origin_grace);
        o.timeout = Duration::from_millis(self.origin_timeout_ms);
        o.peer_timeout = Duration::from_millis(self.origin_peer_timeout_ms);
        o.max_idle_per_origin = self.origin_max_idle;
        o.slice_bytes = self.slice_kb << 10;
        o.max_object_bytes = self.max_object_mb << 20;
        o.max_head_bytes = self.origin_max_head_kb << 10;
        o.max_head_fields = self.origin_max_head_fields;
        o.set_cookie = self.origin_set_cookie;
        o.host = self.origin_host;
        o.uncacheable_for = Duration::from_secs(self.origin_uncacheable_secs);
    }

    /// The flags that say these settings to `larder node`, every one of them.
    pub fn to_args(&self) -> Vec<String> {
        let name = |v: &dyn Fn() -> Option<clap::builder::PossibleValue>| {
            v().map_or_else(String::new, |p| p.get_name().to_string())
        };
        let pairs: [(&str, String); 16] = [
            ("--origin-set-cookie", name(&|| self.origin_set_cookie.to_possible_value())),
            ("--origin-host", name(&|| self.origin_host.to_possible_value())),
            ("--origin-uncacheable-secs", self.origin_uncacheable_secs.to_string()),
            ("--origin-default-ttl", self.origin_default_ttl.to_string()),
            ("--origin-heuristic-percent", self.origin_heuristic_percent.to_string()),
            ("--origin-heuristic-max-secs", self.origin_heuristic_max_secs.to_string()),
            ("--origin-stale-if-error", self.origin_stale_if_error.to_string()),
            ("--origin-targeted-cache-control", self.origin_targeted_cache_control.to_string()),
            ("--origin-grace", self.origin_grace.to_string()),
            ("--origin-timeout-ms", self.origin_timeout_ms.to_string()),
            ("--origin-peer-timeout-ms", self.origin_peer_timeout_ms.to_string()),
            ("--origin-max-idle", self.origin_max_idle.to_string()),
            ("--slice-kb", self.slice_kb.to_string()),
            ("--max-object-mb", self.max_object_mb.to_string()),
            ("--origin-max-head-kb", self.origin_max_head_kb.to_string()),
            ("--origin-max-head-fields", self.origin_max_head_fields.to_string()),
        ];
        pairs.into_iter().flat_map(|(flag, value)| [flag.to_string(), value]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        flags: OriginFlags,
    }

    #[test]
    fn the_flags_said_are_the_flags_read() {
        let defaults = Cmd::parse_from(["x"]).flags;
        assert_eq!(
            Cmd::parse_from(std::iter::once("x".into()).chain(defaults.to_args())).flags,
            defaults
        );
        let given = [
            "x",
            "--origin-host",
            "client",
            "--origin-set-cookie",
            "store-without",
            "--origin-default-ttl",
            "0",
            "--origin-grace",
            "30",
            "--origin-targeted-cache-control",
            "false",
            "--origin-max-head-kb",
            "8",
            "--slice-kb",
            "256",
        ];
        let set = Cmd::parse_from(given).flags;
        assert_ne!(set, defaults);
        let again = Cmd::parse_from(std::iter::once("x".into()).chain(set.to_args())).flags;
        assert_eq!(again, set);
    }
}
