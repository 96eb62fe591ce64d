//! One frame at a time: a scalar, or the header of an array whose elements follow as frames
//! of their own. Every length a header claims is checked against [`Limits`] before the caller
//! is asked to buffer anything for it.

use std::fmt;

/// How much one value may claim. [`read_frame`] checks `max_line` and `max_bulk`;
/// [`read_value`](crate::read_value) checks all five.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest status, error or integer line, without its CRLF.
    pub max_line: usize,
    /// Longest bulk string.
    pub max_bulk: usize,
    /// Most elements in one array.
    pub max_array: usize,
    /// Most arrays open at once (an array inside an array is depth 2); 0 refuses every
    /// array. At most [`MAX_DEPTH`].
    pub max_depth: usize,
    /// Most bytes of one whole value, headers and CRLFs included.
    pub max_value: usize,
}

/// The deepest nesting [`read_value`](crate::read_value) tracks: its stack of open arrays is
/// a fixed array of this size, so walking a value never allocates.
pub const MAX_DEPTH: usize = 32;

/// Longest bulk string in a lock reply. The lock's replies are a request id, a script SHA1
/// (40 bytes), a fencing counter or nothing; 64 KiB leaves room for any honest server and
/// bounds a hostile one.
pub const MAX_BULK: usize = 64 * 1024;

/// Longest status, error or integer line in a lock reply (Redis error replies are short).
pub const MAX_LINE: usize = 4 * 1024;

impl Limits {
    /// What [`read_reply`](crate::read_reply) accepts: a lock's replies are never arrays.
    pub const LOCK_REPLY: Limits = Limits {
        max_line: MAX_LINE,
        max_bulk: MAX_BULK,
        max_array: 0,
        max_depth: 0,
        max_value: MAX_BULK + 32,
    };
}

/// One frame, borrowed from the read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// `+OK`: the text, without CRLF.
    Status(&'a [u8]),
    /// `-ERR ...`: the server's words.
    Error(&'a [u8]),
    /// `:42`
    Int(i64),
    /// `$3\r\nabc`: the bytes.
    Bulk(&'a [u8]),
    /// `$-1` or `*-1`.
    Nil,
    /// `*2`: the header of an array; its elements are the frames that follow.
    Array(usize),
}

/// Why bytes are not a value the reader accepts: malformed, or over a limit. The connection
/// they came on is out of step and cannot be trusted further.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RespError(String);

impl RespError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        RespError(message.into())
    }
}

impl fmt::Display for RespError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RespError {}

/// Reads one frame from the start of `buf`: `Ok(None)` when more bytes are needed,
/// `Ok(Some((frame, consumed)))`, or an error as soon as the bytes cannot be a frame within
/// `limits` (a line is refused once `max_line` bytes show no CRLF, a bulk string from its
/// header).
#[inline]
pub fn read_frame<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<Option<(Frame<'a>, usize)>, RespError> {
    let Some(&kind) = buf.first() else {
        return Ok(None);
    };
    if !matches!(kind, b'+' | b'-' | b':' | b'$' | b'*') {
        return Err(RespError(format!(
            "not a RESP value: starts with {:?}",
            clip(&buf[..buf.len().min(16)])
        )));
    }
    let Some((line, after_line)) = line(&buf[1..], limits.max_line)? else {
        return Ok(None);
    };
    let after_line = after_line + 1;
    match kind {
        b'+' => Ok(Some((Frame::Status(line), after_line))),
        b'-' => Ok(Some((Frame::Error(line), after_line))),
        b':' => Ok(Some((Frame::Int(number(line)?), after_line))),
        b'*' => match length(line, "array")? {
            None => Ok(Some((Frame::Nil, after_line))),
            Some(n) => Ok(Some((Frame::Array(n), after_line))),
        },
        _ => {
            let Some(len) = length(line, "bulk")? else {
                return Ok(Some((Frame::Nil, after_line)));
            };
            if len > limits.max_bulk {
                return Err(RespError(format!(
                    "reply too large: a bulk string of {len} bytes (limit {})",
                    limits.max_bulk
                )));
            }
            let end = after_line + len;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(RespError::new(
                    "bulk string longer than its header says (no CRLF where it should end)",
                ));
            }
            Ok(Some((Frame::Bulk(&buf[after_line..end]), end + 2)))
        }
    }
}

/// The line at the start of `buf` (without CRLF) and the offset after its CRLF; only the
/// first `max_line + 2` bytes are ever scanned.
#[inline]
fn line(buf: &[u8], max_line: usize) -> Result<Option<(&[u8], usize)>, RespError> {
    let window = &buf[..buf.len().min(max_line.saturating_add(2))];
    match window.windows(2).position(|w| w == b"\r\n") {
        Some(end) => Ok(Some((&buf[..end], end + 2))),
        None if buf.len() > max_line => Err(RespError(format!(
            "reply line longer than {max_line} bytes"
        ))),
        None => Ok(None),
    }
}

