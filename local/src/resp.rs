//! The one small RESP2 codec of the tests, benchmarks and load generator: encode a command,
//! decode a reply, read whole replies from a blocking or a tokio stream.
//!
//! It talks to masters behind the client's back (checking keys, counting connections) and
//! serves purpose-built test servers (a command received is an [`Reply::Array`] of bulk
//! strings). The lock client itself speaks through redis-rs, never through this.
//!
//! ```
//! use redlock_local::resp::{self, Decoder, Reply};
//!
//! assert_eq!(resp::encode(&["GET", "k"]), b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
//! let mut decoder = Decoder::default();
//! decoder.extend(b"+OK\r\n:3");
//! assert_eq!(decoder.next_reply().unwrap(), Some(Reply::Status("OK".into())));
//! assert_eq!(decoder.next_reply().unwrap(), None); // ":3" still needs its "\r\n"
//! ```

use std::fmt;
use std::io::{self, Read};

use tokio::io::{AsyncRead, AsyncReadExt};

/// One RESP2 value: a reply, or (an array of bulk strings) a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`
    Status(String),
    /// `-ERR message`
    Error(String),
    /// `:42`
    Integer(i64),
    /// `$3\r\nabc`
    Bulk(Vec<u8>),
    /// `$-1` or `*-1`
    Nil,
    /// `*2\r\n...`
    Array(Vec<Reply>),
}

/// Largest bulk string or array length accepted: a larger header is malformed here (these
/// helpers never expect one), so a flooding peer cannot make a test allocate gigabytes.
const MAX_LEN: usize = 64 * 1024 * 1024;

/// The RESP encoding of a command: an array of bulk strings.
pub fn encode<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    Reply::Array(
        args.iter()
            .map(|a| Reply::Bulk(a.as_ref().to_vec()))
            .collect(),
    )
    .to_bytes()
}

impl Reply {
    /// A bulk string reply.
    pub fn bulk(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply::Bulk(bytes.into())
    }

    /// Its RESP encoding (what a server sends).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out);
        out
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Status(s) => out.extend_from_slice(format!("+{s}\r\n").as_bytes()),
            Reply::Error(e) => out.extend_from_slice(format!("-{e}\r\n").as_bytes()),
            Reply::Integer(n) => out.extend_from_slice(format!(":{n}\r\n").as_bytes()),
            Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
            Reply::Bulk(bytes) => {
                out.extend_from_slice(format!("${}\r\n", bytes.len()).as_bytes());
                out.extend_from_slice(bytes);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Array(items) => {
                out.extend_from_slice(format!("*{}\r\n", items.len()).as_bytes());
                items.iter().for_each(|item| item.write_to(out));
            }
        }
    }

    /// The number of an integer reply.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            Reply::Integer(n) => Some(*n),
            _ => None,
        }
    }

    /// The text of a status reply or of a UTF-8 bulk string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Reply::Status(s) => Some(s),
            Reply::Bulk(bytes) => std::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    /// The arguments of a command (an array of bulk strings), e.g. as a test server reads it.
    pub fn into_command(self) -> Option<Vec<Vec<u8>>> {
        let Reply::Array(items) = self else {
            return None;
        };
        items
            .into_iter()
            .map(|item| match item {
                Reply::Bulk(bytes) => Some(bytes),
                _ => None,
            })
            .collect()
    }
}

/// Readable form for messages: `OK`, `(error) ERR ...`, `42`, `"value"`, `(nil)`, `[...]`.
impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Status(s) => f.write_str(s),
            Reply::Error(e) => write!(f, "(error) {e}"),
            Reply::Integer(n) => write!(f, "{n}"),
            Reply::Bulk(bytes) => write!(f, "{:?}", String::from_utf8_lossy(bytes)),
            Reply::Nil => f.write_str("(nil)"),
            Reply::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
        }
    }
}

fn malformed(what: impl fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed RESP: {what}"),
    )
}

/// Decodes the first whole value in `buf`: `Ok(None)` while it is incomplete, else the value
/// and how many bytes it took.
pub fn decode(buf: &[u8]) -> io::Result<Option<(Reply, usize)>> {
    decode_at(buf, 0)
}

fn decode_at(buf: &[u8], at: usize) -> io::Result<Option<(Reply, usize)>> {
    let Some(line_len) = buf.get(at..).and_then(find_crlf) else {
        return Ok(None);
    };
    let Some(&kind) = buf.get(at) else {
        return Ok(None);
    };
    let line = &buf[at + 1..at + line_len];
    let next = at + line_len + 2;
    let text = || {
        std::str::from_utf8(line)
            .map(str::to_owned)
            .map_err(|_| malformed("a line that is not UTF-8"))
    };
    let number = || -> io::Result<i64> {
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                malformed(format!(
                    "{:?} is not a number",
                    String::from_utf8_lossy(line)
                ))
            })
    };
    let length = || -> io::Result<Option<usize>> {
        match number()? {
            -1 => Ok(None),
            n if (0..=MAX_LEN as i64).contains(&n) => Ok(Some(n as usize)),
            n => Err(malformed(format!("length {n}"))),
        }
    };
    match kind {
        b'+' => Ok(Some((Reply::Status(text()?), next))),
        b'-' => Ok(Some((Reply::Error(text()?), next))),
        b':' => Ok(Some((Reply::Integer(number()?), next))),
        b'$' => {
            let Some(len) = length()? else {
                return Ok(Some((Reply::Nil, next)));
            };
            let end = next + len;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(malformed("a bulk string longer than its header says"));
            }
            Ok(Some((Reply::Bulk(buf[next..end].to_vec()), end + 2)))
        }
        b'*' => {
            let Some(count) = length()? else {
                return Ok(Some((Reply::Nil, next)));
            };
            let mut items = Vec::with_capacity(count.min(1024));
            let mut at = next;
            for _ in 0..count {
                let Some((item, after)) = decode_at(buf, at)? else {
                    return Ok(None);
                };
                items.push(item);
                at = after;
            }
            Ok(Some((Reply::Array(items), at)))
        }
        other => Err(malformed(format!("type byte {:?}", char::from(other)))),
    }
}

