//! RESP2, the Redis wire protocol, read with every length bounded and written into the
//! caller's buffer: the one parser of the Redlock Suite.
//!
//! A peer is not always an honest Redis. Every reader here refuses bytes as soon as a header
//! shows they break the [`Limits`] (a bulk string or a line too long, an array too long or
//! nested too deep, a value too large), so a flooding peer costs a bounded buffer, never memory
//! in proportion to what it sends.
//!
//! - [`read_reply`]: the lock client's reader. One reply of the kinds a lock's commands get
//!   (status, error, integer, bulk string, nil), borrowed from the buffer; arrays refused.
//! - [`read_frame`]: one frame (a scalar or an array's header) under any [`Limits`].
//! - [`read_value`]: one whole value, arrays included, frame by frame, with no allocation;
//!   owned decoders build on it.
//! - [`encode_command`] and the `push_*` functions: commands and replies.
//!
//! ```
//! use redlock_resp::{read_value, Frame, Limits};
//!
//! let limits = Limits {
//!     max_line: 1024,
//!     max_bulk: 1024,
//!     max_array: 16,
//!     max_depth: 2,
//!     max_value: 4096,
//! };
//! let mut frames = Vec::new();
//! let used = read_value(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", &limits, |f| frames.push(f)).unwrap();
//! assert_eq!(used, Some(20));
//! assert_eq!(frames, [Frame::Array(2), Frame::Bulk(b"GET"), Frame::Bulk(b"k")]);
//! ```

mod encode;
mod frame;
mod reply;
mod value;

pub use encode::{
    decimal, encode_command, push_array_header, push_bulk, push_bulk_parts, push_error,
    push_integer, push_nil, push_status,
};
pub use frame::{read_frame, Frame, Limits, RespError, MAX_BULK, MAX_DEPTH, MAX_LINE};
pub use reply::{read_reply, Reply};
pub use value::read_value;

/// Compiles this crate's README (its crates.io page) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
