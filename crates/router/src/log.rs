//! Structured logs: one JSON object per line on stderr, for events off the request path
//! (nodes going down and up, reloads, listener errors). Requests go to the access log.

use std::fmt::Display;

/// Write one event line: `{"level":…,"msg":…,<fields>}`. Public so the process around
/// the router (the CLI's signals and listeners) logs in the same shape.
pub fn event(level: &str, msg: &str, fields: &[(&str, &dyn Display)]) {
    let mut obj = serde_json::Map::new();
    obj.insert("level".into(), level.into());
    obj.insert("msg".into(), msg.into());
    for (k, v) in fields {
        obj.insert((*k).into(), v.to_string().into());
    }
    eprintln!("{}", serde_json::Value::Object(obj));
}
