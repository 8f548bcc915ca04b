//! `Set-Cookie`: fields that belong to the one client whose request fetched a response. A
//! shared cache that stored them with the response would replay one user's session to
//! every client after; see [`super::config::SetCookie`] for what the node does instead.

use super::fields::Field;

/// The fields that set cookies (`Set-Cookie2` is obsolete, RFC 6265, but still a cookie).
const SETS_COOKIE: &[&str] = &["set-cookie", "set-cookie2"];

fn is_cookie(name: &str) -> bool {
    SETS_COOKIE.iter().any(|c| c.eq_ignore_ascii_case(name))
}

/// Whether a response with `fields` sets a cookie.
pub fn sets_cookie(fields: &[Field]) -> bool {
    fields.iter().any(|(n, _)| is_cookie(n))
}

/// `fields` split into what may be shared and the cookies, each in its order.
pub fn split_off_cookies(fields: Vec<Field>) -> (Vec<Field>, Vec<Field>) {
    fields.into_iter().partition(|(n, _)| !is_cookie(n))
}

#[cfg(test)]
mod tests {
    use super::super::fields::from_pairs as f;
    use super::*;

    #[test]
    fn cookies_are_found_and_split_off_whatever_their_case() {
        let fields =
            f(&[("ETag", "\"a\""), ("SET-COOKIE", "a=1"), ("X-A", "1"), ("set-cookie2", "b=2")]);
        assert!(sets_cookie(&fields));
        let (shared, cookies) = split_off_cookies(fields);
        assert_eq!(shared, f(&[("ETag", "\"a\""), ("X-A", "1")]));
        assert_eq!(cookies, f(&[("SET-COOKIE", "a=1"), ("set-cookie2", "b=2")]));
        assert!(!sets_cookie(&shared));
    }
}
