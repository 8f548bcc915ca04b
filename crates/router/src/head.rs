//! Message heads as the router sees them: parsed strictly, rewritten for the other side.
//!
//! A request head is parsed in place with httparse when it is complete and within the
//! limits, else by `http1` (which owns the limits, Host rules and exact errors), and
//! checked by `http1`'s framing rules; then it is rewritten into the head sent upstream:
//! hop-by-hop fields (RFC 9110 §7.6.1, and every field `Connection` names) are dropped,
//! `X-Forwarded-For` and `Via` are extended, framing headers are re-emitted in canonical
//! form. `Host` must be a valid `host[:port]` and only `OPTIONS` may target `*`. An
//! absolute-form target (`GET http://h/x`) is forwarded in origin-form (`GET /x`) with
//! `Host: h`, whatever Host the client sent (RFC 9112 §3.2.2). A response head is
//! parsed in place by `http1::parse_response_head` (every larder client's parser) and
//! rewritten the same way for the client. Syntax the parser refuses — obs-fold, bare CR,
//! invalid names, space before the colon — and the framing ambiguities of
//! `http1::framing` all become a [`Rejection`], never a forwarded byte.

use std::ops::Range;

use http1::framing::{self, BodyFraming, FramingError};
use http1::response::push_decimal;
use http1::{has_token, HeaderSlots, ParseError, ResponseHead, ResponseHeadError, Status};

/// Why a request is answered by the router itself, never forwarded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("{0}")]
    Head(ParseError),
    #[error("bad framing: {0}")]
    Framing(FramingError),
    #[error("bad request target: {0}")]
    Target(policy::mapper::TargetError),
    #[error("bad request target: {0}")]
    Absolute(http1::AuthorityError),
    #[error("Host is not a valid host[:port]")]
    Host,
    #[error("bad request target: only OPTIONS may be sent to *")]
    Asterisk,
    #[error("request body larger than the limit")]
    BodyTooLarge,
    #[error("bad chunked body: {0}")]
    Chunked(http1::ChunkError),
    #[error("not implemented: {0}")]
    NotImplemented(&'static str),
    #[error("request head not received in time")]
    Timeout,
    #[error("this path is for the router's own requests to its nodes")]
    Internal,
}

impl Rejection {
    pub fn status(&self) -> Status {
        match self {
            Rejection::Head(e) => e.status(),
            Rejection::Framing(FramingError::UnsupportedCoding) => Status::NOT_IMPLEMENTED,
            Rejection::Framing(_)
            | Rejection::Target(_)
            | Rejection::Chunked(_)
            | Rejection::Absolute(_)
            | Rejection::Host
            | Rejection::Asterisk => Status::BAD_REQUEST,
            Rejection::BodyTooLarge => Status::CONTENT_TOO_LARGE,
            Rejection::NotImplemented(_) => Status::NOT_IMPLEMENTED,
            Rejection::Timeout => Status::REQUEST_TIMEOUT,
            Rejection::Internal => Status::FORBIDDEN,
        }
    }
}

/// What the router keeps of a request once its head is parsed and rewritten. One lives
/// per client connection and is refilled for each request, so its buffers are allocated
/// once, not per request.
#[derive(Debug, Default)]
pub(crate) struct Request {
    /// The method token as received.
    pub method: String,
    /// The request target as forwarded: as sent, or an absolute-form target in the
    /// origin-form it is forwarded in.
    pub target: String,
    /// The HTTP/1.x minor version.
    pub minor: u8,
    /// The client wants the connection kept open after this exchange.
    pub keep_alive: bool,
    pub framing: BodyFraming,
    /// The head to send upstream, complete with the final CRLF.
    pub upstream_head: Vec<u8>,
    /// Where to insert a `Host` line into `upstream_head` (after the request line) when
    /// an HTTP/1.0 client sent none: the node's address goes there once it is picked.
    pub host_missing_at: Option<usize>,
    /// The client waits for `100 Continue` before sending its body; the router answers
    /// that itself (and does not forward `Expect`), so a body never waits on a round trip.
    pub expect_continue: bool,
    /// The client asks to switch protocols (`Connection: upgrade` with `Upgrade`, as a
    /// WebSocket handshake does): `Upgrade` goes upstream with `Connection: upgrade`, and
    /// a `101` answer turns the connection into a tunnel (`tunnel.rs`).
    pub upgrade: bool,
    /// `Referer` and `User-Agent` values for the access log, back to back in `logged`.
    referer: Option<Range<usize>>,
    user_agent: Option<Range<usize>>,
    logged: Vec<u8>,
}

impl Request {
    /// The `Host` value forwarded upstream (none when an HTTP/1.0 client sent none).
    pub fn host(&self) -> Option<&[u8]> {
        self.field("host")
    }

    /// The value of the field `name` as forwarded upstream, read back from the upstream
    /// head: only rare paths ask (a purge's options, a router keying targets by site).
    pub fn field(&self, name: &str) -> Option<&[u8]> {
        self.upstream_head.split(|&b| b == b'\n').skip(1).find_map(|line| {
            let (n, value) = line.split_at(line.iter().position(|&b| b == b':')?);
            n.eq_ignore_ascii_case(name.as_bytes()).then(|| value[1..].trim_ascii())
        })
    }

