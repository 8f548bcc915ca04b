//! The request larder's own small clients send (the load generator, the router's health
//! checks and load-report polls, the lab's readiness checks, tests): a bodyless GET.

/// The head of `GET path` to `host` (origin-form `path`, `host[:port]`): `User-Agent`
/// when the client names itself, `Connection: close` when it reads the response to the
/// close instead of keeping the connection for another request.
pub fn get_request(host: &str, path: &str, user_agent: Option<&str>, close: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + host.len() + path.len());
    for part in ["GET ", path, " HTTP/1.1\r\nHost: ", host, "\r\n"] {
        out.extend_from_slice(part.as_bytes());
    }
    if let Some(agent) = user_agent {
        for part in ["User-Agent: ", agent, "\r\n"] {
            out.extend_from_slice(part.as_bytes());
        }
    }
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::get_request;

    #[test]
    fn a_get_names_the_host_then_the_client_then_the_close() {
        let text = |r: Vec<u8>| String::from_utf8(r).unwrap();
        assert_eq!(
            text(get_request("h:1", "/a?b", Some("larder-bench"), true)),
            "GET /a?b HTTP/1.1\r\nHost: h:1\r\nUser-Agent: larder-bench\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(text(get_request("h", "/", None, false)), "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    }
}
