//! Redaction of master URLs: the only form in which a URL is ever shown (errors, `Debug`,
//! reprs, reports, the C ABI's messages).
//!
//! The Redis client (`redis::Client::open`, over the `url` crate) reads a password from two
//! places: the userinfo (`redis://user:PASSWORD@host`) and, for socket URLs, the `pass` query
//! parameter (`unix:///run/redis.sock?pass=PASSWORD`). Redaction hides every byte that could
//! be a password under *any* reading of the string, including the ones the client would
//! reject (a password holding a raw `#`, `/`, `?` or `@` ends the client's authority early, so
//! the client fails to parse the URL and the error message is exactly where it would leak):
//!
//! - userinfo: everything between the scheme's `://` (a scheme the Redis client knows, or a
//!   web scheme; else the start of the string, since `a://b:c@h` may be user `a` with
//!   password `//b:c`) and
//!   the **last** `@` of the whole string, except a plain user name before the first `:`
//!   (shown, since it is no secret);
//! - query parameters: the value of every `pass` or `password` parameter (name compared after
//!   percent-decoding, ignoring case, tabs and newlines, as the URL parser would), up to the
//!   next `&` — also past a `#`, which a password may contain.
//!
//! Hidden runs become `***`. Over-redacting a malformed URL costs nothing; under-redacting
//! would print a credential. Works on bytes, so a URL that is not UTF-8 (from the C ABI) is
//! redacted before anything is shown: invalid bytes are shown as `\xNN`.

use std::fmt::Write as _;

/// What replaces a hidden run of bytes.
const HIDDEN: &str = "***";

/// Query parameters that carry a password (the Redis client reads `pass`; other clients and
/// users write `password`).
const PASSWORD_PARAMETERS: [&[u8]; 2] = [b"pass", b"password"];

/// Returns `url` with every password replaced by `***`; also for strings that do not parse.
///
/// `redis://user:secret@host:6379/0` → `redis://user:***@host:6379/0`;
/// `unix:///run/redis.sock?pass=secret&db=1` → `unix:///run/redis.sock?pass=***&db=1`.
/// A userinfo without a colon (`redis://secret@host`) is hidden whole, since some clients read
/// it as a password.
pub fn redact_url(url: &str) -> String {
    redact_url_bytes(url.as_bytes())
}

/// [`redact_url`] for bytes that may not be UTF-8 (e.g. a C string): the password is hidden
/// first, then any byte that is not part of valid UTF-8 is shown as `\xNN`.
pub fn redact_url_bytes(url: &[u8]) -> String {
    let mut hidden = vec![false; url.len()];
    hide_userinfo(url, &mut hidden);
    hide_password_parameters(url, &mut hidden);
    render(url, &hidden)
}

/// Schemes the Redis client reads: after one of these and `//`, the text is read as an
/// authority whose user name may be shown.
const CLIENT_SCHEMES: [&str; 7] = [
    "redis",
    "rediss",
    "valkey",
    "valkeys",
    "unix",
    "redis+unix",
    "valkey+unix",
];
/// Web schemes, which a user may paste by mistake (the error then names the scheme). The URL
/// parser reads `\` as `/` after these.
const WEB_SCHEMES: [&str; 6] = ["http", "https", "ws", "wss", "ftp", "file"];

/// Where the authority (userinfo and host) starts: after a known scheme and its `//`, else at
/// the start. `a:b@h`, `a:/b:c@h`, `a:\b:c@h` and `a://b:c@h` may each be a user `a` whose
/// password starts after the first colon (a URL typed without its scheme), so for any other
/// scheme-like prefix, or a single slash, the start is the safe reading. Leading spaces and
/// control bytes are skipped, as the URL parser trims them.
fn authority_start(url: &[u8]) -> usize {
    let start = url.iter().position(|&b| b > b' ').unwrap_or(url.len());
    let rest = &url[start..];
    let Some(colon) = rest.iter().position(|&b| b == b':') else {
        return start;
    };
    let scheme = &rest[..colon];
    let is = |names: &[&str]| {
        names
            .iter()
            .any(|n| scheme.eq_ignore_ascii_case(n.as_bytes()))
    };
    let is_slash: fn(&u8) -> bool = if is(&WEB_SCHEMES) {
        |&b| b == b'/' || b == b'\\'
    } else if is(&CLIENT_SCHEMES) {
        |&b| b == b'/'
    } else {
        return start;
    };
    let after_colon = start + colon + 1;
    let slashes = url[after_colon..]
        .iter()
        .take_while(|b| is_slash(b))
        .count();
    if slashes < 2 {
        return start;
    }
    after_colon + slashes
}

/// Hides the userinfo before the last `@`, keeping a plain user name.
fn hide_userinfo(url: &[u8], hidden: &mut [bool]) {
    let start = authority_start(url);
    let Some(at) = url[start..].iter().rposition(|&b| b == b'@') else {
        return;
    };
    let userinfo = &url[start..start + at];
    let shown = match userinfo.iter().position(|&b| b == b':') {
        Some(colon) if is_plain_user_name(&userinfo[..colon]) => colon + 1,
        _ => 0,
    };
    hidden[start + shown..start + at].fill(true);
}

/// A user name made only of the characters a URL's userinfo allows unencoded (no delimiter,
/// no space, nothing outside ASCII): anything else may be a misplaced password.
fn is_plain_user_name(name: &[u8]) -> bool {
    name.iter().all(|&b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'%'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
            )
    })
}