    /// An earlier hop named `via` in `Via` before this router added its own entry: the
    /// request already passed a distributor of this cluster. Read on peers only.
    pub fn passed(&self, via: &str) -> bool {
        let Some(list) = self.field("via") else { return false };
        let named = list.split(|&b| b == b',').filter(|entry| {
            // `protocol received-by [comment]`: the second word names the hop.
            let mut words = entry.trim_ascii().split(|b| b.is_ascii_whitespace());
            words.nth(1) == Some(via.as_bytes())
        });
        // This router's own entry is the last; one more is an earlier pass.
        named.count() > 1
    }

    /// Drop buffers a large head grew (kept small ones are reused by the next request).
    pub fn trim(&mut self) {
        const KEEP: usize = 1024;
        for v in [&mut self.upstream_head, &mut self.logged] {
            if v.capacity() > KEEP {
                *v = Vec::new();
            }
        }
        for s in [&mut self.method, &mut self.target] {
            if s.capacity() > KEEP {
                *s = String::new();
            }
        }
    }

    /// A GET or HEAD without a body can be sent again to another node.
    pub fn retryable(&self) -> bool {
        matches!(self.method.as_str(), "GET" | "HEAD") && self.framing == BodyFraming::Empty
    }

    pub fn is_head(&self) -> bool {
        self.method == "HEAD"
    }

    /// The first `Referer` value.
    pub fn referer(&self) -> Option<&[u8]> {
        self.referer.clone().map(|r| &self.logged[r])
    }

    /// The first `User-Agent` value.
    pub fn user_agent(&self) -> Option<&[u8]> {
        self.user_agent.clone().map(|r| &self.logged[r])
    }

    /// Copy the first value of `name` into `logged`.
    fn keep_first<'a>(
        &mut self,
        name: &str,
        mut fields: impl Iterator<Item = (&'a str, &'a [u8])>,
    ) -> Option<Range<usize>> {
        let (_, v) = fields.find(|(n, _)| n.eq_ignore_ascii_case(name))?;
        let at = self.logged.len();
        self.logged.extend_from_slice(v);
        Some(at..self.logged.len())
    }
}

/// Whether a received field is forwarded as it is: not hop-by-hop (RFC 9110 §7.6.1, and
/// every field `Connection` names: meaningful for one connection only), and not one the
/// router writes itself (`Via`, `X-Larder-Node`, `X-Larder-Router`, the cluster's own
/// request fields ([`wire::INTERNAL_FIELDS`]), `Content-Length`, `X-Forwarded-For`).
/// `Connection` cannot name `Host` away: it is end-to-end, and the node needs it
/// (RFC 9110 §7.2, §7.6.1).
/// Dispatched on length first: this runs for every field of every request and response.
fn is_forwarded(name: &str, connection_tokens: &Tokens<'_>) -> bool {
    let is = |h: &str| name.eq_ignore_ascii_case(h);
    // Each internal field in the arm of its length, so that other fields of that length
    // cost one comparison, not a walk of the list (a test checks the arms cover it).
    let dropped = match name.len() {
        2 => is("te"),
        3 => is("via"),
        7 => is("trailer") || is("upgrade"),
        10 => is("connection") || is("keep-alive"),
        13 => is("x-larder-node") || is(wire::PEER_HEADER),
        14 => is("content-length") || is(wire::SLICE_HEADER),
        15 => {
            is("x-forwarded-for")
                || is("x-larder-router")
                || is(wire::TARGET_HINT_HEADER)
                || is(wire::POLLER_HEADER)
        }
        16 => is("proxy-connection"),
        17 => is("transfer-encoding"),
        18 => is("proxy-authenticate") || is(wire::PEER_FILL_HEADER),
        19 => is("proxy-authorization"),
        _ => false,
    };
    !dropped && (name.eq_ignore_ascii_case("host") || !connection_tokens.has(name))
}

/// Connection tokens held inline: heads name a handful at most, so this never allocates
/// on the request path (more than `INLINE_TOKENS` spill to the heap).
const INLINE_TOKENS: usize = 8;

struct Tokens<'a> {
    inline: [&'a str; INLINE_TOKENS],
    len: usize,
    spill: Vec<&'a str>,
}

impl<'a> Tokens<'a> {
    fn push(&mut self, token: &'a str) {
        if self.len < INLINE_TOKENS {
            self.inline[self.len] = token;
            self.len += 1;
        } else {
            self.spill.push(token);
        }
    }

    fn has(&self, token: &str) -> bool {
        let is = |t: &&str| t.eq_ignore_ascii_case(token);
        self.inline[..self.len].iter().any(is) || self.spill.iter().any(is)
    }
}

/// The tokens of every `Connection` field.
fn connection_tokens<'a>(fields: impl Iterator<Item = (&'a str, &'a [u8])>) -> Tokens<'a> {
    let mut tokens = Tokens { inline: [""; INLINE_TOKENS], len: 0, spill: Vec::new() };
    fields
        .filter(|(name, _)| name.eq_ignore_ascii_case("connection"))
        .filter_map(|(_, v)| std::str::from_utf8(v).ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim_matches([' ', '\t']))
        .filter(|t| !t.is_empty())
        .for_each(|t| tokens.push(t));
    tokens
}

