//! The two requests of a fenced acquire (docs/src/design.md#fencing), and the counter key they share.
//!
//! - Round 1, `FENCED_LOCK`: read the resource's counter and, in the same script (so in the
//!   same atomic step), `SET resource token NX PX ttl`. A grant answers `"<id>:<counter>"`
//!   (the counter is `0` when absent): the request's id first, so the reply is
//!   self-authenticating like every other grant; a denial answers `0`. A counter that leaves
//!   no token within the bound (not a canonical decimal, or at least [`MAX_FENCING_TOKEN`])
//!   sets nothing and answers `"<id>!<counter>"`: that master fails for that resource.
//! - Round 2, `FENCE`: if the lock key still holds this attempt's token, raise the counter to
//!   the new fencing token `t` (never lower it: a max-register), and answer the request's id;
//!   else answer `0`. A `t` above the bound is refused with an error, so no counter above the
//!   bound is ever written by this library.
//!
//! Tokens are at most [`MAX_FENCING_TOKEN`] = 2^53 − 1, so every consumer compares them
//! exactly (Lua numbers, JavaScript, JSON, doubles, SQLite's signed integers). Ignoring a
//! counter above the bound keeps tokens monotonic: no token above the bound was ever issued,
//! so such a value is damage, not a token some holder carries. Counters are compared in the
//! scripts as canonical decimal strings (length first, then bytes), not with Lua numbers.
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

/// The largest fencing token ever issued: 2^53 − 1, the largest integer every consumer
/// compares exactly (a double's 53-bit significand, JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_FENCING_TOKEN: u64 = (1 << 53) - 1;

/// Round 1: read the counter; if it leaves a token within the bound (canonical decimal, at
/// most 9007199254740990 = 2^53 − 2), set the lock key if absent and answer `id:counter`;
/// else set nothing and answer `id!counter` (its first 40 bytes).
const FENCED_LOCK_SOURCE: &str = r#"local c = redis.call("get", KEYS[2]) if c and not (c == "0" or (#c <= 16 and string.match(c, "^[1-9]%d*$") and (#c < 16 or c <= "9007199254740990"))) then return ARGV[3] .. "!" .. string.sub(c, 1, 40) end if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return ARGV[3] .. ":" .. (c or "0") end return 0"#;
/// Round 2: if the lock key still holds our token, counter = max(counter, t); a `t` above
/// 2^53 − 1 is refused, whoever sends it.
const FENCE_SOURCE: &str = r#"local t = ARGV[2] if #t > 16 or (#t == 16 and t > "9007199254740991") then return redis.error_reply("ERR fencing token " .. string.sub(t, 1, 40) .. " is above 2^53-1: refused") end if redis.call("get", KEYS[1]) == ARGV[1] then local c = redis.call("get", KEYS[2]) if not c or #c < #t or (#c == #t and c < t) then redis.call("set", KEYS[2], t) end return ARGV[3] end return 0"#;

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

/// Reads a bulk reply to round 1: `None` when it is not this request's answer
/// (`"<id>:..."` or `"<id>!..."`), else the counter, or the failure of a counter that leaves
/// no token within the bound.
pub(crate) fn parse_grant(id: &[u8], bytes: &[u8]) -> Option<Result<u64, Failure>> {
    let rest = bytes.strip_prefix(id)?;
    let (refused, counter) = match rest.split_first()? {
        (b':', counter) => (false, counter),
        (b'!', counter) => (true, counter),
        _ => return None,
    };
    match parse_counter(counter) {
        // The script refuses exactly what `parse_counter` refuses; a refusal of a counter
        // that parses would be a script out of step with this code: a failure all the same.
        Some(value) if !refused => Some(Ok(value)),
        _ => Some(Err(counter_failure(counter))),
    }
}

