//! The three requests the algorithm sends to a master, and how their replies are judged.
//!
//! On a pipelined connection, replies are matched to requests by order alone. A master that
//! sends one reply too many (or too few) shifts every later reply onto the wrong request, and
//! `+OK` looks the same for every SET. So every request carries its own id (a per-connection
//! sequence number), and a reply counts as a grant only if it can be nothing but this
//! request's grant; anything else fails the request and replaces the connection:
//!
//! - acquire is the plain `SET resource token NX PX ttl`, followed in the same write by
//!   `ECHO id`. A grant is `+OK` immediately followed by the echo of this request's id. A
//!   shifted stream puts another reply in the echo's place, which fails the request. Two plain
//!   commands cost a master less CPU than a script (docs/src/benchmarks.md, "Acquire without
//!   a script").
//! - extend and release compare the token first. Where the master has a command for that
//!   (`server.rs`: `DELIFEQ`, `DELEX … IFEQ`, `SET … IFEQ`), that command is sent followed by
//!   `ECHO id`, judged like an acquire; elsewhere (Redis 7) they are Lua scripts that answer a
//!   grant with the request's id.

use std::sync::{Arc, LazyLock};

use redlock_resp::{decimal, encode_command, Reply};

use crate::vote::FailureKind;

use super::server::{ExtendCommand, MasterServer, ReleaseCommand};
use crate::answer::Failure;

/// Compare-and-PEXPIRE: renews only a key that still holds our token; never re-creates it.
const EXTEND_SOURCE: &str = r#"if redis.call("get", KEYS[1]) == ARGV[1] then redis.call("pexpire", KEYS[1], ARGV[2]) return ARGV[3] end return 0"#;
/// Compare-and-delete: deletes only a key that still holds our token.
const RELEASE_SOURCE: &str = r#"if redis.call("get", KEYS[1]) == ARGV[1] then redis.call("del", KEYS[1]) return ARGV[2] end return 0"#;

// redis-rs computes each script's SHA1 (the name EVALSHA calls it by).
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
    /// Round 1 of a fenced acquire: set if absent and read the counter (`fence.rs`).
    FencedLock { ttl_ms: u64 },
    /// Round 2 of a fenced acquire: raise the counter to `value` while holding the key.
    Fence { value: u64 },
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Lock { .. } => "acquire",
            Op::Extend { .. } => "extend",
            Op::Unlock => "release",
            Op::FencedLock { .. } => "fenced acquire",
            Op::Fence { .. } => "fence",
        }
    }
}

/// `(source, sha1)` of every script, loaded on each new connection.
pub(crate) fn all() -> [(&'static str, &'static str); 4] {
    let [fenced_lock, fence] = super::fence::scripts();
    [
        (EXTEND_SOURCE, EXTEND.get_hash()),
        (RELEASE_SOURCE, RELEASE.get_hash()),
        fenced_lock,
        fence,
    ]
}

/// The command of a request answered in two replies (the command's, then the `ECHO` of the
/// request's id): how its first reply counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lead {
    /// Acquire's `SET NX PX`: `+OK` or nil.
    SetNx,
    /// Extend's `SET … IFEQ … PX`: `+OK` or nil (not ours, or gone).
    SetIfEq,
    /// Release's `DELIFEQ` or `DELEX … IFEQ`: `:1` or `:0`.
    DelIfEq,
}

impl Lead {
    /// The native command a Lua-free extend or release led with on `server` (`None` for an
    /// acquire's `SET NX`, which has no script to fall back to).
    pub(crate) fn native_command(self, server: &MasterServer) -> Option<&'static str> {
        match (self, server.release) {
            (Lead::SetNx, _) => None,
            (Lead::SetIfEq, _) => Some("SET"),
            (Lead::DelIfEq, ReleaseCommand::DelExIfEq) => Some("DELEX"),
            (Lead::DelIfEq, _) => Some("DELIFEQ"),
        }
    }

    fn op_name(self) -> &'static str {
        match self {
            Lead::SetNx => "acquire",
            Lead::SetIfEq => "extend",
            Lead::DelIfEq => "release",
        }
    }
}