/// Append the list field `name`: the values of every field so named, joined with ", "
/// (RFC 9110 §5.3), then this hop's own entry written by `own`. Written straight into
/// `out`: this runs for every request and response.
fn push_list<'a>(
    out: &mut Vec<u8>,
    name: &str,
    fields: impl Iterator<Item = (&'a str, &'a [u8])>,
    own: impl FnOnce(&mut Vec<u8>),
) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    for (_, v) in fields.filter(|(n, _)| n.eq_ignore_ascii_case(name)) {
        let v = v.trim_ascii();
        if !v.is_empty() {
            out.extend_from_slice(v);
            out.extend_from_slice(b", ");
        }
    }
    own(out);
    out.extend_from_slice(b"\r\n");
}

fn push_field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

fn push_length(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(b"Content-Length: ");
    push_decimal(out, n);
    out.extend_from_slice(b"\r\n");
}

/// `Via`: what earlier hops wrote, then this hop, named with the version it received.
fn push_via<'a>(
    out: &mut Vec<u8>,
    fields: impl Iterator<Item = (&'a str, &'a [u8])>,
    minor: u8,
    via: &str,
) {
    push_list(out, "Via", fields, |out| {
        out.extend_from_slice(if minor == 0 { b"1.0 " } else { b"1.1 " });
        out.extend_from_slice(via.as_bytes());
    });
}

/// Parse a request head at the start of `buf` into `req`, rewritten for upstream;
/// `client` is the client's address as text. `Ok(None)` means the head is not complete
/// yet; `Ok(Some(len))` gives the head's length in `buf`.
///
/// A complete head within every limit is read in place (httparse over the buffer, no
/// copy per field). Anything else — partial, malformed, over a limit — goes to
/// `http1::parse_head`, which owns the rules and the exact error for each case.
pub(crate) fn parse_request(
    buf: &[u8],
    client: &[u8],
    limits: &http1::Limits,
    via: &str,
    req: &mut Request,
) -> Result<Option<usize>, Rejection> {
    let mut slots = HeaderSlots::new();
    let mut parsed = httparse::Request::new(&mut []);
    let complete = parsed.parse_with_uninit_headers(buf, slots.get(limits.max_headers));
    if let Ok(httparse::Status::Complete(len)) = complete {
        if let (Some(method), Some(target), Some(minor)) =
            (parsed.method, parsed.path, parsed.version)
        {
            let headers = &*parsed.headers;
            let hosts = headers.iter().filter(|h| h.name.eq_ignore_ascii_case("host")).count();
            let within = len <= limits.max_header_bytes && target.len() <= limits.max_uri_len;
            if within && hosts <= 1 && (minor == 0 || hosts == 1) {
                let fields = || headers.iter().map(|h| (h.name, h.value));
                rewrite_request(method, target, minor, fields, client, via, req)?;
                return Ok(Some(len));
            }
        }
    }
    let Some((head, len)) = http1::parse_head(buf, limits).map_err(Rejection::Head)? else {
        return Ok(None);
    };
    let minor = if head.version == http1::Version::Http10 { 0 } else { 1 };
    let fields = || head.headers.iter().map(|h| (h.name.as_str(), h.value.as_slice()));
    rewrite_request(head.method.as_str(), &head.target, minor, fields, client, via, req)?;
    Ok(Some(len))
}

/// [`parse_request`] for a head whose fields another protocol has already parsed and
/// checked (an HTTP/2 request's: valid names, values and target), read into `req` without
/// writing it out as HTTP/1.1 text first. `head_bytes` is the length that text would
/// have. `None` when the head is not within the limits every field count, size and Host
/// rule of [`parse_request`] checks: the caller then writes the text and parses it, which
/// gives the exact rejection.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_parsed_request<'a, I>(
    method: &str,
    target: &str,
    fields: impl Fn() -> I,
    head_bytes: usize,
    client: &[u8],
    limits: &http1::Limits,
    via: &str,
    req: &mut Request,
) -> Option<Result<(), Rejection>>
where
    I: Iterator<Item = (&'a str, &'a [u8])>,
{
    let (mut count, mut hosts) = (0, 0);
    for (name, _) in fields() {
        count += 1;
        hosts += usize::from(name.eq_ignore_ascii_case("host"));
    }
    let within = count <= limits.max_headers
        && head_bytes <= limits.max_header_bytes
        && target.len() <= limits.max_uri_len;
    if !within || hosts != 1 {
        return None;
    }
    Some(rewrite_request(method, target, 1, fields, client, via, req))
}

