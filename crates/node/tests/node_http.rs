//! Static files over HTTP/1.1 and 1.0: headers, conditional requests, ranges, keep-alive,
//! pipelining, large bodies and direct I/O.

mod common;

use common::*;

#[test]
fn get_and_head_carry_the_representation_headers() {
    let node = TestNode::start(|_| {});
    let mut c = node.client();
    let r = c.get("/small.txt");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, SMALL);
    assert_eq!(r.header("content-length"), Some(SMALL.len().to_string().as_str()));
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    assert!(r.header("etag").is_some_and(|e| e.starts_with('"') && e.ends_with('"')));
    let lm = r.header("last-modified").unwrap();
    assert!(http1::parse_http_date(lm).is_ok(), "{lm}");
    assert!(http1::parse_http_date(r.header("date").unwrap()).is_ok());

    c.send(b"HEAD /small.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    let h = c.response(true);
    assert_eq!(h.status, 200);
    assert!(h.body.is_empty());
    assert_eq!(h.header("content-length"), r.header("content-length"));
    assert_eq!(h.header("etag"), r.header("etag"));
    // The connection is still in step after a HEAD: the next answer parses.
    assert_eq!(c.get("/data6k.bin").body, pattern(6 * 1024, 2));
    assert_eq!(c.get("/empty.txt").body, b"");
}

#[test]
fn content_type_by_extension_and_index_files() {
    let node = TestNode::start(|_| {});
    let mut c = node.client();
    for (path, ctype) in [
        ("/", "text/html; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/pic.png", "image/png"),
        ("/noext", "application/octet-stream"),
        ("/sub/", "text/html; charset=utf-8"),
    ] {
        let r = c.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some(ctype), "{path}");
    }
    assert_eq!(c.get("/sub/").body, b"<p>sub</p>\n");
    let r = c.get("/sub");
    assert_eq!(r.status, 301);
    assert_eq!(r.header("location"), Some("/sub/"));
    assert_eq!(c.get("/emptydir/").status, 404);
    assert_eq!(c.get("/small.txt/").status, 404);
    assert_eq!(c.get("/link-in").body, SMALL, "symlinks inside the root are fine");
}

#[test]
fn conditional_requests_give_304() {
    let node = TestNode::start(|_| {});
    let mut c = node.client();
    let r = c.get("/small.txt");
    let etag = r.header("etag").unwrap().to_string();
    let lm = r.header("last-modified").unwrap().to_string();
    let mut ask = |extra: String| {
        c.send(format!("GET /small.txt HTTP/1.1\r\nHost: t\r\n{extra}\r\n").as_bytes());
        c.response(false)
    };
    let r = ask(format!("If-None-Match: \"nope\", {etag}\r\n"));
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    assert_eq!(ask(format!("If-None-Match: W/{etag}\r\n")).status, 304);
    assert_eq!(ask(format!("If-Modified-Since: {lm}\r\n")).status, 304);
    assert_eq!(ask("If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n".into()).status, 200);
    let inm_wins = format!("If-None-Match: \"nope\"\r\nIf-Modified-Since: {lm}\r\n");
    assert_eq!(ask(inm_wins).status, 200);
    assert_eq!(ask("If-Modified-Since: not a date\r\n".into()).status, 200);
}

#[test]
fn single_byte_ranges() {
    let node = TestNode::start(|_| {});
    let data = pattern(6 * 1024, 2);
    let mut c = node.client();
    let etag = c.get("/data6k.bin").header("etag").unwrap().to_string();
    let mut ask = |extra: &str| {
        c.send(format!("GET /data6k.bin HTTP/1.1\r\nHost: t\r\n{extra}\r\n").as_bytes());
        c.response(false)
    };
    let r = ask("Range: bytes=10-19\r\n");
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &data[10..20]);
    assert_eq!(r.header("content-range"), Some("bytes 10-19/6144"));
    let r = ask("Range: bytes=-100\r\n");
    assert_eq!((r.status, r.body.as_slice()), (206, &data[6044..]));
    let r = ask("Range: bytes=6000-\r\n");
    assert_eq!((r.status, r.body.as_slice()), (206, &data[6000..]));
    let r = ask("Range: bytes=6144-\r\n");
    assert_eq!(r.status, 416);
    assert_eq!(r.header("content-range"), Some("bytes */6144"));
    assert_eq!(ask("Range: bytes=0-1,5-6\r\n").status, 200, "multiple ranges: whole body");
    assert_eq!(ask("Range: bytes=5-1\r\n").status, 200, "invalid range ignored");
    assert_eq!(ask("Range: bytes=0-0\r\nIf-Range: \"other\"\r\n").status, 200);
    assert_eq!(ask(&format!("Range: bytes=0-0\r\nIf-Range: {etag}\r\n")).status, 206);
}

