//! The router's structured log: one JSON object per line, `{"level":…,"msg":…,<fields>}`,
//! every field value a string. Tools (and `larder up`) read these lines, so the format is
//! a contract and lives here.

use std::fmt::Display;

/// One event line (without the newline).
pub fn line(level: &str, msg: &str, fields: &[(&str, &dyn Display)]) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("level".into(), level.into());
    obj.insert("msg".into(), msg.into());
    for (k, v) in fields {
        obj.insert((*k).into(), v.to_string().into());
    }
    serde_json::Value::Object(obj).to_string()
}

/// The message and fields of an event line; `None` for anything else.
pub fn parse(line: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str(line).ok()? {
        serde_json::Value::Object(obj) if obj.get("msg").is_some_and(|m| m.is_string()) => {
            Some(obj)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_strings() {
        let l = line("info", "node up", &[("node", &"n1"), ("after", &3)]);
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!((v["level"].as_str(), v["msg"].as_str()), (Some("info"), Some("node up")));
        assert_eq!((v["node"].as_str(), v["after"].as_str()), (Some("n1"), Some("3")));
        assert_eq!(parse(&l).unwrap()["msg"], "node up");
        assert_eq!(parse("[1]"), None);
        assert_eq!(parse("{\"level\":\"info\"}"), None);
    }
}
