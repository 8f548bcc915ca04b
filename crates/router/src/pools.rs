//! What one router reuses across connections: spare read buffers ([`BufPool`]) and idle
//! splice pipes ([`PipePool`]). Built with the router and sized from its config on start
//! and on every reload; each connection holds the pools by `Arc` (cloned once per
//! connection, not per request), so two routers in one process keep their own.

use std::sync::Arc;

use crate::buf_pool::BufPool;
use crate::config::RouterConfig;
use crate::pipe_pool::PipePool;

#[derive(Clone, Default)]
pub(crate) struct Pools {
    pub bufs: Arc<BufPool>,
    pub pipes: Arc<PipePool>,
}

impl Pools {
    pub(crate) fn new(config: &RouterConfig) -> Pools {
        let pools = Pools::default();
        pools.configure(config);
        pools
    }

    /// Size both pools as `config` says: the one place their limits are read from it.
    pub(crate) fn configure(&self, config: &RouterConfig) {
        let limits = &config.limits;
        self.bufs.keep_at_most(limits.spare_buffers);
        self.pipes.configure(limits.spare_buffers, config.tuning.splice_pipe_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::IoBuf;

    /// Two routers' pools, as from two configs: buffers released into each stay within
    /// that router's `spare_buffers`, and each counts only its own held bytes.
    #[test]
    fn two_routers_keep_separate_limits_and_counts() {
        let pools = |spare: usize| {
            let mut config = RouterConfig::default();
            config.limits.spare_buffers = spare;
            Pools::new(&config)
        };
        let (one, three) = (pools(1), pools(3));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for p in [&one, &three] {
            let mut bufs: Vec<IoBuf> = (0..4).map(|_| IoBuf::pooled(16, p.bufs.clone())).collect();
            for b in &mut bufs {
                rt.block_on(b.fill(&mut &b"bytes"[..])).unwrap();
            }
            assert_eq!(p.bufs.held_bytes(), 4 * 16);
        }
        assert_eq!((one.bufs.spares(), three.bufs.spares()), (1, 3));
        assert_eq!((one.bufs.held_bytes(), three.bufs.held_bytes()), (0, 0));
        let mut reload = RouterConfig::default();
        reload.limits.spare_buffers = 2;
        three.configure(&reload);
        assert_eq!((one.bufs.spares(), three.bufs.spares()), (1, 2));
    }
}