/// Check a parsed request's framing and fill `req` with what the router keeps of it.
fn rewrite_request<'a, I>(
    method: &str,
    target: &str,
    minor: u8,
    fields: impl Fn() -> I,
    client: &[u8],
    via: &str,
    req: &mut Request,
) -> Result<(), Rejection>
where
    I: Iterator<Item = (&'a str, &'a [u8])>,
{
    if method == "CONNECT" {
        return Err(Rejection::NotImplemented("CONNECT"));
    }
    if target == "*" && method != "OPTIONS" {
        return Err(Rejection::Asterisk);
    }
    // Absolute-form goes upstream in origin-form with the target's authority as Host (RFC
    // 9112 §3.2.2: the Host field is then ignored), so the node never sees two hosts.
    let absolute = http1::split_absolute(target).transpose().map_err(Rejection::Absolute)?;
    let is_host = |name: &str| name.eq_ignore_ascii_case("host");
    if absolute.is_none() && fields().any(|(n, v)| is_host(n) && !http1::is_valid_host(v)) {
        return Err(Rejection::Host);
    }
    let framing = framing::request_framing(fields(), minor).map_err(Rejection::Framing)?;
    let tokens = connection_tokens(fields());
    let expect_continue = has_token(fields(), "expect", "100-continue");
    let keep_alive = !has_token(fields(), "connection", "close")
        && (minor == 1 || has_token(fields(), "connection", "keep-alive"));
    let present = |name: &str| fields().any(|(n, _)| n.eq_ignore_ascii_case(name));

    req.target.clear();
    match &absolute {
        Some(a) => a.origin_form(&mut req.target),
        None => req.target.push_str(target),
    }
    let out = &mut req.upstream_head;
    out.clear();
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(req.target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    req.host_missing_at = None;
    match &absolute {
        Some(a) => push_field(out, "Host", a.authority.as_bytes()),
        None if !present("host") => req.host_missing_at = Some(out.len()),
        None => {}
    }
    for (name, value) in fields() {
        let dropped = (expect_continue && name.eq_ignore_ascii_case("expect"))
            || (absolute.is_some() && is_host(name));
        if is_forwarded(name, &tokens) && !dropped {
            push_field(out, name, value);
        }
    }
    match framing {
        BodyFraming::Length(n) => push_length(out, n),
        BodyFraming::Chunked => push_field(out, "Transfer-Encoding", b"chunked"),
        BodyFraming::Empty | BodyFraming::UntilClose => {
            if present("content-length") {
                push_length(out, 0);
            }
        }
    }
    // Only a request with `Connection` can ask for an upgrade: most have none.
    let upgrade = tokens.len > 0 && push_upgrade(minor, framing, &tokens, fields(), out);
    push_list(out, "X-Forwarded-For", fields(), |out| out.extend_from_slice(client));
    push_via(out, fields(), minor, via);
    out.extend_from_slice(b"\r\n");

    req.upgrade = upgrade;
    req.method.clear();
    req.method.push_str(method);
    req.minor = minor;
    req.keep_alive = keep_alive;
    req.framing = framing;
    req.expect_continue = expect_continue;
    req.logged.clear();
    req.referer = req.keep_first("referer", fields());
    req.user_agent = req.keep_first("user-agent", fields());
    Ok(())
}

/// When the request asks for an upgrade (RFC 9110 §7.8: by HTTP/1.1, without content,
/// `Connection` naming `upgrade`), write its `Connection: upgrade` and `Upgrade` to `out`
/// and say so. Out of line: rare, and it keeps the head rewrite small.
#[cold]
#[inline(never)]
fn push_upgrade<'a>(
    minor: u8,
    framing: BodyFraming,
    tokens: &Tokens<'_>,
    mut fields: impl Iterator<Item = (&'a str, &'a [u8])>,
    out: &mut Vec<u8>,
) -> bool {
    if minor != 1 || framing != BodyFraming::Empty || !tokens.has("upgrade") {
        return false;
    }
    let Some((_, protocols)) = fields.find(|(n, _)| n.eq_ignore_ascii_case("upgrade")) else {
        return false;
    };
    push_field(out, "Connection", b"upgrade");
    push_field(out, "Upgrade", protocols);
    true
}

/// How the response body goes to the client.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ClientBody {
    /// As framed upstream (length, chunked re-encoded, nothing).
    Same,
    /// Chunked upstream, but an HTTP/1.0 client: raw bytes, then close.
    Dechunked,
}

/// What the router keeps of a response head once it is rewritten for the client.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub framing: BodyFraming,
    pub client_body: ClientBody,
    /// The client connection closes after this response.
    pub close_client: bool,
    /// The upstream connection can go back to the pool once the body is read.
    pub upstream_reusable: bool,
}

impl Response {
    /// A 1xx interim response: relayed, then the final response follows.
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && !self.is_switch()
    }

    /// `101 Switching Protocols` to an upgrade request: the connection is a tunnel now.
    pub fn is_switch(&self) -> bool {
        self.status == 101
    }
}

/// Why an upstream response could not be relayed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadResponse {
    #[error("malformed response head")]
    Malformed,
    #[error("response head larger than the limit")]
    TooLarge,
    #[error("bad response framing: {0}")]
    Framing(FramingError),
    #[error("unexpected protocol switch")]
    Switch,
}

