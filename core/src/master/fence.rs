//! The two requests of a fenced acquire (DESIGN §3a), and the counter key they share.
//!
//! - Round 1, `FENCED_LOCK`: `SET resource token NX PX ttl` and, in the same script (so in the
//!   same atomic step), read the resource's counter. A grant answers `"<id>:<counter>"` (the
//!   counter is `0` when absent): the request's id first, so the reply is self-authenticating
//!   like every other grant; a denial answers `0`.
//! - Round 2, `FENCE`: if the lock key still holds this attempt's token, raise the counter to
//!   the new fencing token `t` (never lower it: a max-register), and answer the request's id;
//!   else answer `0`.
//!
//! Counters are compared as canonical decimal strings (length first, then bytes), not with
//! Lua numbers: those are doubles, exact only below 2^53, and a counter is a `u64`.
//!
//! The counter key of resource `R` is the bytes of `R` followed by `0xFF` and `fence`. A
//! resource name is UTF-8 on every surface (Rust `&str`, C checked with `utf8_arg`, Python
//! `str`), and the byte `0xFF` never occurs in UTF-8, so no counter key is any resource's lock
//! key, and two resources never share a counter (the `0xFF` marks where the name ends). The
//! name comes first so that an ACL restricting a user to `~orders:*` covers the counter of
//! `orders:42` too. Counters have no TTL: one small key per resource ever fenced.

use std::sync::LazyLock;

use redlock_resp::{decimal, push_array_header, push_bulk, push_bulk_parts};

use crate::vote::FailureKind;

use crate::answer::Failure;

/// What follows a resource's name in its counter key.
pub(crate) const COUNTER_SUFFIX: &[u8] = b"\xfffence";

/// Round 1: set the lock key if absent and, in the same step, read the counter.
const FENCED_LOCK_SOURCE: &str = r#"if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return ARGV[3] .. ":" .. (redis.call("get", KEYS[2]) or "0") end return 0"#;
/// Round 2: if the lock key still holds our token, counter = max(counter, t).
const FENCE_SOURCE: &str = r#"if redis.call("get", KEYS[1]) == ARGV[1] then local c = redis.call("get", KEYS[2]) if not c or #c < #ARGV[2] or (#c == #ARGV[2] and c < ARGV[2]) then redis.call("set", KEYS[2], ARGV[2]) end return ARGV[3] end return 0"#;

static FENCED_LOCK: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(FENCED_LOCK_SOURCE));
static FENCE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(FENCE_SOURCE));

/// `(source, sha1)` of the fencing scripts, loaded on each new connection with the others.
pub(crate) fn scripts() -> [(&'static str, &'static str); 2] {
    [
        (FENCED_LOCK_SOURCE, FENCED_LOCK.get_hash()),
        (FENCE_SOURCE, FENCE.get_hash()),
    ]
}

/// The key under which every master keeps the fencing counter of `resource`: the name's
/// bytes, then `0xFF` (a byte no UTF-8 name contains) and `fence`. It never expires (one small
/// key per resource ever fenced); deleting it, or a master restarting without its data, can
/// make later tokens lower.
pub fn counter_key(resource: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(resource.len() + COUNTER_SUFFIX.len());
    key.extend_from_slice(resource.as_bytes());
    key.extend_from_slice(COUNTER_SUFFIX);
    key
}

/// Appends `EVALSHA sha 2 resource counter-key token value id` to `out` without building the
/// counter key apart: it is written as the name's bytes followed by the suffix.
fn encode_script(
    out: &mut Vec<u8>,
    sha: &str,
    resource: &str,
    token: &str,
    value: &[u8],
    id: &[u8],
) {
    push_array_header(out, 8);
    for arg in [
        b"EVALSHA".as_slice(),
        sha.as_bytes(),
        b"2",
        resource.as_bytes(),
    ] {
        push_bulk(out, arg);
    }
    push_bulk_parts(out, &[resource.as_bytes(), COUNTER_SUFFIX]);
    for arg in [token.as_bytes(), value, id] {
        push_bulk(out, arg);
    }
}