/// Hides the value of every `pass`/`password` parameter after a `?` or `&`, anywhere.
fn hide_password_parameters(url: &[u8], hidden: &mut [bool]) {
    for (i, _) in url
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'?' || b == b'&')
    {
        let name_start = i + 1;
        let Some(name_len) = url[name_start..]
            .iter()
            .position(|&b| matches!(b, b'=' | b'&' | b'#'))
        else {
            continue;
        };
        let eq = name_start + name_len;
        if url[eq] != b'=' || !is_password_parameter(&url[name_start..eq]) {
            continue;
        }
        let value_start = eq + 1;
        let value_end = url[value_start..]
            .iter()
            .position(|&b| b == b'&')
            .map_or(url.len(), |n| value_start + n);
        hidden[value_start..value_end].fill(true);
    }
}

/// True when a query parameter's raw name decodes to `pass` or `password`, the way the URL
/// parser reads it: tabs and newlines dropped, `+` as space, `%XX` decoded, any case.
fn is_password_parameter(raw: &[u8]) -> bool {
    let cleaned: Vec<u8> = raw
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r'))
        .collect();
    let mut name = Vec::with_capacity(cleaned.len());
    let mut i = 0;
    while i < cleaned.len() {
        let decoded = match cleaned[i] {
            b'%' => cleaned
                .get(i + 1..i + 3)
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok()),
            _ => None,
        };
        match decoded {
            Some(byte) => {
                name.push(byte);
                i += 3;
            }
            None => {
                name.push(if cleaned[i] == b'+' { b' ' } else { cleaned[i] });
                i += 1;
            }
        }
    }
    PASSWORD_PARAMETERS
        .iter()
        .any(|p| name.eq_ignore_ascii_case(p))
}

/// The shown bytes, each hidden run as `***`, invalid UTF-8 as `\xNN`.
fn render(url: &[u8], hidden: &[bool]) -> String {
    let mut shown = Vec::with_capacity(url.len());
    let mut i = 0;
    while i < url.len() {
        if hidden[i] {
            shown.extend_from_slice(HIDDEN.as_bytes());
            while i < url.len() && hidden[i] {
                i += 1;
            }
        } else {
            shown.push(url[i]);
            i += 1;
        }
    }
    let mut out = String::with_capacity(shown.len());
    for chunk in shown.utf8_chunks() {
        out.push_str(chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_passwords_are_hidden_and_user_names_kept() {
        let cases = [
            (
                "redis://user:s3cret@127.0.0.1:7000/0",
                "redis://user:***@127.0.0.1:7000/0",
            ),
            ("rediss://:s3cret@host", "rediss://:***@host"),
            ("redis://s3cret@host", "redis://***@host"),
            ("redis://host:1/2", "redis://host:1/2"),
            ("redis://user:@host", "redis://user:@host"),
            // Delimiters a URL parser takes as the end of the authority.
            (
                "redis://user:S3cretPass#x@127.0.0.1:1",
                "redis://user:***@127.0.0.1:1",
            ),
            ("redis://user:a/b?c@h:1/0", "redis://user:***@h:1/0"),
            ("redis://user:p@ss@h:1", "redis://user:***@h:1"),
            // No scheme, or a mangled one: hidden from the start.
            ("user:s3cret@host", "user:***@host"),
            (" redis://u:s3cret@h", " redis://u:***@h"),
            ("unix:u:s3cret@/tmp/s", "unix:***@/tmp/s"),
            ("a:b:s3cret@h:1", "a:***@h:1"),
            // A password that starts with slashes after a user name, no scheme: it is not
            // read as `scheme://user:...` (found by the property test in tests/redaction.rs).
            ("a:\\s3cret:@127.0.0.1:1", "a:***@127.0.0.1:1"),
            ("a:/s3cret:@h", "a:***@h"),
            ("a://s3cret:x@h", "a:***@h"),
            ("http://user:s3cret@h", "http://user:***@h"),
            ("http:\\\\user:s3cret@h", "http:\\\\user:***@h"),
            ("ab://user:s3cret@h", "ab:***@h"),
            ("REDIS://user:s3cret@h", "REDIS://user:***@h"),
            ("redis:/user:s3cret@h", "redis:***@h"),
            ("unix:///s:s3cret@h", "unix:///s:***@h"),
        ];
        for (url, expected) in cases {
            assert_eq!(redact_url(url), expected, "{url}");
        }
    }

    #[test]
    fn query_passwords_are_hidden_in_every_spelling() {
        let cases = [
            (
                "unix:///run/redis.sock?pass=s3cret",
                "unix:///run/redis.sock?pass=***",
            ),
            (
                "redis+unix:///s.sock?db=1&pass=s3cret&user=me",
                "redis+unix:///s.sock?db=1&pass=***&user=me",
            ),
            ("unix:///s?password=s3cret", "unix:///s?password=***"),
            ("unix:///s?PASS=s3cret", "unix:///s?PASS=***"),
            ("unix:///s?p%61ss=s3cret", "unix:///s?p%61ss=***"),
            ("unix:///s?pa\tss=s3cret", "unix:///s?pa\tss=***"),
            ("unix:///s?pass=s3#cret", "unix:///s?pass=***"),
            ("unix:///s?passive=1", "unix:///s?passive=1"),
            // A `@` in the password: both rules together hide all of it.
            ("unix:///s?pass=a@s3cret", "unix:///***"),
        ];
        for (url, expected) in cases {
            assert_eq!(redact_url(url), expected, "{url}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_escaped_after_redaction() {
        assert_eq!(
            redact_url_bytes(b"redis://user:S3cret\xffPass@127.0.0.1:1/\xff"),
            "redis://user:***@127.0.0.1:1/\\xff"
        );
        assert_eq!(redact_url_bytes(b"\xfe"), "\\xfe");
        assert_eq!(redact_url_bytes(b""), "");
    }
}