/// How to rewrite a response for this client.
pub(crate) struct ResponseRules<'a> {
    pub max_headers: usize,
    pub via: &'a str,
    pub head_request: bool,
    /// The client may keep its connection (it asked to and the router is not draining).
    pub client_keep_alive: bool,
    pub client_minor: u8,
    /// `X-Larder-Node` value, when that header is on.
    pub node_name: Option<&'a str>,
    /// The whole `X-Larder-Router` field line, when that header is on.
    pub router_field: Option<&'a [u8]>,
    /// The request asked for an upgrade the router tunnels: a `101` is relayed, not refused.
    pub upgrade: bool,
}

/// Where a response head rewritten for the client goes: HTTP/1.1 text (`Vec<u8>`), or
/// the fields of an HTTP/2 response built straight from the node's head, without writing
/// text only to parse it again. The rewrite (`rewrite_response`) decides what is sent;
/// the form it takes is this trait's.
pub(crate) trait ResponseHeadOut {
    /// The node's whole head and how many fields it has, before any other call: the
    /// bytes the field values passed on are slices of.
    fn begin(&mut self, head: &[u8], fields: usize);
    fn status_line(&mut self, status: u16, reason: &str);
    fn field(&mut self, name: &str, value: &[u8]);
    fn content_length(&mut self, n: u64);
    /// `Via`: what earlier hops wrote, then this hop, named with the version it received.
    fn via<'a>(&mut self, fields: impl Iterator<Item = (&'a str, &'a [u8])>, minor: u8, via: &str);
    /// A whole field line the router wrote once (`Name: value\r\n`).
    fn field_line(&mut self, line: &[u8]);
    fn end(&mut self);
}

impl ResponseHeadOut for Vec<u8> {
    #[inline(always)]
    fn begin(&mut self, _: &[u8], _: usize) {}

    #[inline(always)]
    fn status_line(&mut self, status: u16, reason: &str) {
        self.extend_from_slice(b"HTTP/1.1 ");
        push_decimal(self, u64::from(status));
        self.push(b' ');
        self.extend_from_slice(reason.as_bytes());
        self.extend_from_slice(b"\r\n");
    }

    #[inline(always)]
    fn field(&mut self, name: &str, value: &[u8]) {
        push_field(self, name, value);
    }

    #[inline(always)]
    fn content_length(&mut self, n: u64) {
        push_length(self, n);
    }

    #[inline(always)]
    fn via<'a>(&mut self, fields: impl Iterator<Item = (&'a str, &'a [u8])>, minor: u8, via: &str) {
        push_via(self, fields, minor, via);
    }

    #[inline(always)]
    fn field_line(&mut self, line: &[u8]) {
        self.extend_from_slice(line);
    }

    #[inline(always)]
    fn end(&mut self) {
        self.extend_from_slice(b"\r\n");
    }
}

/// Parse a response head at the start of `buf`, appending the client's head to `out` as
/// HTTP/1.1 text. One function, not an instance of the generic one in each caller's unit,
/// so the HTTP/1.1 path is compiled as it was before HTTP/2 shared the rewrite.
pub(crate) fn parse_response(
    buf: &[u8],
    rules: &ResponseRules<'_>,
    out: &mut Vec<u8>,
) -> Result<Option<(usize, Response)>, BadResponse> {
    rewrite_response(buf, rules, out)
}

/// Parse a response head at the start of `buf`, giving the client's head to `out`.
#[inline(always)]
pub(crate) fn rewrite_response<O: ResponseHeadOut>(
    buf: &[u8],
    rules: &ResponseRules<'_>,
    out: &mut O,
) -> Result<Option<(usize, Response)>, BadResponse> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut slots = HeaderSlots::new();
    // The upstream buffer's size bounds the head's bytes.
    let limits =
        http1::ResponseLimits { max_head_bytes: usize::MAX, max_fields: rules.max_headers };
    let head = match http1::parse_response_head(buf, &mut slots, &limits) {
        Ok(Some(head)) => head,
        Ok(None) => return Ok(None),
        Err(ResponseHeadError::TooManyFields { .. } | ResponseHeadError::TooLarge { .. }) => {
            return Err(BadResponse::TooLarge)
        }
        Err(ResponseHeadError::Malformed(_)) => return Err(BadResponse::Malformed),
    };
    let (status, len) = (head.status, head.len);
    let minor = if head.version == http1::Version::Http10 { 0 } else { 1 };
    out.begin(&buf[..len], head.fields().size_hint().0);
    if status == 101 {
        return switch_response(&head, minor, rules, out).map(|r| Some((len, r)));
    }
    let fields = || head.fields();
    let framing = head.framing(rules.head_request).map_err(BadResponse::Framing)?;
    let tokens = connection_tokens(fields());
    let upstream_keep_alive =
        if minor == 0 { tokens.has("keep-alive") } else { !tokens.has("close") };
    let interim = head.is_interim();
    let client_body = if framing == BodyFraming::Chunked && rules.client_minor == 0 {
        ClientBody::Dechunked
    } else {
        ClientBody::Same
    };
    let close_client = !interim
        && (!rules.client_keep_alive
            || framing == BodyFraming::UntilClose
            || client_body == ClientBody::Dechunked);

    out.status_line(status, head.reason);
    for (name, value) in fields() {
        if is_forwarded(name, &tokens) {
            out.field(name, value);
        }
    }
    if !interim {
        match (framing, client_body) {
            (BodyFraming::Length(n), _) => out.content_length(n),
            (BodyFraming::Chunked, ClientBody::Same) => out.field("Transfer-Encoding", b"chunked"),
            // A HEAD response (or 304) keeps the length it announces.
            _ => {
                if let Some((_, v)) =
                    fields().find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                {
                    out.field("Content-Length", v);
                }
            }
        }
        push_router_fields(out, fields(), minor, rules);
        if close_client {
            out.field("Connection", b"close");
        } else if rules.client_minor == 0 {
            out.field("Connection", b"keep-alive");
        }
    }
    out.end();
    let upstream_reusable = upstream_keep_alive && framing != BodyFraming::UntilClose;
    Ok(Some((len, Response { status, framing, client_body, close_client, upstream_reusable })))
}