/// Why a master's counter fails it for this resource, and what to do about it. The key is
/// described, not quoted: causes never carry resource names.
fn counter_failure(counter: &[u8]) -> Failure {
    let key = "this resource's fencing counter on this master (key: the resource name, byte \
               0xFF, `fence`)";
    let shown = String::from_utf8_lossy(&counter[..counter.len().min(40)]);
    let cause = match canonical_decimal(counter) {
        Some(digits) if digits.parse() == Ok(MAX_FENCING_TOKEN) => format!(
            "{key} is {digits} = 2^53-1, the largest fencing token: no higher token can be \
             issued through this master for this resource"
        ),
        Some(_) if parse_counter(counter).is_some() => format!(
            "{key} is {shown}, within the bound, yet the master's script refused it: the \
             master runs a fencing script out of step with this client"
        ),
        Some(_) => format!(
            "{key} is {shown}, above 2^53-1 = {MAX_FENCING_TOKEN}, which no token ever \
             exceeded: the value is damage; delete that key on this master"
        ),
        None => format!(
            "{key} holds {shown:?}, not a decimal number: the value is damage; delete that \
             key on this master"
        ),
    };
    Failure::new(FailureKind::Server, cause)
}

/// `digits` as text when it is a canonical decimal (no sign, no leading zero).
fn canonical_decimal(digits: &[u8]) -> Option<&str> {
    let canonical = !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits == b"0" || digits[0] != b'0');
    canonical
        .then(|| std::str::from_utf8(digits).ok())
        .flatten()
}

/// A counter that leaves a token within the bound: canonical decimal, below
/// [`MAX_FENCING_TOKEN`] (so that the next token, `max + 1`, is at most the bound).
fn parse_counter(digits: &[u8]) -> Option<u64> {
    canonical_decimal(digits)?
        .parse::<u64>()
        .ok()
        .filter(|&value| value < MAX_FENCING_TOKEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_canonical_decimals_that_leave_a_token_within_2_pow_53() {
        assert_eq!(MAX_FENCING_TOKEN, 9_007_199_254_740_991);
        assert_eq!(parse_grant(b"17", b"17:0"), Some(Ok(0)));
        assert_eq!(parse_grant(b"17", b"17:42"), Some(Ok(42)));
        assert_eq!(
            parse_grant(b"17", b"17:9007199254740990"),
            Some(Ok(MAX_FENCING_TOKEN - 1))
        );
        for other in [&b"16:42"[..], b"17", b"1:7", b"x17:1", b"17?1", b"16!1"] {
            assert_eq!(parse_grant(b"17", other), None, "{other:?}");
        }
        let cause = |reply: &[u8]| match parse_grant(b"17", reply) {
            Some(Err(f)) => {
                assert_eq!(f.kind, FailureKind::Server);
                assert!(f.cause.contains("fencing counter"), "{f:?}");
                f.cause.to_string()
            }
            other => panic!("{reply:?}: {other:?}"),
        };
        for above in [
            &b"17:9007199254740992"[..],
            b"17!9007199254740992",
            b"17!18446744073709551614",
            b"17!9223372036854775808",
            b"17!1234567890123456789012345678901234567890123",
        ] {
            let cause = cause(above);
            assert!(cause.contains("above 2^53-1 = 9007199254740991"), "{cause}");
            assert!(cause.contains("delete that key"), "{cause}");
        }
        let at_bound = cause(b"17!9007199254740991");
        assert!(at_bound.contains("no higher token"), "{at_bound}");
        for garbage in [&b"17:"[..], b"17!abc", b"17:x", b"17:007", b"17!-1"] {
            let cause = cause(garbage);
            assert!(cause.contains("not a decimal number"), "{cause}");
        }
        assert!(cause(b"17!5").contains("out of step"));
    }

    #[test]
    fn the_scripts_bounds_are_the_constants() {
        // Round 1 grants only below the bound (so that max + 1 is within it); round 2 refuses
        // a token above it. The Lua literals must say the same as the constant.
        let last_counter = format!("c <= \"{}\"", MAX_FENCING_TOKEN - 1);
        assert!(
            FENCED_LOCK_SOURCE.contains(&last_counter),
            "{FENCED_LOCK_SOURCE}"
        );
        let digits = MAX_FENCING_TOKEN.to_string().len();
        assert!(FENCED_LOCK_SOURCE.contains(&format!("#c <= {digits}")));
        assert!(FENCE_SOURCE.contains(&format!("t > \"{MAX_FENCING_TOKEN}\"")));
        assert!(FENCE_SOURCE.contains(&format!("#t > {digits}")));
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
