//! A whole request field line, as the cluster's processes write their own fields to each
//! other (`Name: value\r\n`), the value written in place.

/// `name: <value>\r\n` appended to `out`, `value` writing the value.
pub(crate) fn push_field_line(out: &mut Vec<u8>, name: &str, value: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    value(out);
    out.extend_from_slice(b"\r\n");
}