/// Appends round 1 of a fenced acquire.
pub(crate) fn encode_fenced_lock(
    out: &mut Vec<u8>,
    ttl_ms: u64,
    resource: &str,
    token: &str,
    id: &[u8],
) {
    let mut ttl = [0u8; 20];
    let ttl = decimal(&mut ttl, ttl_ms);
    encode_script(out, FENCED_LOCK.get_hash(), resource, token, ttl, id);
}

/// Appends round 2 of a fenced acquire: raise the counter to `value`.
pub(crate) fn encode_fence(out: &mut Vec<u8>, value: u64, resource: &str, token: &str, id: &[u8]) {
    let mut digits = [0u8; 20];
    let value = decimal(&mut digits, value);
    encode_script(out, FENCE.get_hash(), resource, token, value, id);
}

/// Reads a bulk reply to round 1: `None` when it is not this request's grant (`"<id>:..."`),
/// else the counter, or the failure of a counter that is not one.
pub(crate) fn parse_grant(id: &[u8], bytes: &[u8]) -> Option<Result<u64, Failure>> {
    let counter = bytes.strip_prefix(id)?.strip_prefix(b":")?;
    Some(parse_counter(counter).ok_or_else(|| {
        Failure::new(
            FailureKind::Server,
            format!(
                "the fencing counter of this resource holds {:?}, not a decimal number below \
                 2^64 - 1: fix or delete that key",
                String::from_utf8_lossy(&counter[..counter.len().min(40)])
            ),
        )
    }))
}

/// A counter as the scripts store it: canonical decimal, below `u64::MAX` (so that the next
/// token, `max + 1`, always exists).
fn parse_counter(digits: &[u8]) -> Option<u64> {
    let canonical = !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits == b"0" || digits[0] != b'0');
    if !canonical {
        return None;
    }
    std::str::from_utf8(digits)
        .ok()?
        .parse::<u64>()
        .ok()
        .filter(|&value| value < u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_canonical_decimals_below_the_largest_u64() {
        assert_eq!(parse_grant(b"17", b"17:0"), Some(Ok(0)));
        assert_eq!(parse_grant(b"17", b"17:42"), Some(Ok(42)));
        assert_eq!(
            parse_grant(b"17", b"17:18446744073709551614"),
            Some(Ok(u64::MAX - 1))
        );
        for other in [&b"16:42"[..], b"17", b"1:7", b"x17:1"] {
            assert_eq!(parse_grant(b"17", other), None, "{other:?}");
        }
        for garbage in [
            &b"17:"[..],
            b"17:x",
            b"17:007",
            b"17:-1",
            b"17:18446744073709551615",
        ] {
            match parse_grant(b"17", garbage) {
                Some(Err(f)) => assert!(f.cause.contains("fencing counter"), "{f:?}"),
                other => panic!("{garbage:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_counter_key_follows_the_name_with_a_byte_utf8_never_has() {
        assert_eq!(counter_key("orders:42"), b"orders:42\xfffence");
        assert!(std::str::from_utf8(&counter_key("é")).is_err());
        let mut out = Vec::new();
        encode_fence(&mut out, 7, "k", "tok", b"9");
        let expected = format!(
            "*8\r\n$7\r\nEVALSHA\r\n$40\r\n{}\r\n$1\r\n2\r\n$1\r\nk\r\n$7\r\nk\u{0}fence\r\n\
             $3\r\ntok\r\n$1\r\n7\r\n$1\r\n9\r\n",
            FENCE.get_hash()
        )
        .into_bytes();
        // The 0xFF byte cannot sit in a Rust string literal: patch it in.
        let mut expected = expected;
        let at = expected.windows(6).position(|w| w == b"\0fence").unwrap();
        expected[at] = 0xff;
        assert_eq!(out, expected);
    }
}
