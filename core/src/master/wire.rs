//! The Redis wire protocol (RESP2), as far as the lock needs it: encoding commands, and a
//! bounded reader for the few reply types the lock's commands can get.
//!
//! Why our own reader: a master is not always an honest Redis. A reply is refused as soon as
//! its header shows it cannot be one of ours (a bulk string longer than `MAX_BULK`, a line
//! longer than `MAX_LINE`, an aggregate type), so a flooding master costs a few KiB of buffer,
//! never memory proportional to what it sends.

use std::fmt;

/// Longest bulk string accepted. The lock's replies are a request id, a script SHA1 (40
/// bytes) or nothing; 64 KiB leaves room for any honest server and bounds a hostile one.
pub(crate) const MAX_BULK: usize = 64 * 1024;
/// Longest simple-string / error / integer line accepted (Redis error replies are short).
pub(crate) const MAX_LINE: usize = 4 * 1024;

/// One reply, borrowed from the read buffer (no allocation per reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply<'a> {
    /// `+OK`
    Status(&'a [u8]),
    /// `-ERR ...`: the server's words.
    Error(&'a [u8]),
    /// `:1`
    Int(i64),
    /// `$n` + bytes.
    Bulk(&'a [u8]),
    /// `$-1` (or `*-1`).
    Nil,
}

impl Reply<'_> {
    /// The text of a status or error reply (lossy UTF-8).
    pub(crate) fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

impl fmt::Display for Reply<'_> {
    /// A short, printable rendering for error messages (bounded length).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Status(s) => write!(f, "+{}", clip(s)),
            Reply::Error(s) => write!(f, "-{}", clip(s)),
            Reply::Int(i) => write!(f, ":{i}"),
            Reply::Bulk(b) => write!(f, "bulk of {} bytes {:?}", b.len(), clip(b)),
            Reply::Nil => f.write_str("nil"),
        }
    }
}

/// At most 60 printable characters of `bytes`.
fn clip(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]);
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { '.' } else { c })
        .collect();
    if bytes.len() > 60 {
        out.push('…');
    }
    out
}

/// Why the bytes from a master are not a reply we accept. Always fatal for the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WireError(pub(crate) String);

/// Parses one reply from the start of `buf`: `Ok(None)` when more bytes are needed,
/// `Ok(Some((reply, consumed)))`, or an error when the bytes cannot be a reply we accept.
pub(crate) fn parse(buf: &[u8]) -> Result<Option<(Reply<'_>, usize)>, WireError> {
    let Some(&kind) = buf.first() else {
        return Ok(None);
    };
    if !matches!(kind, b'+' | b'-' | b':' | b'$' | b'*') {
        return Err(WireError(format!(
            "not a RESP reply: starts with {:?}",
            clip(&buf[..buf.len().min(16)])
        )));
    }
    let Some((line, after_line)) = line(&buf[1..])? else {
        return Ok(None);
    };
    let after_line = after_line + 1;
    match kind {
        b'+' => Ok(Some((Reply::Status(line), after_line))),
        b'-' => Ok(Some((Reply::Error(line), after_line))),
        b':' => Ok(Some((Reply::Int(number(line)?), after_line))),
        b'*' => match number(line)? {
            -1 => Ok(Some((Reply::Nil, after_line))),
            n => Err(WireError(format!("unexpected array reply of {n} elements"))),
        },
        _ => {
            let len = number(line)?;
            if len == -1 {
                return Ok(Some((Reply::Nil, after_line)));
            }
            let len =
                usize::try_from(len).map_err(|_| WireError(format!("bad bulk length {len}")))?;
            if len > MAX_BULK {
                return Err(WireError(format!(
                    "reply too large: a bulk string of {len} bytes (limit {MAX_BULK})"
                )));
            }
            let end = after_line + len;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(WireError("bulk string not terminated by CRLF".into()));
            }
            Ok(Some((Reply::Bulk(&buf[after_line..end]), end + 2)))
        }
    }
}

/// The line at the start of `buf` (without CRLF) and the offset after its CRLF.
fn line(buf: &[u8]) -> Result<Option<(&[u8], usize)>, WireError> {
    let window = &buf[..buf.len().min(MAX_LINE + 2)];
    match window.windows(2).position(|w| w == b"\r\n") {
        Some(end) => Ok(Some((&buf[..end], end + 2))),
        None if buf.len() > MAX_LINE => Err(WireError(format!(
            "reply line longer than {MAX_LINE} bytes"
        ))),
        None => Ok(None),
    }
}

fn number(line: &[u8]) -> Result<i64, WireError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| WireError(format!("not a number: {:?}", clip(line))))
}

/// Appends a command (a RESP array of bulk strings) to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
    header(out, b'*', args.len());
    for arg in args {
        header(out, b'$', arg.len());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

fn header(out: &mut Vec<u8>, kind: u8, n: usize) {
    out.push(kind);
    let mut digits = [0u8; 20];
    out.extend_from_slice(decimal(&mut digits, n as u64));
    out.extend_from_slice(b"\r\n");
}

/// The decimal digits of `n`, written into `buf` (no allocation).
pub(crate) fn decimal(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
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
    fn parses_the_reply_types_the_lock_gets() {
        assert_eq!(parse(b"+OK\r\n").unwrap(), Some((Reply::Status(b"OK"), 5)));
        assert_eq!(
            parse(b"-WRONGPASS no\r\n:1\r\n").unwrap(),
            Some((Reply::Error(b"WRONGPASS no"), 15))
        );
        assert_eq!(parse(b":-3\r\n").unwrap(), Some((Reply::Int(-3), 5)));
        assert_eq!(
            parse(b"$2\r\n17\r\n").unwrap(),
            Some((Reply::Bulk(b"17"), 8))
        );
        assert_eq!(parse(b"$-1\r\n").unwrap(), Some((Reply::Nil, 5)));
        assert_eq!(parse(b"$0\r\n\r\n").unwrap(), Some((Reply::Bulk(b""), 6)));
    }

    #[test]
    fn waits_for_incomplete_replies() {
        for partial in [
            &b""[..],
            b"+O",
            b"+OK\r",
            b"$5\r\nab",
            b"$5\r\nabcde\r",
            b":12",
        ] {
            assert_eq!(parse(partial).unwrap(), None, "{partial:?}");
        }
    }

    #[test]
    fn refuses_what_cannot_be_ours_from_the_header() {
        let huge = parse(b"$4000000000\r\n").unwrap_err();
        assert!(huge.0.contains("4000000000"), "{huge:?}");
        assert!(parse(b"*3\r\n").is_err());
        assert!(parse(b"hello").is_err());
        assert!(parse(b"$3\r\nabcXY").is_err());
        assert!(parse(b":x\r\n").is_err());
        let endless = vec![b'+'; MAX_LINE + 10];
        assert!(parse(&endless).is_err());
    }

    #[test]
    fn encodes_commands() {
        let mut out = Vec::new();
        encode(&mut out, &[b"SET", b"k", b"v"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
        out.clear();
        encode(&mut out, &[&[b'x'; 1234][..]]);
        assert!(out.starts_with(b"*1\r\n$1234\r\n"));
        let mut buf = [0u8; 20];
        assert_eq!(decimal(&mut buf, 0), b"0");
        assert_eq!(decimal(&mut buf, u64::MAX), b"18446744073709551615");
    }
}