/// Appends the command of `op` on `resource`/`token`, carrying request id `id`, to `out`,
/// in the commands `server` takes; returns its [`Lead`] when it is answered in two replies.
pub(crate) fn encode_request(
    out: &mut Vec<u8>,
    op: Op,
    server: &MasterServer,
    resource: &str,
    token: &str,
    id: &[u8],
) -> Option<Lead> {
    let mut ttl = [0u8; 20];
    let (key, value) = (resource.as_bytes(), token.as_bytes());
    let lead = match (op, server.extend, server.release) {
        (Op::Lock { ttl_ms }, _, _) => {
            let ttl = decimal(&mut ttl, ttl_ms);
            encode_command(out, &[b"SET", key, value, b"NX", b"PX", ttl]);
            Lead::SetNx
        }
        (Op::Extend { ttl_ms }, ExtendCommand::SetIfEq, _) => {
            let ttl = decimal(&mut ttl, ttl_ms);
            encode_command(out, &[b"SET", key, value, b"IFEQ", value, b"PX", ttl]);
            Lead::SetIfEq
        }
        (Op::Unlock, _, ReleaseCommand::DelIfEq) => {
            encode_command(out, &[b"DELIFEQ", key, value]);
            Lead::DelIfEq
        }
        (Op::Unlock, _, ReleaseCommand::DelExIfEq) => {
            encode_command(out, &[b"DELEX", key, b"IFEQ", value]);
            Lead::DelIfEq
        }
        (Op::Extend { ttl_ms }, ExtendCommand::Script, _) => {
            let ttl = decimal(&mut ttl, ttl_ms);
            let sha = EXTEND.get_hash().as_bytes();
            encode_command(out, &[b"EVALSHA", sha, b"1", key, value, ttl, id]);
            return None;
        }
        (Op::Unlock, _, ReleaseCommand::Script) => {
            let sha = RELEASE.get_hash().as_bytes();
            encode_command(out, &[b"EVALSHA", sha, b"1", key, value, id]);
            return None;
        }
        (Op::FencedLock { ttl_ms }, _, _) => {
            super::fence::encode_fenced_lock(out, ttl_ms, resource, token, id);
            return None;
        }
        (Op::Fence { value }, _, _) => {
            super::fence::encode_fence(out, value, resource, token, id);
            return None;
        }
    };
    encode_command(out, &[b"ECHO", id]);
    Some(lead)
}

/// How a reply counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judged {
    /// Granted (`true`) or denied (`false`).
    Answer(bool),
    /// Granted, with the resource's fencing counter read in the same step (round 1 of a
    /// fenced acquire).
    Counted(u64),
    /// A well-formed error reply: the request failed, the connection is fine.
    Failed(Failure),
    /// Not a reply this request can get: the request failed and the connection is replaced
    /// (replies may be shifted; the script cache may be gone).
    Broken(Failure),
    /// The master refused the native command itself (renamed, unknown, denied by an ACL):
    /// the request is sent again with the script, which does the same work.
    Refused(Failure),
}

/// What the leading command of a two-reply request answered (an acquire's `SET`, a
/// Lua-free extend or release). It counts only once the `ECHO` after it has shown that the
/// two replies are this request's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LeadReply {
    /// Done: the key was set (`+OK`) or deleted (`:1`).
    Done,
    /// Not done: the key is held by another (acquire), not ours or gone (extend, release).
    NotDone,
    /// A well-formed error reply (`OOM`, `NOPERM`, ...).
    Error(Failure),
}

/// Judges the first reply of a two-reply request led by `lead`; `Err` when that command
/// never answers so.
pub(crate) fn judge_lead(lead: Lead, reply: Reply) -> Result<LeadReply, Failure> {
    match (lead, reply) {
        (Lead::SetNx | Lead::SetIfEq, Reply::Status(b"OK")) | (Lead::DelIfEq, Reply::Int(1)) => {
            Ok(LeadReply::Done)
        }
        (Lead::SetNx | Lead::SetIfEq, Reply::Nil) | (Lead::DelIfEq, Reply::Int(0)) => {
            Ok(LeadReply::NotDone)
        }
        (_, Reply::Error(text)) => Ok(LeadReply::Error(server_error(Reply::text(text)))),
        (lead, other) => Err(not_this_requests(lead.op_name(), other)),
    }
}

/// Judges the second reply of a two-reply request led by `lead` (its `ECHO`), given what the
/// leading command answered.
pub(crate) fn judge_echo(lead: Lead, id: &[u8], reply: Reply, set: LeadReply) -> Judged {
    match reply {
        Reply::Bulk(bytes) if bytes == id => match set {
            LeadReply::Done => Judged::Answer(true),
            LeadReply::NotDone => Judged::Answer(false),
            LeadReply::Error(failure) if lead != Lead::SetNx && is_refusal(&failure.cause) => {
                Judged::Refused(failure)
            }
            LeadReply::Error(failure) => Judged::Failed(failure),
        },
        // The ECHO itself refused (e.g. an ACL without it): the SET cannot be confirmed.
        Reply::Error(text) => Judged::Failed(server_error(Reply::text(text))),
        other => Judged::Broken(not_this_requests(lead.op_name(), other)),
    }
}

fn not_this_requests(op: &str, reply: Reply) -> Failure {
    Failure::new(
        FailureKind::Protocol,
        format!(
            "unexpected reply to {op}: {reply} (not this request's answer; connection replaced)"
        ),
    )
}