/// The fields this hop adds to every response it relays: `Via`, and `X-Larder-Node` and
/// `X-Larder-Router` when they are on.
#[inline(always)]
fn push_router_fields<'a, O: ResponseHeadOut>(
    out: &mut O,
    fields: impl Iterator<Item = (&'a str, &'a [u8])>,
    minor: u8,
    rules: &ResponseRules<'_>,
) {
    out.via(fields, minor, rules.via);
    if let Some(name) = rules.node_name {
        out.field("X-Larder-Node", name.as_bytes());
    }
    if let Some(field) = rules.router_field {
        out.field_line(field);
    }
}

/// A `101 Switching Protocols` to an upgrade request, its head rewritten for the client
/// into `out` (the protocol named again, since `Upgrade` and `Connection` are hop-by-hop);
/// refused when the request asked for no upgrade. Out of line: rare.
#[cold]
#[inline(never)]
fn switch_response<O: ResponseHeadOut>(
    head: &http1::ReceivedHead<'_, '_>,
    minor: u8,
    rules: &ResponseRules<'_>,
    out: &mut O,
) -> Result<Response, BadResponse> {
    let fields = || head.fields();
    let protocol = fields().find(|(n, _)| n.eq_ignore_ascii_case("upgrade")).map(|(_, v)| v);
    let Some(protocol) = protocol.filter(|_| rules.upgrade) else {
        return Err(BadResponse::Switch);
    };
    let tokens = connection_tokens(fields());
    out.status_line(101, head.reason);
    for (name, value) in fields().filter(|(name, _)| is_forwarded(name, &tokens)) {
        out.field(name, value);
    }
    out.field("Connection", b"upgrade");
    out.field("Upgrade", protocol);
    push_router_fields(out, fields(), minor, rules);
    out.end();
    let (framing, client_body) = (BodyFraming::Empty, ClientBody::Same);
    let switch = Response {
        status: 101,
        framing,
        client_body,
        close_client: false,
        upstream_reusable: false,
    };
    Ok(switch)
}

