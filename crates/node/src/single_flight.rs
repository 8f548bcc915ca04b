//! One computation per key at a time. When many requests miss on the same thing at once
//! (a path whose translation just expired, a view nobody has computed yet), the first one
//! does the work and the others wait for its result. Without this, 10,000 clients asking
//! for one file turn every expiry of its translation into thousands of helper jobs.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use tokio::sync::oneshot;

/// Computations in progress, by key, with the requests waiting for each (loop-local).
#[derive(Debug)]
pub struct SingleFlight<V> {
    waiting: RefCell<HashMap<String, Vec<oneshot::Sender<V>>>>,
}

impl<V> Default for SingleFlight<V> {
    fn default() -> Self {
        SingleFlight { waiting: RefCell::new(HashMap::new()) }
    }
}

impl<V: Clone> SingleFlight<V> {
    /// Whether `key` is being computed right now.
    pub fn in_flight(&self, key: &str) -> bool {
        self.waiting.borrow().contains_key(key)
    }

    /// Compute `key` with `work`, or wait for the computation already under way. `None`
    /// when the computation being waited for was abandoned (its request was dropped).
    pub async fn run(&self, key: &str, work: impl Future<Output = V>) -> Option<V> {
        let wait = {
            let mut waiting = self.waiting.borrow_mut();
            match waiting.get_mut(key) {
                Some(list) => {
                    let (tx, rx) = oneshot::channel();
                    list.push(tx);
                    Some(rx)
                }
                None => {
                    waiting.insert(key.to_string(), Vec::new());
                    None
                }
            }
        };
        if let Some(rx) = wait {
            return rx.await.ok();
        }
        let leader = Leader { flight: self, key, finished: false };
        let value = work.await;
        for tx in leader.finish() {
            let _ = tx.send(value.clone());
        }
        Some(value)
    }
}

/// Removes the key even if the leading request is dropped mid-way, so waiters are told
/// (their channel closes) instead of waiting forever.
struct Leader<'a, V> {
    flight: &'a SingleFlight<V>,
    key: &'a str,
    finished: bool,
}

impl<V> Leader<'_, V> {
    fn finish(mut self) -> Vec<oneshot::Sender<V>> {
        self.finished = true;
        self.flight.waiting.borrow_mut().remove(self.key).unwrap_or_default()
    }
}

impl<V> Drop for Leader<'_, V> {
    fn drop(&mut self) {
        if !self.finished {
            self.flight.waiting.borrow_mut().remove(self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn one_computation_many_waiters() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let flight = SingleFlight::<u32>::default();
        let runs = Cell::new(0);
        let (release_tx, release_rx) = oneshot::channel::<()>();
        let results = rt.block_on(async {
            let leader = flight.run("k", async {
                runs.set(runs.get() + 1);
                let _ = release_rx.await;
                7
            });
            let follower = async {
                // Joined after the leader has registered (join polls in order).
                assert!(flight.in_flight("k"));
                let r = flight.run("k", async {
                    runs.set(runs.get() + 1);
                    0
                });
                let _ = release_tx.send(());
                r.await
            };
            tokio::join!(leader, follower)
        });
        assert_eq!(results, (Some(7), Some(7)));
        assert_eq!(runs.get(), 1);
        assert!(!flight.in_flight("k"));
    }

    #[test]
    fn abandoned_leader_releases_waiters() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let flight = SingleFlight::<u32>::default();
        rt.block_on(async {
            let mut leader = Box::pin(flight.run("k", std::future::pending::<u32>()));
            assert!(poll_once(leader.as_mut()).await.is_none());
            let mut follower = Box::pin(flight.run("k", async { 1 }));
            assert!(poll_once(follower.as_mut()).await.is_none(), "waits for the leader");
            drop(leader);
            assert_eq!(follower.await, None, "told, not left waiting");
            assert!(!flight.in_flight("k"));
        });
    }

    /// Poll a future once; `None` if it is still pending.
    async fn poll_once<F: Future + Unpin>(mut f: F) -> Option<F::Output> {
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}
