//! The `[http2]` section: HTTP/2 at the front door and its limits.

use serde::{Deserialize, Serialize};

use crate::RouterError;

/// HTTP/2 for clients: by ALPN (`h2`) on the TLS listener, by prior knowledge (the
/// connection preface) on the plain one. Every stream is a request of its own, dispatched
/// like an HTTP/1.1 request and sent to its node over HTTP/1.1. The limits bound what
/// one client connection can hold and make the router do; a client that breaks them
/// (floods of resets, of frames the router must answer, of header blocks) has its
/// connection closed with `GOAWAY`, and other connections are unaffected.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Http2Config {
    /// Serve HTTP/2; off, the TLS listener offers `http/1.1` alone and a plain
    /// connection that starts with the HTTP/2 preface is refused as a bad request. On, a
    /// connection whose first line is neither an HTTP/1 request line nor the preface is
    /// an invalid preface, closed without an answer. Default is true.
    pub enabled: bool,
    /// Streams (requests) a client may have open at once on one connection
    /// (`SETTINGS_MAX_CONCURRENT_STREAMS`). Default is 100.
    pub max_concurrent_streams: u32,
    /// Largest header list a client may send, counted as HTTP/2 does (names, values and
    /// 32 bytes per field, after HPACK decoding), so a small compressed block cannot
    /// expand into a large one (`SETTINGS_MAX_HEADER_LIST_SIZE`). A request's head is
    /// also held to `limits.max_header_bytes` and `limits.max_headers` as on HTTP/1.1.
    /// Default is 16384.
    pub max_header_list_bytes: u32,
    /// How many request-body bytes a client may send on one stream before the router
    /// has passed them on to the node (the stream's flow-control window). Default is
    /// 262144.
    pub stream_window_bytes: u32,
    /// The same for all streams of one connection together. Default is 1048576.
    pub connection_window_bytes: u32,
    /// Largest frame payload the router accepts (`SETTINGS_MAX_FRAME_SIZE`, 16384 to
    /// 16777215). Default is 16384.
    pub max_frame_bytes: u32,
    /// Streams a client may open and cancel before the router has taken them up
    /// (Rapid Reset, CVE-2023-44487): beyond it the connection is closed with
    /// `ENHANCE_YOUR_CALM`. Default is 20.
    pub max_pending_reset_streams: usize,
    /// Streams the router may have to reset because the client broke the protocol on
    /// them, over the connection's life: beyond it the connection is closed. Default is
    /// 1024.
    pub max_error_reset_streams: usize,
    /// Response bytes the router queues per stream beyond what the client's window takes.
    /// Default is 65536.
    pub max_send_buffer_bytes: usize,
    /// Response bytes gathered per connection before they are written to the client:
    /// the frames of all streams that answered in one turn of the connection go out
    /// together (fewer TLS records and system calls on both sides), and are written at
    /// once when there are more. 0 writes every frame as h2 hands it over. Default is
    /// 65536.
    pub write_batch_bytes: usize,
    /// `PING` and `SETTINGS` frames (each one the router must answer) a client may send in
    /// one second: beyond it the connection is closed. Default is 100.
    pub max_control_frames_per_second: u32,
    /// How long a client address whose connection the router closed for abuse (Rapid
    /// Reset, a control-frame flood) is refused new connections, on either protocol: an
    /// attacker cannot trade each closed connection for a fresh one at once. 0 turns it
    /// off. Default is 10000 (10 s).
    #[serde(rename = "calm_down_ms", with = "crate::millis")]
    pub calm_down: std::time::Duration,
}

impl Default for Http2Config {
    fn default() -> Self {
        Http2Config {
            enabled: true,
            calm_down: std::time::Duration::from_secs(10),
            max_concurrent_streams: 100,
            max_header_list_bytes: 16 * 1024,
            stream_window_bytes: 256 * 1024,
            connection_window_bytes: 1 << 20,
            max_frame_bytes: 16 * 1024,
            max_pending_reset_streams: 20,
            max_error_reset_streams: 1024,
            max_send_buffer_bytes: 64 * 1024,
            write_batch_bytes: 64 * 1024,
            max_control_frames_per_second: 100,
        }
    }
}

impl Http2Config {
    /// Refuse values HTTP/2 cannot announce or the router cannot serve with.
    pub fn validate(&self) -> Result<(), RouterError> {
        const MAX_WINDOW: u32 = (1 << 31) - 1;
        let bad = |what: &str| Err(RouterError::Config(format!("http2: {what}")));
        if self.max_concurrent_streams == 0 {
            return bad("max_concurrent_streams must be at least 1");
        }
        if !(16_384..=16_777_215).contains(&self.max_frame_bytes) {
            return bad("max_frame_bytes must be within 16384..=16777215");
        }
        if self.stream_window_bytes == 0 || self.stream_window_bytes > MAX_WINDOW {
            return bad("stream_window_bytes must be within 1..=2147483647");
        }
        if self.connection_window_bytes < 65_535 || self.connection_window_bytes > MAX_WINDOW {
            return bad("connection_window_bytes must be within 65535..=2147483647");
        }
        if self.max_header_list_bytes < 1024 {
            return bad("max_header_list_bytes must be at least 1024");
        }
        if self.max_control_frames_per_second == 0 {
            return bad("max_control_frames_per_second must be at least 1");
        }
        if self.max_send_buffer_bytes == 0 {
            return bad("max_send_buffer_bytes must be at least 1");
        }
        Ok(())
    }

    /// h2's server settings for these limits.
    pub(crate) fn builder(&self) -> h2::server::Builder {
        let mut b = h2::server::Builder::new();
        b.max_concurrent_streams(self.max_concurrent_streams)
            .max_header_list_size(self.max_header_list_bytes)
            .initial_window_size(self.stream_window_bytes)
            .initial_connection_window_size(self.connection_window_bytes)
            .max_frame_size(self.max_frame_bytes)
            .max_pending_accept_reset_streams(self.max_pending_reset_streams)
            .max_local_error_reset_streams(Some(self.max_error_reset_streams))
            .max_send_buffer_size(self.max_send_buffer_bytes);
        b
    }
}
