//! Writing RESP2: commands (arrays of bulk strings) and the replies a server sends, appended to
//! the caller's buffer with no allocation of their own.

/// Appends a command, an array of bulk strings, to `out`.
#[inline]
pub fn encode_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    push_array_header(out, args.len());
    for arg in args {
        push_bulk(out, arg);
    }
}

/// Appends the header of an array of `len` elements (the caller appends the elements).
#[inline]
pub fn push_array_header(out: &mut Vec<u8>, len: usize) {
    push_header(out, b'*', len);
}

/// Appends a bulk string.
#[inline]
pub fn push_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    push_bulk_parts(out, &[bytes]);
}

/// Appends one bulk string made of `parts` end to end (a key and its suffix, say) without
/// joining them first.
#[inline]
pub fn push_bulk_parts(out: &mut Vec<u8>, parts: &[&[u8]]) {
    push_header(out, b'$', parts.iter().map(|part| part.len()).sum());
    for part in parts {
        out.extend_from_slice(part);
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends a status reply (`+OK`). `text` must hold no CR or LF: a status is one line.
pub fn push_status(out: &mut Vec<u8>, text: &[u8]) {
    push_line(out, b'+', text);
}

/// Appends an error reply (`-ERR ...`). `text` must hold no CR or LF: an error is one line.
pub fn push_error(out: &mut Vec<u8>, text: &[u8]) {
    push_line(out, b'-', text);
}

/// Appends an integer reply.
pub fn push_integer(out: &mut Vec<u8>, n: i64) {
    out.push(b':');
    if n < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    out.extend_from_slice(decimal(&mut digits, n.unsigned_abs()));
    out.extend_from_slice(b"\r\n");
}

/// Appends the nil reply (`$-1`).
pub fn push_nil(out: &mut Vec<u8>) {
    out.extend_from_slice(b"$-1\r\n");
}

fn push_line(out: &mut Vec<u8>, kind: u8, text: &[u8]) {
    debug_assert!(
        !text.contains(&b'\r') && !text.contains(&b'\n'),
        "a RESP line cannot hold CR or LF"
    );
    out.push(kind);
    out.extend_from_slice(text);
    out.extend_from_slice(b"\r\n");
}

#[inline]
fn push_header(out: &mut Vec<u8>, kind: u8, n: usize) {
    out.push(kind);
    let mut digits = [0u8; 20];
    out.extend_from_slice(decimal(&mut digits, n as u64));
    out.extend_from_slice(b"\r\n");
}

/// The decimal digits of `n`, written into `buf` (no allocation).
#[inline]
pub fn decimal(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_commands() {
        let mut out = Vec::new();
        encode_command(&mut out, &[b"SET", b"k", b"v"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
        out.clear();
        encode_command(&mut out, &[&[b'x'; 1234][..]]);
        assert!(out.starts_with(b"*1\r\n$1234\r\n"));
        assert_eq!(out.len(), 4 + 7 + 1234 + 2);
        out.clear();
        encode_command(&mut out, &[]);
        assert_eq!(out, b"*0\r\n");
    }

    #[test]
    fn a_bulk_string_from_parts_is_one_string() {
        let mut out = Vec::new();
        push_bulk_parts(&mut out, &[b"orders:42", b"\xfffence"]);
        assert_eq!(out, b"$15\r\norders:42\xfffence\r\n");
        out.clear();
        push_bulk_parts(&mut out, &[]);
        assert_eq!(out, b"$0\r\n\r\n");
    }

    #[test]
    fn encodes_replies() {
        let mut out = Vec::new();
        push_status(&mut out, b"OK");
        push_error(&mut out, b"ERR no");
        push_integer(&mut out, -17);
        push_integer(&mut out, i64::MIN);
        push_integer(&mut out, 0);
        push_nil(&mut out);
        push_array_header(&mut out, 2);
        push_bulk(&mut out, b"a\r\nb");
        assert_eq!(
            out,
            b"+OK\r\n-ERR no\r\n:-17\r\n:-9223372036854775808\r\n:0\r\n$-1\r\n*2\r\n$4\r\na\r\nb\r\n"
        );
    }

    #[test]
    fn decimal_digits() {
        let mut buf = [0u8; 20];
        assert_eq!(decimal(&mut buf, 0), b"0");
        assert_eq!(decimal(&mut buf, 7), b"7");
        assert_eq!(decimal(&mut buf, 1_000_000), b"1000000");
        assert_eq!(decimal(&mut buf, u64::MAX), b"18446744073709551615");
    }
}
