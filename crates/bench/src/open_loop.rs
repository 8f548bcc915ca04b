//! An open-loop connection (wrk2's model): requests are due on a fixed schedule whatever the
//! server does; each is sent when due or, if the previous response is late, as soon as it
//! arrives, and its latency counts from when it was due. Coordinated omission is avoided
//! because a stalled server delays every request due meanwhile, and each of them shows it.
//!
//! Timers fire on a millisecond wheel, so waiting for the due time itself would wake up to
//! a millisecond late and add that to every latency. The connection instead wakes one tick
//! early and sends then: a request is sent at most a tick before it is due (the rate is
//! unchanged), and its latency counts from whichever came first, sending or due time.

use std::time::Duration;

use tokio::time::{sleep_until, Instant};

use crate::client::Client;

/// The timer wheel's resolution: how early a connection wakes for its next request.
const TIMER_TICK: Duration = Duration::from_millis(1);

/// Send requests due every `connections / rate` seconds, this connection's schedule shifted
/// by `index / rate` so connections interleave evenly.
pub async fn run_connection(mut client: Client, index: u32, connections: u32, rate: f64) {
    let run = client.run.clone();
    let period = f64::from(connections) / rate;
    let offset = f64::from(index) / rate;
    let mut sent = 0u64;
    while let Some(script) = run.cursor.next_script(&run.plan) {
        for step in run.plan.script(script) {
            let Ok(at) = Duration::try_from_secs_f64(offset + sent as f64 * period) else {
                return;
            };
            let due = run.start + at;
            sent += 1;
            // A request past the end is never sent: wait for the end itself, so the run
            // ends by its duration rather than by this connection giving up a tick early.
            let past_end = run.deadline().is_some_and(|end| due >= end);
            let wake = if past_end { due } else { due.checked_sub(TIMER_TICK).unwrap_or(due) };
            sleep_until(wake).await;
            if !run.admit(due) {
                return;
            }
            client.request(step.target, due, due.min(Instant::now())).await;
        }
    }
}
