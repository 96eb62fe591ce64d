//! The three requests the algorithm sends to a master, as Lua scripts that answer a grant with
//! the request's own id, and how a reply is judged.
//!
//! Why scripts for acquire too (not plain `SET NX PX`): on a pipelined connection, replies are
//! matched to requests by order alone. A master that sends one reply too many (or too few)
//! shifts every later reply onto the wrong request, and `+OK` looks the same for every SET.
//! Here a grant is the bulk string the request itself carried (a per-connection sequence
//! number), so a reply can count as a grant only if it can be nothing but this request's
//! grant; anything else fails the request and replaces the connection.

use std::sync::{Arc, LazyLock};

use crate::vote::FailureKind;

use super::failure::Failure;
use super::wire::{decimal, encode, Reply};

/// Sets the key if absent; answers the request id (granted) or 0 (held by someone).
const LOCK_SOURCE: &str = r#"if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return ARGV[3] end return 0"#;
/// Compare-and-PEXPIRE: renews only a key that still holds our token; never re-creates it.
const EXTEND_SOURCE: &str = r#"if redis.call("get", KEYS[1]) == ARGV[1] then redis.call("pexpire", KEYS[1], ARGV[2]) return ARGV[3] end return 0"#;
/// Compare-and-delete: deletes only a key that still holds our token.
const RELEASE_SOURCE: &str = r#"if redis.call("get", KEYS[1]) == ARGV[1] then redis.call("del", KEYS[1]) return ARGV[2] end return 0"#;

// redis-rs computes each script's SHA1 (the name EVALSHA calls it by).
static LOCK: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(LOCK_SOURCE));
static EXTEND: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(EXTEND_SOURCE));
static RELEASE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(RELEASE_SOURCE));

/// What a request asks of one master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// Set the key to the token if absent, with a TTL.
    Lock { ttl_ms: u64 },
    /// Compare-and-PEXPIRE.
    Extend { ttl_ms: u64 },
    /// Compare-and-delete.
    Unlock,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Lock { .. } => "acquire",
            Op::Extend { .. } => "extend",
            Op::Unlock => "release",
        }
    }
}

/// `(source, sha1)` of every script, loaded on each new connection.
pub(crate) fn all() -> [(&'static str, &'static str); 3] {
    [
        (LOCK_SOURCE, LOCK.get_hash()),
        (EXTEND_SOURCE, EXTEND.get_hash()),
        (RELEASE_SOURCE, RELEASE.get_hash()),
    ]
}

/// Appends the command of `op` on `resource`/`token`, carrying request id `id`, to `out`.
pub(crate) fn encode_request(out: &mut Vec<u8>, op: Op, resource: &str, token: &str, id: &[u8]) {
    let mut ttl = [0u8; 20];
    match op {
        Op::Lock { ttl_ms } => {
            let ttl = decimal(&mut ttl, ttl_ms);
            encode(
                out,
                &[
                    b"EVALSHA",
                    LOCK.get_hash().as_bytes(),
                    b"1",
                    resource.as_bytes(),
                    token.as_bytes(),
                    ttl,
                    id,
                ],
            );
        }
        Op::Extend { ttl_ms } => {
            let ttl = decimal(&mut ttl, ttl_ms);
            encode(
                out,
                &[
                    b"EVALSHA",
                    EXTEND.get_hash().as_bytes(),
                    b"1",
                    resource.as_bytes(),
                    token.as_bytes(),
                    ttl,
                    id,
                ],
            );
        }
        Op::Unlock => encode(
            out,
            &[
                b"EVALSHA",
                RELEASE.get_hash().as_bytes(),
                b"1",
                resource.as_bytes(),
                token.as_bytes(),
                id,
            ],
        ),
    }
}

/// How a reply counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judged {
    /// Granted (`true`) or denied (`false`).
    Answer(bool),
    /// A well-formed error reply: the request failed, the connection is fine.
    Failed(Failure),
    /// Not a reply this request can get: the request failed and the connection is replaced
    /// (replies may be shifted; the script cache may be gone).
    Broken(Failure),
}

/// Judges `reply` to request `op` that carried id `id`.
pub(crate) fn judge(op: Op, id: &[u8], reply: Reply) -> Judged {
    match reply {
        Reply::Bulk(bytes) if bytes == id => Judged::Answer(true),
        Reply::Int(0) => Judged::Answer(false),
        Reply::Error(text) if text.starts_with(b"NOSCRIPT") => Judged::Broken(Failure::new(
            FailureKind::Server,
            format!(
                "{} (the master's script cache was flushed; reconnecting reloads it)",
                Reply::text(text)
            ),
        )),
        Reply::Error(text) => Judged::Failed(server_error(Reply::text(text))),
        other => Judged::Broken(Failure::new(
            FailureKind::Protocol,
            format!(
                "unexpected reply to {}: {other} (not this request's answer; connection replaced)",
                op.name()
            ),
        )),
    }
}

/// Classifies a server error reply by its code, keeping the server's words.
pub(crate) fn server_error(text: String) -> Failure {
    let code = text.split_whitespace().next().unwrap_or("");
    let auth = matches!(code, "WRONGPASS" | "NOAUTH")
        || (code == "ERR" && text.contains("AUTH") && text.contains("password"));
    let kind = if auth {
        FailureKind::Auth
    } else {
        FailureKind::Server
    };
    Failure {
        kind,
        cause: Arc::from(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_requests_own_id_is_a_grant() {
        let op = Op::Lock { ttl_ms: 1000 };
        assert_eq!(judge(op, b"17", Reply::Bulk(b"17")), Judged::Answer(true));
        assert_eq!(judge(op, b"17", Reply::Int(0)), Judged::Answer(false));
        for stray in [
            Reply::Bulk(b"16"),
            Reply::Status(b"OK"),
            Reply::Int(1),
            Reply::Nil,
        ] {
            assert!(
                matches!(judge(op, b"17", stray), Judged::Broken(ref f) if f.kind == FailureKind::Protocol),
                "{stray:?}"
            );
        }
        assert!(matches!(
            judge(op, b"1", Reply::Error(b"NOSCRIPT No matching script")),
            Judged::Broken(_)
        ));
        match judge(op, b"1", Reply::Error(b"OOM command not allowed")) {
            Judged::Failed(f) => {
                assert_eq!(f.kind, FailureKind::Server);
                assert_eq!(&*f.cause, "OOM command not allowed");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn authentication_errors_are_named_as_such() {
        for text in [
            "WRONGPASS invalid username-password pair or user is disabled.",
            "NOAUTH Authentication required.",
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
        ] {
            assert_eq!(server_error(text.into()).kind, FailureKind::Auth, "{text}");
        }
        assert_eq!(
            server_error("NOPERM this user has no permissions".into()).kind,
            FailureKind::Server
        );
    }

    #[test]
    fn requests_carry_their_id_and_the_script_sha() {
        let mut out = Vec::new();
        encode_request(&mut out, Op::Lock { ttl_ms: 30000 }, "k", "tok", b"42");
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(LOCK.get_hash()), "{text}");
        assert!(text.ends_with("$5\r\n30000\r\n$2\r\n42\r\n"), "{text}");
    }
}