#[test]
fn http10_clients() {
    let node = TestNode::start(|_| {});
    let mut c = node.client();
    c.send(b"GET /small.txt HTTP/1.0\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, SMALL);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed(), "HTTP/1.0 without keep-alive closes");

    let mut c = node.client();
    c.send(b"GET /small.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.header("connection"), Some("keep-alive"));
    c.send(b"HEAD /style.css HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(c.response(true).status, 200);
}

#[test]
fn keep_alive_and_pipelining_in_order() {
    let node = TestNode::start(|_| {});
    let mut c = node.client();
    for _ in 0..3 {
        assert_eq!(c.get("/small.txt").status, 200);
    }
    let paths = ["/small.txt", "/nothing-here", "/style.css", "/big.bin", "/data6k.bin", "/sub/"];
    let mut batch = String::new();
    for p in paths {
        batch.push_str(&format!("GET {p} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    batch.push_str("HEAD /small.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    c.send(batch.as_bytes());
    let expect: [(u16, Option<Vec<u8>>); 6] = [
        (200, Some(SMALL.to_vec())),
        (404, None),
        (200, Some(b"body{}\n".to_vec())),
        (200, Some(pattern(600 * 1024, 3))),
        (200, Some(pattern(6 * 1024, 2))),
        (200, Some(b"<p>sub</p>\n".to_vec())),
    ];
    for (i, (status, body)) in expect.iter().enumerate() {
        let r = c.response(false);
        assert_eq!(r.status, *status, "answer {i}");
        if let Some(b) = body {
            assert_eq!(&r.body, b, "answer {i}");
        }
    }
    let last = c.response(true);
    assert_eq!(last.header("connection"), Some("close"));
    assert!(c.closed());
}

#[test]
fn large_files_stream_with_ranges() {
    let node = TestNode::start(|_| {});
    let data = pattern(600 * 1024, 3);
    let mut c = node.client();
    for _ in 0..2 {
        assert_eq!(c.get("/big.bin").body, data);
    }
    c.send(b"GET /big.bin HTTP/1.1\r\nHost: t\r\nRange: bytes=300000-500000\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &data[300_000..=500_000]);
}

#[test]
fn direct_io_serves_the_same_bytes() {
    let node = TestNode::start(|cfg| cfg.direct_io = true);
    let mut c = node.client();
    for _ in 0..2 {
        assert_eq!(c.get("/data6k.bin").body, pattern(6 * 1024, 2));
        assert_eq!(c.get("/big.bin").body, pattern(600 * 1024, 3));
        assert_eq!(c.get("/small.txt").body, SMALL);
    }
    c.send(b"GET /big.bin HTTP/1.1\r\nHost: t\r\nRange: bytes=4095-70000\r\n\r\n");
    assert_eq!(c.response(false).body, &pattern(600 * 1024, 3)[4095..=70000]);
}

#[test]
fn changed_files_are_not_served_stale() {
    let node = TestNode::start(|cfg| cfg.stat_ttl = std::time::Duration::ZERO);
    let mut c = node.client();
    assert_eq!(c.get("/small.txt").body, SMALL);
    std::fs::write(node.root.join("small.txt"), b"changed!").unwrap();
    assert_eq!(c.get("/small.txt").body, b"changed!");
}
