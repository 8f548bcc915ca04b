//! Reloads while clients keep requests going: no request fails, and every client's
//! keep-alive connection stays up through them.

use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::support::{config, Backend, Client, RunningRouter, LIMIT};

const CLIENTS: usize = 4;
const REQUESTS: usize = 100;
const RELOADS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_under_load_fail_no_request() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let c = config(&[&a, &b], "lard");
    let router = RunningRouter::start(c.clone()).await;
    let (done_tx, mut done) = watch::channel(0usize);
    let mut clients = JoinSet::new();
    for i in 0..CLIENTS {
        let (addr, done_tx) = (router.addr, done_tx.clone());
        clients.spawn(async move {
            let mut client = Client::connect(addr).await;
            let mut statuses = Vec::new();
            for r in 0..REQUESTS {
                statuses.push(client.get(&format!("/c{i}/r{}", r % 10)).await.status);
                done_tx.send_modify(|n| *n += 1);
            }
            statuses
        });
    }
    // Reload whenever another share of the requests has been answered, swapping the
    // nodes' weights each time, so reloads land in the middle of the traffic.
    for k in 1..=RELOADS {
        let due = k * CLIENTS * REQUESTS / (RELOADS + 1);
        tokio::time::timeout(LIMIT, done.wait_for(|n| *n >= due)).await.unwrap().unwrap();
        let mut next = c.clone();
        next.nodes[k % 2].weight = 2;
        router.handle.reload(next).unwrap();
    }
    while let Some(statuses) = tokio::time::timeout(LIMIT, clients.join_next()).await.unwrap() {
        let statuses = statuses.unwrap();
        assert_eq!(statuses.len(), REQUESTS);
        assert!(statuses.iter().all(|&s| s == 200), "{statuses:?}");
    }
    router.stop().await;
}