/// A complete response written by the router itself (errors, admin).
pub(crate) fn simple_response(
    status: Status,
    content_type: &str,
    body: &[u8],
    close: bool,
    out: &mut Vec<u8>,
) {
    let mut head = ResponseHead::new(out, status);
    head.header("Content-Type", content_type.as_bytes())
        .header_u64("Content-Length", body.len() as u64);
    if close {
        head.header("Connection", b"close");
    }
    head.finish();
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<Option<(usize, Request)>, Rejection> {
        let limits = http1::Limits { max_header_bytes: 4096, max_headers: 32, max_uri_len: 64 };
        let mut req = Request::default();
        let len = parse_request(raw.as_bytes(), b"10.0.0.1", &limits, "larder", &mut req)?;
        Ok(len.map(|len| (len, req)))
    }

    #[test]
    fn every_internal_field_is_dropped_in_any_case() {
        let none = Tokens { inline: [""; INLINE_TOKENS], len: 0, spill: Vec::new() };
        for name in wire::INTERNAL_FIELDS {
            assert!(!is_forwarded(name, &none), "{name}");
            assert!(!is_forwarded(&name.to_ascii_uppercase(), &none), "{name}");
        }
    }

    #[test]
    fn peer_fields_from_a_client_are_dropped() {
        // Only the router names a peer, and only nodes mark a peer fill.
        let raw = "GET /a HTTP/1.1\r\nHost: x\r\nX-Larder-Peer: 10.0.0.9:80\r\n\
                   x-larder-peer-fill: 1\r\nX-Larder-Slice: 0/1/2\r\nAccept: */*\r\n\r\n";
        let (_, req) = parse(raw).unwrap().unwrap();
        let head = String::from_utf8(req.upstream_head).unwrap().to_ascii_lowercase();
        assert!(!head.contains("x-larder-peer") && !head.contains("x-larder-slice"), "{head}");
        assert!(head.contains("accept: */*"), "{head}");
    }

    #[test]
    fn rewrites_for_upstream() {
        let raw = "GET /a?b HTTP/1.1\r\nHost: x\r\nConnection: close, X-Secret\r\nX-Secret: 1\r\n\
                   Keep-Alive: 5\r\nX-Forwarded-For: 1.2.3.4\r\nAccept: */*\r\n\r\nrest";
        let (len, req) = parse(raw).unwrap().unwrap();
        assert_eq!(&raw[len..], "rest");
        assert!(!req.keep_alive);
        let head = String::from_utf8(req.upstream_head).unwrap();
        assert_eq!(
            head,
            "GET /a?b HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\
             X-Forwarded-For: 1.2.3.4, 10.0.0.1\r\nVia: 1.1 larder\r\n\r\n"
        );
        let (_, post) =
            parse("POST / HTTP/1.1\r\nHost: x\r\ncontent-length: 007\r\n\r\n").unwrap().unwrap();
        let head = String::from_utf8(post.upstream_head).unwrap();
        assert!(head.contains("Content-Length: 7\r\n"), "{head}");
    }

    #[test]
    fn keeps_what_the_log_and_the_retry_need() {
        let raw = "HEAD /x HTTP/1.0\r\nUser-Agent: ua\r\nReferer: r1\r\nReferer: r2\r\n\
                   Connection: keep-alive\r\n\r\n";
        let (_, req) = parse(raw).unwrap().unwrap();
        assert_eq!((req.method.as_str(), req.target.as_str(), req.minor), ("HEAD", "/x", 0));
        assert!(req.keep_alive && req.is_head() && req.retryable());
        assert_eq!(req.referer(), Some(&b"r1"[..]));
        assert_eq!(req.user_agent(), Some(&b"ua"[..]));
        assert_eq!(req.host_missing_at, Some("HEAD /x HTTP/1.1\r\n".len()));
        // A head in pieces, or one over a limit, takes the http1 path: same answers.
        assert!(parse("GET /a HTTP/1.1\r\nHost: x\r\n").unwrap().is_none());
        let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(80));
        assert_eq!(parse(&long).unwrap_err().status().code(), 414);
    }

    #[test]
    fn rejects_what_could_smuggle() {
        let reject = |raw: &str| parse(raw).unwrap_err().status().code();
        assert_eq!(reject("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"), 400, "obs-fold");
        assert_eq!(reject("GET / HTTP/1.1\r\nHost: a\r\nX : b\r\n\r\n"), 400, "space before :");
        assert_eq!(reject("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n"), 400, "bare CR");
        assert_eq!(reject("GET / HTTP/1.1\r\nHost: a\r\nX[1]: b\r\n\r\n"), 400, "bad name");
        assert_eq!(
            reject("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            400
        );
        assert_eq!(reject("CONNECT a:1 HTTP/1.1\r\nHost: a\r\n\r\n"), 501);
    }

    #[test]
    fn connection_never_removes_host() {
        // RFC 9110 §7.6.1: Connection names hop-by-hop fields; Host is end-to-end.
        let raw = "GET / HTTP/1.1\r\nHost: x\r\nConnection: Host, X-A\r\nX-A: 1\r\n\r\n";
        let (_, req) = parse(raw).unwrap().unwrap();
        let head = String::from_utf8(req.upstream_head).unwrap();
        assert!(head.starts_with("GET / HTTP/1.1\r\nHost: x\r\n"), "{head}");
        assert!(!head.contains("X-A"), "{head}");
    }

    #[test]
    fn absolute_form_goes_upstream_in_origin_form_with_the_target_host() {
        // RFC 9112 §3.2.2: the target's authority wins over the Host field.
        let raw = "GET http://other:81/x?y HTTP/1.1\r\nHost: mine\r\nAccept: a\r\n\r\n";
        let (_, req) = parse(raw).unwrap().unwrap();
        assert_eq!((req.target.as_str(), req.host_missing_at), ("/x?y", None));
        assert_eq!(req.host(), Some(&b"other:81"[..]));
        let head = String::from_utf8(req.upstream_head).unwrap();
        assert!(head.starts_with("GET /x?y HTTP/1.1\r\nHost: other:81\r\nAccept: a\r\n"), "{head}");
        assert!(!head.contains("mine"), "{head}");
        let (_, bare) = parse("GET http://o HTTP/1.0\r\n\r\n").unwrap().unwrap();
        let head = String::from_utf8(bare.upstream_head).unwrap();
        assert!(head.starts_with("GET / HTTP/1.1\r\nHost: o\r\n"), "{head}");
        assert_eq!(bare.host_missing_at, None);
        let (_, plain) = parse("GET /x HTTP/1.1\r\nX-Host: no\r\nhOST:  Shop.example \r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(plain.host(), Some(&b"Shop.example"[..]));
        let (_, none) = parse("GET /x HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert_eq!(none.host(), None);
        let raw = "PURGE /a HTTP/1.1\r\nHost: x\r\nx-larder-purge:  soft \r\n\r\n";
        let (_, purge) = parse(raw).unwrap().unwrap();
        assert_eq!(purge.field(wire::PURGE_HEADER), Some(&b"soft"[..]));
        assert_eq!(plain.field(wire::PURGE_HEADER), None);
        let reject = |raw: &str| parse(raw).unwrap_err().status().code();
        assert_eq!(reject("GET ftp://o/x HTTP/1.1\r\nHost: o\r\n\r\n"), 400);
        assert_eq!(reject("GET http://u@o/x HTTP/1.1\r\nHost: o\r\n\r\n"), 400);
        assert_eq!(reject("GET http:///x HTTP/1.1\r\nHost: o\r\n\r\n"), 400);
    }

    #[test]
    fn an_invalid_host_and_asterisk_form_are_refused_and_http_1_2_is_read_as_1_1() {
        let reject = |raw: &str| parse(raw).unwrap_err().status().code();
        assert_eq!(reject("GET / HTTP/1.1\r\nHost: a b/c\r\n\r\n"), 400);
        assert_eq!(reject("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n"), 400);
        assert_eq!(reject("GET / HTTP/1.0\r\nHost: u@h\r\n\r\n"), 400);
        assert_eq!(reject("GET * HTTP/1.1\r\nHost: a\r\n\r\n"), 400);
        assert!(parse("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").unwrap().is_some());
        assert!(parse("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n").unwrap().is_some());
        let (_, req) = parse("GET / HTTP/1.2\r\nHost: a\r\n\r\n").unwrap().unwrap();
        assert_eq!(req.minor, 1);
        assert!(req.upstream_head.starts_with(b"GET / HTTP/1.1\r\nHost: a\r\n"));
    }

    #[test]
    fn rewrites_for_the_client() {
        let rules = ResponseRules {
            max_headers: 32,
            via: "larder",
            head_request: false,
            client_keep_alive: true,
            client_minor: 1,
            node_name: Some("n1"),
            router_field: Some(b"X-Larder-Router: r1\r\n"),
            upgrade: false,
        };
        // A node's own X-Larder-Router is dropped: the router that relays names itself.
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\
                    X-Larder-Router: spoof\r\n\r\n";
        let mut out = Vec::new();
        let (len, r) = parse_response(raw, &rules, &mut out).unwrap().unwrap();
        assert_eq!(len, raw.len());
        assert_eq!(r.framing, BodyFraming::Chunked);
        assert!(!r.close_client && r.upstream_reusable);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nVia: 1.1 larder\r\nX-Larder-Node: n1\r\n\
             X-Larder-Router: r1\r\n\r\n"
        );
        let old = ResponseRules { client_minor: 0, node_name: None, router_field: None, ..rules };
        let (_, r) = parse_response(raw, &old, &mut Vec::new()).unwrap().unwrap();
        assert_eq!(r.client_body, ClientBody::Dechunked);
        assert!(r.close_client);
        let until_close = b"HTTP/1.0 200 OK\r\n\r\n";
        let (_, r) = parse_response(until_close, &old, &mut Vec::new()).unwrap().unwrap();
        assert_eq!(r.framing, BodyFraming::UntilClose);
        assert!(r.close_client && !r.upstream_reusable);
    }

    #[test]
    fn an_upgrade_goes_upstream_and_its_101_comes_back_as_a_switch() {
        let raw = "GET /chat HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\n\
                   Upgrade: websocket\r\nSec-WebSocket-Key: k\r\n\r\n";
        let (_, req) = parse(raw).unwrap().unwrap();
        assert!(req.upgrade);
        let head = String::from_utf8(req.upstream_head.clone()).unwrap();
        assert!(head.contains("\r\nConnection: upgrade\r\nUpgrade: websocket\r\n"), "{head}");
        assert!(head.contains("Sec-WebSocket-Key: k\r\n"), "{head}");
        // Not an upgrade: Upgrade without the Connection token, HTTP/1.0, or with a body.
        for raw in [
            "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n",
            "GET / HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\
             Content-Length: 1\r\n\r\nx",
        ] {
            let (_, req) = parse(raw).unwrap().unwrap();
            assert!(!req.upgrade, "{raw}");
            let head = String::from_utf8(req.upstream_head).unwrap();
            assert!(!head.to_ascii_lowercase().contains("upgrade"), "{head}");
        }

        let rules = ResponseRules {
            max_headers: 32,
            via: "larder",
            head_request: false,
            client_keep_alive: true,
            client_minor: 1,
            node_name: None,
            router_field: None,
            upgrade: true,
        };
        let raw = b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\
                    Upgrade: websocket\r\nSec-WebSocket-Accept: a\r\n\r\nframes";
        let mut out = Vec::new();
        let (len, r) = parse_response(raw, &rules, &mut out).unwrap().unwrap();
        assert!(r.is_switch() && !r.is_interim() && !r.upstream_reusable);
        assert_eq!(&raw[len..], b"frames");
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("HTTP/1.1 101 Switching Protocols\r\n"), "{out}");
        assert!(
            out.contains(
                "Sec-WebSocket-Accept: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\n"
            ),
            "{out}"
        );
        let unasked = ResponseRules { upgrade: false, ..rules };
        assert_eq!(
            parse_response(raw, &unasked, &mut Vec::new()).unwrap_err(),
            BadResponse::Switch
        );
    }
}
