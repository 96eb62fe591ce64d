//! The replies a lock's commands can get, and nothing else: the lock client's reader.

use std::fmt;

use crate::frame::{clip, read_frame, Frame, Limits, RespError};

/// One lock reply, borrowed from the read buffer (no allocation per reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
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
    pub fn text(bytes: &[u8]) -> String {
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

/// Reads one lock reply from the start of `buf`: `Ok(None)` when more bytes are needed,
/// `Ok(Some((reply, consumed)))`, or an error as soon as the header shows the bytes cannot be
/// one (an array, a bulk string over [`MAX_BULK`](crate::MAX_BULK), a line over
/// [`MAX_LINE`](crate::MAX_LINE)): a flooding master costs a few KiB of buffer, never memory
/// in proportion to what it sends.
#[inline]
pub fn read_reply(buf: &[u8]) -> Result<Option<(Reply<'_>, usize)>, RespError> {
    let Some((frame, used)) = read_frame(buf, &Limits::LOCK_REPLY)? else {
        return Ok(None);
    };
    let reply = match frame {
        Frame::Status(s) => Reply::Status(s),
        Frame::Error(s) => Reply::Error(s),
        Frame::Int(i) => Reply::Int(i),
        Frame::Bulk(b) => Reply::Bulk(b),
        Frame::Nil => Reply::Nil,
        Frame::Array(n) => {
            return Err(RespError::new(format!(
                "unexpected array reply of {n} elements"
            )))
        }
    };
    Ok(Some((reply, used)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MAX_BULK, MAX_LINE};

    #[test]
    fn reads_the_reply_types_the_lock_gets() {
        assert_eq!(
            read_reply(b"+OK\r\n").unwrap(),
            Some((Reply::Status(b"OK"), 5))
        );
        assert_eq!(
            read_reply(b"-WRONGPASS no\r\n:1\r\n").unwrap(),
            Some((Reply::Error(b"WRONGPASS no"), 15))
        );
        assert_eq!(read_reply(b":-3\r\n").unwrap(), Some((Reply::Int(-3), 5)));
        assert_eq!(
            read_reply(b"$2\r\n17\r\n").unwrap(),
            Some((Reply::Bulk(b"17"), 8))
        );
        assert_eq!(read_reply(b"$-1\r\n").unwrap(), Some((Reply::Nil, 5)));
        assert_eq!(read_reply(b"*-1\r\n").unwrap(), Some((Reply::Nil, 5)));
        assert_eq!(
            read_reply(b"$0\r\n\r\n").unwrap(),
            Some((Reply::Bulk(b""), 6))
        );
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
            assert_eq!(read_reply(partial).unwrap(), None, "{partial:?}");
        }
    }

    #[test]
    fn refuses_what_cannot_be_a_lock_reply_from_the_header() {
        let huge = read_reply(b"$4000000000\r\n").unwrap_err();
        assert!(huge.to_string().contains("4000000000"), "{huge}");
        assert!(huge.to_string().contains("reply too large"), "{huge}");
        let over = format!("${}\r\n", MAX_BULK + 1);
        assert!(read_reply(over.as_bytes()).is_err());
        for array in [&b"*3\r\n"[..], b"*0\r\n", b"*1\r\n:1\r\n"] {
            let error = read_reply(array).unwrap_err();
            assert!(
                error.to_string().starts_with("unexpected array reply of"),
                "{error}"
            );
        }
        assert!(read_reply(b"hello").is_err());
        assert!(read_reply(b"$3\r\nabcXY").is_err());
        assert!(read_reply(b":x\r\n").is_err());
        let endless = vec![b'+'; MAX_LINE + 10];
        assert!(read_reply(&endless).is_err());
    }

    #[test]
    fn display_is_short_and_printable() {
        assert_eq!(Reply::Status(b"OK").to_string(), "+OK");
        assert_eq!(Reply::Error(b"ERR x\r\n").to_string(), "-ERR x..");
        assert_eq!(Reply::Int(-7).to_string(), ":-7");
        assert_eq!(Reply::Bulk(b"17").to_string(), "bulk of 2 bytes \"17\"");
        assert_eq!(Reply::Nil.to_string(), "nil");
        let long = Reply::Bulk(&[b'y'; 500]).to_string();
        assert!(long.len() < 100, "{long}");
        assert_eq!(Reply::text(b"caf\xff"), "caf\u{fffd}");
    }
}
