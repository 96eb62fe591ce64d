//! The one small RESP2 codec of the tests, benchmarks and load generator: encode a command,
//! decode a reply, read whole replies from a blocking or a tokio stream.
//!
//! It talks to masters behind the client's back (checking keys, counting connections) and
//! serves purpose-built test servers (a command received is an [`Reply::Array`] of bulk
//! strings). The lock client itself speaks through its own connections, never through this.
//! Bytes are read by `redlock-resp`, the same bounded reader as the lock client's; this
//! module only builds owned values from its frames.
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

use redlock_resp::{
    encode_command, push_array_header, push_bulk, push_error, push_integer, push_nil, push_status,
    read_value, Frame, Limits,
};
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

/// What one value may claim. Far above anything these helpers expect (a test's keys, a
/// master's `INFO`), and low enough that a flooding peer cannot make a test allocate
/// gigabytes: a value over them is malformed here.
const LIMITS: Limits = Limits {
    max_line: 64 * 1024,
    max_bulk: 64 * 1024 * 1024,
    max_array: 1024 * 1024,
    max_depth: 8,
    max_value: 128 * 1024 * 1024,
};

/// The RESP encoding of a command: an array of bulk strings.
pub fn encode<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let args: Vec<&[u8]> = args.iter().map(AsRef::as_ref).collect();
    let mut out = Vec::new();
    encode_command(&mut out, &args);
    out
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
            Reply::Status(s) => push_status(out, s.as_bytes()),
            Reply::Error(e) => push_error(out, e.as_bytes()),
            Reply::Integer(n) => push_integer(out, *n),
            Reply::Nil => push_nil(out),
            Reply::Bulk(bytes) => push_bulk(out, bytes),
            Reply::Array(items) => {
                push_array_header(out, items.len());
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
    let mut frames = Vec::new();
    let Some(used) = read_value(buf, &LIMITS, |frame| frames.push(frame)).map_err(malformed)?
    else {
        return Ok(None);
    };
    let reply = owned(&mut frames.into_iter())?;
    Ok(Some((reply, used)))
}

/// The owned value whose frames come next: a whole value, so an array's elements are all
/// there (and nesting, so recursion, is bounded by `LIMITS.max_depth`).
fn owned<'a>(frames: &mut impl Iterator<Item = Frame<'a>>) -> io::Result<Reply> {
    let text = |line: &[u8]| {
        String::from_utf8(line.to_vec()).map_err(|_| malformed("a line that is not UTF-8"))
    };
    Ok(
        match frames
            .next()
            .ok_or_else(|| malformed("a value cut short"))?
        {
            Frame::Status(line) => Reply::Status(text(line)?),
            Frame::Error(line) => Reply::Error(text(line)?),
            Frame::Int(n) => Reply::Integer(n),
            Frame::Bulk(bytes) => Reply::Bulk(bytes.to_vec()),
            Frame::Nil => Reply::Nil,
            Frame::Array(n) => {
                Reply::Array((0..n).map(|_| owned(frames)).collect::<io::Result<_>>()?)
            }
        },
    )
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
            match stream.read(&mut chunk) {
                Ok(0) => return Err(closed()),
                Ok(n) => self.extend(&chunk[..n]),
                // A signal handled elsewhere in the process (a child's SIGCHLD, say) cut the
                // wait short: nothing was read, wait again.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
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
        let deep = b"*1\r\n".repeat(LIMITS.max_depth + 1);
        for (bytes, says) in [
            (&b"?x\r\n"[..], "not a RESP value: starts with \"?x..\""),
            (b":x\r\n", "not a number: \"x\""),
            (b"+caf\xff\r\n", "a line that is not UTF-8"),
            (b"$4000000000\r\n", "a bulk string of 4000000000 bytes"),
            (b"$1\r\nab\r\n", "longer than its header says"),
            (b"*4000000000\r\n", "an array of 4000000000 elements"),
            (&deep, "arrays nested more than 8 deep"),
        ] {
            let error = decode(bytes).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidData);
            assert!(error.to_string().starts_with("malformed RESP: "), "{error}");
            assert!(error.to_string().contains(says), "{bytes:?}: {error}");
        }
    }

    #[test]
    fn nesting_up_to_the_limit_decodes_into_nested_arrays() {
        let mut bytes = b"*1\r\n".repeat(LIMITS.max_depth - 1);
        bytes.extend_from_slice(b"*2\r\n:1\r\n$-1\r\n");
        let mut want = Reply::Array(vec![Reply::Integer(1), Reply::Nil]);
        for _ in 1..LIMITS.max_depth {
            want = Reply::Array(vec![want]);
        }
        assert_eq!(one(&bytes), want);
        assert_eq!(want.to_bytes(), bytes);
    }

    #[test]
    fn the_decoder_refuses_a_hostile_header_before_buffering_for_it() {
        let mut decoder = Decoder::default();
        // Claims a gigabyte, sends a few bytes: refused at once, not waited for.
        decoder.extend(b"*2\r\n$1073741824\r\nabc");
        let error = decoder.next_reply().unwrap_err();
        assert!(error.to_string().contains("1073741824 bytes"), "{error}");
        let mut decoder = Decoder::default();
        let mut nesting: &[u8] = &b"*1\r\n".repeat(1000);
        let error = decoder.read(&mut nesting).unwrap_err();
        assert!(
            error.to_string().contains("nested more than 8 deep"),
            "{error}"
        );
    }

    /// A reader whose first read is cut short by a signal, as a blocking socket read is.
    struct InterruptedOnce<'a>(bool, &'a [u8]);

    impl Read for InterruptedOnce<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if !self.0 {
                self.0 = true;
                return Err(io::ErrorKind::Interrupted.into());
            }
            Read::read(&mut self.1, buf)
        }
    }

    #[test]
    fn a_read_interrupted_by_a_signal_is_made_again() {
        let mut stream = InterruptedOnce(false, b"+PONG\r\n");
        let reply = Decoder::default().read(&mut stream).unwrap();
        assert_eq!(reply, Reply::Status("PONG".into()));
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