/// Judges `reply` to a script request `op` (extend, release) that carried id `id`.
pub(crate) fn judge(op: Op, id: &[u8], reply: Reply) -> Judged {
    if let (Op::FencedLock { .. }, Reply::Bulk(bytes)) = (op, reply) {
        // A grant is this request's id, `:`, and the resource's counter.
        return match super::fence::parse_grant(id, bytes) {
            Some(Ok(counter)) => Judged::Counted(counter),
            Some(Err(failure)) => Judged::Failed(failure),
            None => Judged::Broken(not_this_requests(op.name(), reply)),
        };
    }
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
        other => Judged::Broken(not_this_requests(op.name(), other)),
    }
}

/// Whether an error reply refuses the command itself rather than failing its work: unknown
/// (renamed away, or a server without it: `ERR unknown command`, `ERR syntax error` for an
/// `IFEQ` it does not know) or not permitted (`NOPERM`, an ACL). A `READONLY`, `LOADING`,
/// `BUSY` or `OOM` is the master's state: a script would fail the same way.
pub(crate) fn is_refusal(cause: &str) -> bool {
    let lower = cause.trim_start().to_ascii_lowercase();
    lower.starts_with("noperm")
        || lower.starts_with("err unknown command")
        || lower.starts_with("err unknown subcommand")
        || lower.starts_with("err syntax error")
}

/// The cause of a script request that was itself refused after its native command was
/// (`native`: `DELIFEQ: NOPERM ...`): both refusals, and what would make the call work.
pub(crate) fn refused_both_ways(op: Op, native: &str, script: &Failure) -> Failure {
    let (name, command) = match op {
        Op::Extend { .. } => ("extend", "+set"),
        _ => ("release", native_permission(native)),
    };
    Failure::new(
        script.kind,
        format!(
            "{} (after {native}); {name} needs {command} or +evalsha on this master",
            script.cause
        ),
    )
}

