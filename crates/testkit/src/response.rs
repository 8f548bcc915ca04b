//! An HTTP response as a test client saw it, and the parse of its head that every test
//! client shares (framing the body is the client's business: each knows what it expects).

/// Status, headers (in order, values decoded lossily) and body.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The back-end that served it, from `X-Larder-Node` ("" without one).
    pub fn node(&self) -> &str {
        self.header("x-larder-node").unwrap_or("")
    }

    /// The response head at the start of `buf`, without body, and the head's length in
    /// bytes; `Ok(None)` while the head is incomplete. Parsed by `http1`, as larder's own
    /// clients parse theirs, so a test sees a response the way the router would.
    pub fn parse_head(buf: &[u8]) -> Result<Option<(Response, usize)>, http1::ResponseHeadError> {
        let limits = http1::ResponseLimits { max_head_bytes: usize::MAX, max_fields: 64 };
        let mut slots = http1::HeaderSlots::new();
        let Some(head) = http1::parse_response_head(buf, &mut slots, &limits)? else {
            return Ok(None);
        };
        let headers = head
            .fields()
            .map(|(name, value)| (name.to_string(), String::from_utf8_lossy(value).into_owned()))
            .collect();
        Ok(Some((Response { status: head.status, headers, body: Vec::new() }, head.len)))
    }
}

/// The first of `headers` called `name` (any case): for requests a fake back-end records
/// as much as for responses.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::Response;

    #[test]
    fn a_head_parses_once_complete() {
        let raw = b"HTTP/1.1 200 OK\r\nX-Larder-Node: n2\r\nContent-Length: 2\r\n\r\nhi";
        assert!(Response::parse_head(&raw[..20]).unwrap().is_none());
        let (resp, len) = Response::parse_head(raw).unwrap().unwrap();
        assert_eq!((resp.status, len), (200, raw.len() - 2));
        assert_eq!(resp.header("content-length"), Some("2"));
        assert_eq!(resp.node(), "n2");
        assert!(Response::parse_head(b"NOT HTTP\r\n\r\n").is_err());
    }
}