fn find_crlf(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}

/// Whole values out of a byte stream: keeps what follows a value for the next one.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

impl Decoder {
    /// Adds bytes received.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The next whole value received, if there is one yet.
    pub fn next_reply(&mut self) -> io::Result<Option<Reply>> {
        Ok(decode(&self.pending)?.map(|(reply, used)| {
            self.pending.drain(..used);
            reply
        }))
    }

    /// Reads from `stream` until a whole value is there; an error if it fails or ends first.
    pub fn read(&mut self, stream: &mut impl Read) -> io::Result<Reply> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(reply) = self.next_reply()? {
                return Ok(reply);
            }
            match stream.read(&mut chunk)? {
                0 => return Err(closed()),
                n => self.extend(&chunk[..n]),
            }
        }
    }

    /// [`read`](Self::read) on a tokio stream.
    pub async fn read_async(&mut self, stream: &mut (impl AsyncRead + Unpin)) -> io::Result<Reply> {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            if let Some(reply) = self.next_reply()? {
                return Ok(reply);
            }
            match stream.read(&mut chunk).await? {
                0 => return Err(closed()),
                n => self.extend(&chunk[..n]),
            }
        }
    }
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the connection closed before a whole RESP value",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> Reply {
        let (reply, used) = decode(bytes).unwrap().expect("whole");
        assert_eq!(used, bytes.len(), "{bytes:?}");
        reply
    }

    #[test]
    fn every_type_decodes_and_encodes_back() {
        let samples: [(&[u8], Reply); 7] = [
            (b"+PONG\r\n", Reply::Status("PONG".into())),
            (b"-ERR no\r\n", Reply::Error("ERR no".into())),
            (b":-17\r\n", Reply::Integer(-17)),
            (b"$5\r\na\r\nb!\r\n", Reply::bulk("a\r\nb!")),
            (b"$0\r\n\r\n", Reply::bulk("")),
            (b"$-1\r\n", Reply::Nil),
            (
                b"*2\r\n:1\r\n*1\r\n$1\r\nx\r\n",
                Reply::Array(vec![
                    Reply::Integer(1),
                    Reply::Array(vec![Reply::bulk("x")]),
                ]),
            ),
        ];
        for (bytes, reply) in samples {
            assert_eq!(one(bytes), reply);
            assert_eq!(reply.to_bytes(), bytes);
        }
        assert_eq!(one(b"*-1\r\n"), Reply::Nil);
    }

    #[test]
    fn an_incomplete_value_waits_at_every_cut() {
        let whole = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n";
        for cut in 0..whole.len() {
            assert_eq!(decode(&whole[..cut]).unwrap(), None, "cut at {cut}");
        }
        let args = one(whole).into_command().expect("a command");
        assert_eq!(
            args,
            [b"SET".to_vec(), b"k".to_vec(), b"0123456789".to_vec()]
        );
        assert_eq!(encode(&["SET", "k", "0123456789"]), whole);
    }

    #[test]
    fn malformed_input_is_an_error_naming_it() {
        for (bytes, says) in [
            (&b"?x\r\n"[..], "type byte '?'"),
            (b":x\r\n", "\"x\" is not a number"),
            (b"$4000000000\r\n", "length 4000000000"),
            (b"$1\r\nab\r\n", "longer than its header"),
        ] {
            let error = decode(bytes).unwrap_err();
            assert!(error.to_string().contains(says), "{bytes:?}: {error}");
        }
    }

    #[test]
    fn the_decoder_keeps_what_follows_a_value() {
        let mut decoder = Decoder::default();
        decoder.extend(b"+OK\r\n:0\r\n$3\r\nab");
        assert_eq!(
            decoder.next_reply().unwrap(),
            Some(Reply::Status("OK".into()))
        );
        assert_eq!(decoder.next_reply().unwrap(), Some(Reply::Integer(0)));
        assert_eq!(decoder.next_reply().unwrap(), None);
        let mut rest: &[u8] = b"c\r\n";
        assert_eq!(decoder.read(&mut rest).unwrap(), Reply::bulk("abc"));
        let error = decoder.read(&mut rest).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn accessors_and_display() {
        assert_eq!(Reply::Integer(3).as_integer(), Some(3));
        assert_eq!(Reply::Status("OK".into()).as_integer(), None);
        assert_eq!(Reply::bulk("v").as_text(), Some("v"));
        assert_eq!(Reply::Nil.as_text(), None);
        assert_eq!(Reply::Integer(1).into_command(), None);
        let shown = Reply::Array(vec![
            Reply::Nil,
            Reply::bulk("v"),
            Reply::Error("ERR x".into()),
        ]);
        assert_eq!(shown.to_string(), "[(nil), \"v\", (error) ERR x]");
    }
}