fn number(line: &[u8]) -> Result<i64, RespError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| RespError(format!("not a number: {:?}", clip(line))))
}

/// A length header: `None` for -1 (nil), else a non-negative count.
fn length(line: &[u8], of: &str) -> Result<Option<usize>, RespError> {
    match number(line)? {
        -1 => Ok(None),
        n => usize::try_from(n)
            .map(Some)
            .map_err(|_| RespError(format!("bad {of} length {n}"))),
    }
}

/// At most 60 printable characters of `bytes`, for messages.
pub(crate) fn clip(bytes: &[u8]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    const ROOMY: Limits = Limits {
        max_line: 64,
        max_bulk: 64,
        max_array: 64,
        max_depth: 4,
        max_value: 1024,
    };

    #[test]
    fn reads_every_frame_type_and_says_how_much_it_took() {
        let cases: [(&[u8], Frame<'_>, usize); 9] = [
            (b"+OK\r\n", Frame::Status(b"OK"), 5),
            (b"-ERR no\r\n:1\r\n", Frame::Error(b"ERR no"), 9),
            (b":-3\r\n", Frame::Int(-3), 5),
            (b"$2\r\n17\r\n", Frame::Bulk(b"17"), 8),
            (b"$5\r\na\r\nb!\r\n", Frame::Bulk(b"a\r\nb!"), 11),
            (b"$0\r\n\r\n", Frame::Bulk(b""), 6),
            (b"$-1\r\n", Frame::Nil, 5),
            (b"*-1\r\n", Frame::Nil, 5),
            (b"*3\r\n$3\r\nSET\r\n", Frame::Array(3), 4),
        ];
        for (bytes, frame, used) in cases {
            assert_eq!(
                read_frame(bytes, &ROOMY).unwrap(),
                Some((frame, used)),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn waits_for_the_rest_of_a_frame_at_every_cut() {
        for whole in [&b"+OK\r\n"[..], b":123\r\n", b"$5\r\nabcde\r\n", b"*12\r\n"] {
            for cut in 0..whole.len() {
                assert_eq!(
                    read_frame(&whole[..cut], &ROOMY).unwrap(),
                    None,
                    "{whole:?} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn refuses_malformed_frames_naming_what_is_wrong() {
        for (bytes, says) in [
            (&b"hello"[..], "not a RESP value: starts with \"hello\""),
            (b"?x\r\n", "starts with \"?x..\""),
            (b":x\r\n", "not a number: \"x\""),
            (b"$x\r\n", "not a number: \"x\""),
            (b"$-2\r\n", "bad bulk length -2"),
            (b"*-5\r\n", "bad array length -5"),
            (b"$3\r\nabcXY", "longer than its header says"),
        ] {
            let error = read_frame(bytes, &ROOMY).unwrap_err();
            assert!(error.to_string().contains(says), "{bytes:?}: {error}");
        }
    }

    #[test]
    fn a_hostile_length_is_refused_from_its_header_alone() {
        let huge = read_frame(b"$4000000000\r\n", &Limits::LOCK_REPLY).unwrap_err();
        assert_eq!(
            huge.to_string(),
            "reply too large: a bulk string of 4000000000 bytes (limit 65536)"
        );
        assert!(
            read_frame(format!("${}\r\n", MAX_BULK).as_bytes(), &Limits::LOCK_REPLY)
                .unwrap()
                .is_none()
        );
        let over = format!("${}\r\n", MAX_BULK + 1);
        assert!(read_frame(over.as_bytes(), &Limits::LOCK_REPLY).is_err());
        let past_i64 = read_frame(b"$99999999999999999999\r\n", &ROOMY).unwrap_err();
        assert!(past_i64.to_string().contains("not a number"), "{past_i64}");
    }

    #[test]
    fn a_line_without_end_is_refused_once_it_passes_the_limit() {
        let mut endless = vec![b'+'; ROOMY.max_line + 1];
        assert_eq!(read_frame(&endless, &ROOMY).unwrap(), None);
        endless.push(b'x');
        let error = read_frame(&endless, &ROOMY).unwrap_err();
        assert_eq!(error.to_string(), "reply line longer than 64 bytes");
        let mut longest = vec![b'+'; ROOMY.max_line + 1];
        longest.extend_from_slice(b"\r\n");
        assert!(
            matches!(read_frame(&longest, &ROOMY).unwrap(), Some((Frame::Status(s), _)) if s.len() == 64)
        );
    }

    #[test]
    fn messages_show_at_most_sixty_printable_characters() {
        assert_eq!(clip(b"a\r\nb"), "a..b");
        let long = clip(&[b'x'; 100]);
        assert_eq!(long.chars().count(), 61);
        assert!(long.ends_with('…'));
    }
}
