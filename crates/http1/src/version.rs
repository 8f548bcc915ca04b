//! The HTTP/1 versions, shared by request and response heads and the field rules that
//! depend on the version (`Connection` keep-alive).

/// The protocol versions this crate speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}