/// The ACL rule that allows the native release `native` (`DELIFEQ: ...` → `+delifeq`).
fn native_permission(native: &str) -> &'static str {
    if native.starts_with("DELEX") {
        "+delex"
    } else {
        "+delifeq"
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

    fn scripts_only() -> MasterServer {
        MasterServer::unknown()
    }

    fn valkey_9() -> MasterServer {
        MasterServer::from_info(b"server_name:valkey\r\nvalkey_version:9.1.2\r\n", true)
    }

    #[test]
    fn lua_free_requests_are_the_command_then_the_echo_of_their_id() {
        let mut out = Vec::new();
        let lead = encode_request(&mut out, Op::Unlock, &valkey_9(), "k", "tok", b"7");
        assert_eq!(lead, Some(Lead::DelIfEq));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "*3\r\n$7\r\nDELIFEQ\r\n$1\r\nk\r\n$3\r\ntok\r\n*2\r\n$4\r\nECHO\r\n$1\r\n7\r\n"
        );
        let mut out = Vec::new();
        let lead = encode_request(
            &mut out,
            Op::Extend { ttl_ms: 500 },
            &valkey_9(),
            "k",
            "tok",
            b"7",
        );
        assert_eq!(lead, Some(Lead::SetIfEq));
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("*7\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\ntok\r\n$4\r\nIFEQ\r\n$3\r\ntok\r\n$2\r\nPX\r\n$3\r\n500\r\n"), "{text}");
        // Judged by their own replies; any other reply in the command's place is a shift.
        assert_eq!(
            judge_lead(Lead::DelIfEq, Reply::Int(1)),
            Ok(LeadReply::Done)
        );
        assert_eq!(
            judge_lead(Lead::DelIfEq, Reply::Int(0)),
            Ok(LeadReply::NotDone)
        );
        assert_eq!(
            judge_lead(Lead::SetIfEq, Reply::Nil),
            Ok(LeadReply::NotDone)
        );
        assert!(judge_lead(Lead::DelIfEq, Reply::Status(b"OK")).is_err());
        assert!(judge_lead(Lead::DelIfEq, Reply::Nil).is_err());
        assert!(judge_lead(Lead::SetIfEq, Reply::Int(1)).is_err());
        assert!(matches!(
            judge_echo(Lead::DelIfEq, b"7", Reply::Bulk(b"6"), LeadReply::Done),
            Judged::Broken(ref f) if f.cause.contains("release")
        ));
    }

    #[test]
    fn a_refused_native_command_is_sent_again_and_other_errors_are_not() {
        for refusal in [
            "ERR unknown command 'DELIFEQ', with args beginning with: 'k' 'tok' ",
            "NOPERM User app has no permissions to run the 'delifeq' command",
            "ERR syntax error",
        ] {
            let set = LeadReply::Error(server_error(refusal.into()));
            let judged = judge_echo(Lead::DelIfEq, b"7", Reply::Bulk(b"7"), set);
            assert!(
                matches!(judged, Judged::Refused(_)),
                "{refusal}: {judged:?}"
            );
        }
        for state in [
            "READONLY You can't write against a read only replica.",
            "LOADING",
        ] {
            let set = LeadReply::Error(server_error(state.into()));
            let judged = judge_echo(Lead::DelIfEq, b"7", Reply::Bulk(b"7"), set);
            assert!(matches!(judged, Judged::Failed(_)), "{state}: {judged:?}");
        }
        // An acquire has no script to fall back to: its refusal is its failure.
        let set = LeadReply::Error(server_error("NOPERM no 'set'".into()));
        let judged = judge_echo(Lead::SetNx, b"7", Reply::Bulk(b"7"), set);
        assert!(matches!(judged, Judged::Failed(_)), "{judged:?}");
        let both = refused_both_ways(
            Op::Unlock,
            "DELEX: NOPERM no 'delex'",
            &server_error("NOPERM no 'evalsha'".into()),
        );
        assert_eq!(
            &*both.cause,
            "NOPERM no 'evalsha' (after DELEX: NOPERM no 'delex'); release needs +delex or \
             +evalsha on this master"
        );
        assert!(is_refusal(&both.cause));
    }

    #[test]
    fn only_the_requests_own_id_is_a_grant() {
        let op = Op::Unlock;
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
    fn an_acquire_counts_only_when_its_echo_follows_its_set() {
        let set = |reply| judge_lead(Lead::SetNx, reply).expect("a SET answer");
        assert_eq!(
            judge_echo(
                Lead::SetNx,
                b"17",
                Reply::Bulk(b"17"),
                set(Reply::Status(b"OK"))
            ),
            Judged::Answer(true)
        );
        assert_eq!(
            judge_echo(Lead::SetNx, b"17", Reply::Bulk(b"17"), set(Reply::Nil)),
            Judged::Answer(false)
        );
        // A shifted stream: whatever sits in the ECHO's place is not this request's id.
        for stray in [
            Reply::Bulk(b"16"),
            Reply::Status(b"OK"),
            Reply::Nil,
            Reply::Int(0),
        ] {
            assert!(
                matches!(judge_echo(Lead::SetNx, b"17", stray, LeadReply::Done), Judged::Broken(ref f) if f.kind == FailureKind::Protocol),
                "{stray:?}"
            );
        }
        // No SET answers with an integer or a bulk string.
        for stray in [Reply::Int(0), Reply::Bulk(b"17")] {
            assert!(judge_lead(Lead::SetNx, stray).is_err());
        }
        match judge_echo(
            Lead::SetNx,
            b"1",
            Reply::Bulk(b"1"),
            set(Reply::Error(b"OOM command not allowed")),
        ) {
            Judged::Failed(f) => assert_eq!(&*f.cause, "OOM command not allowed"),
            other => panic!("{other:?}"),
        }
        // An ECHO refused (an ACL without it) cannot confirm a SET: failed, with its cause.
        match judge_echo(
            Lead::SetNx,
            b"1",
            Reply::Error(b"NOPERM this user has no permissions to run the 'echo' command"),
            LeadReply::Done,
        ) {
            Judged::Failed(f) => assert!(f.cause.contains("'echo'"), "{f:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_fenced_grant_is_the_requests_id_then_the_counter() {
        let op = Op::FencedLock { ttl_ms: 1000 };
        assert_eq!(judge(op, b"17", Reply::Bulk(b"17:42")), Judged::Counted(42));
        assert_eq!(judge(op, b"17", Reply::Int(0)), Judged::Answer(false));
        // Another request's grant, a bare id, a plain SET's answer: shifted replies.
        for stray in [
            Reply::Bulk(b"16:42"),
            Reply::Bulk(b"17"),
            Reply::Status(b"OK"),
            Reply::Nil,
        ] {
            assert!(
                matches!(judge(op, b"17", stray), Judged::Broken(ref f) if f.kind == FailureKind::Protocol),
                "{stray:?}"
            );
        }
        assert!(matches!(
            judge(op, b"17", Reply::Bulk(b"17:x")),
            Judged::Failed(ref f) if f.cause.contains("fencing counter")
        ));
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
    fn requests_carry_their_id() {
        let mut out = Vec::new();
        encode_request(
            &mut out,
            Op::Lock { ttl_ms: 30000 },
            &scripts_only(),
            "k",
            "tok",
            b"42",
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\ntok\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n\
             *2\r\n$4\r\nECHO\r\n$2\r\n42\r\n"
        );
        let mut out = Vec::new();
        encode_request(&mut out, Op::Unlock, &scripts_only(), "k", "tok", b"42");
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(RELEASE.get_hash()), "{text}");
        assert!(text.ends_with("$3\r\ntok\r\n$2\r\n42\r\n"), "{text}");
    }
}
