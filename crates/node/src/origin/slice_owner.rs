//! Which node of the cluster owns a slice of a large object: rendezvous (highest random
//! weight) hashing of the object's key and the slice's index over the cluster's nodes. Every
//! node with the same node list picks the same owner, without talking; the slices of one
//! object spread over all nodes, and a node joining or leaving moves only the slices it
//! wins or held. The hash is fixed (FNV-1a, then a 64-bit finaliser), never the standard
//! library's, whose output may change between builds.

use std::net::SocketAddr;

/// The node among `nodes` that owns slice `index` of the object stored under `key`;
/// `None` when there are no nodes.
pub fn owner(key: &str, index: u64, nodes: &[SocketAddr]) -> Option<SocketAddr> {
    let object = fnv(fnv(FNV_OFFSET, key.as_bytes()), &index.to_le_bytes());
    nodes.iter().copied().max_by_key(|node| (mix(fnv(object, node.to_string().as_bytes())), *node))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The finaliser of SplitMix64: spreads FNV's weak low bits over the whole word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: u16) -> Vec<SocketAddr> {
        (0..n).map(|i| SocketAddr::from(([127, 0, 0, 1], 9000 + i))).collect()
    }

    #[test]
    fn every_order_of_the_nodes_picks_the_same_owner() {
        let mut list = nodes(4);
        let first: Vec<_> = (0..64).map(|i| owner("/video.mp4", i, &list)).collect();
        list.reverse();
        let again: Vec<_> = (0..64).map(|i| owner("/video.mp4", i, &list)).collect();
        assert_eq!(first, again);
        assert_eq!(owner("/x", 0, &[]), None);
    }

    #[test]
    fn slices_spread_over_every_node_and_a_leaving_node_moves_only_its_own() {
        let list = nodes(4);
        let owners: Vec<_> = (0..400).map(|i| owner("/big.bin", i, &list).unwrap()).collect();
        for n in &list {
            let held = owners.iter().filter(|o| *o == n).count();
            assert!((50..=150).contains(&held), "{n} owns {held} of 400");
        }
        let three = &list[..3];
        for (i, before) in owners.iter().enumerate() {
            let after = owner("/big.bin", i as u64, three).unwrap();
            if *before != list[3] {
                assert_eq!(after, *before, "slice {i} moved though its owner stayed");
            }
        }
    }
}
