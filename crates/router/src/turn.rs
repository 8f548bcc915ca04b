//! Writes that wait for the reads of the same turn of the event loop.
//!
//! A proxy that writes each request to its node the moment it has read it from the
//! client wakes the node once per request. Where the proxy, the node and the clients
//! share cores, the woken node preempts the proxy, answers one request and sleeps again,
//! and every process on the path pays a context switch per request: measured in front of
//! nginx on 2 cores, nginx slept 0.36–0.46 times per request behind larder against 0.06
//! behind HAProxy, whose event loop reads every ready socket before it writes any.
//!
//! The same order in tokio: a task that yields is polled again only after the runtime
//! has run the other ready tasks and polled its I/O driver, so one yield before a write
//! puts the write after this turn's reads, and the writes of one turn go out together.
//! The node then wakes once for a batch of requests, the client for a batch of
//! responses. When nothing else is ready the yield costs one poll of the I/O driver.

/// Waits, when `batching` is on, until the runtime has run this turn's other ready tasks,
/// so that the caller's write follows their reads.
pub(crate) async fn after_this_turns_reads(batching: bool) {
    if batching {
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::after_this_turns_reads;

    /// Two connections whose bytes are ready in the same turn: each reads, then writes.
    fn order(batching: bool) -> String {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let local = tokio::task::LocalSet::new();
        let log = Rc::new(RefCell::new(String::new()));
        local.block_on(&rt, async {
            let tasks: Vec<_> = ["a", "b"]
                .into_iter()
                .map(|name| {
                    let log = log.clone();
                    tokio::task::spawn_local(async move {
                        log.borrow_mut().push_str(&format!("read {name} "));
                        after_this_turns_reads(batching).await;
                        log.borrow_mut().push_str(&format!("write {name} "));
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        });
        let order = log.borrow().trim_end().to_string();
        order
    }

    #[test]
    fn batching_writes_after_every_read_of_the_turn() {
        let order = order(true);
        let (first_write, last_read) = (order.find("write"), order.rfind("read"));
        assert!(last_read < first_write, "{order}");
    }

    #[test]
    fn without_batching_each_task_writes_as_soon_as_it_has_read() {
        assert_eq!(order(false), "read a write a read b write b");
    }
}
