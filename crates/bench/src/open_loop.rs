//! An open-loop connection (wrk2's model): requests are due on a fixed schedule whatever the
//! server does; each is sent when due or, if the previous response is late, as soon as it
//! arrives, and its latency counts from when it was due. Coordinated omission is avoided
//! because a stalled server delays every request due meanwhile, and each of them shows it.

use std::time::Duration;

use tokio::time::sleep_until;

use crate::client::Client;

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
            sleep_until(due).await;
            if !run.admit(due) {
                return;
            }
            client.request(step.target, due).await;
        }
    }
}
