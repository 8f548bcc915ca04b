//! A closed-loop user (DBench's replayed user, the scalable-distribution paper's client):
//! it plays scripts from the plan one request at a time, waiting for each response and for
//! the think time before the next.

use std::time::Duration;

use tokio::time::{sleep_until, Instant};

use crate::client::Client;

/// Play scripts until the plan, the tickets or the time runs out.
///
/// Think time is start to start, as logs record it: the next request of a session is sent
/// `think` after the previous one was sent, or at once when its response came later.
pub async fn run_user(mut client: Client) {
    let run = client.run.clone();
    while let Some(script) = run.cursor.next_script(&run.plan) {
        let mut previous: Option<Instant> = None;
        for step in run.plan.script(script) {
            if let Some(sent) = previous.filter(|_| step.think > Duration::ZERO) {
                sleep_until(sent + step.think).await;
            }
            let now = Instant::now();
            if !run.admit(now) {
                return;
            }
            previous = Some(now);
            client.request(step.target, now, now).await;
        }
    }
}
