//! Property: a password, wherever and however it sits in a master URL, never appears in any
//! message or `Debug` output, whether the URL parses or not.

use proptest::prelude::*;
use redlock_core::{redact_url, redact_url_bytes, Redlock};

/// In the middle of every generated password: if any of it shows, this does (the other parts
/// of the URLs never contain it).
const MARKER: &str = "Zq9";

/// A password: random printable ASCII (delimiters included) and a few non-ASCII characters
/// around the marker.
fn password() -> impl Strategy<Value = String> {
    let piece = "[ -~éß密]{0,10}";
    (piece, piece).prop_map(|(a, b)| format!("{a}{MARKER}{b}"))
}

/// Percent-encodes everything but unreserved characters, as a careful user would.
fn percent_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Where the password goes; every form is either valid for the Redis client or a plausible
/// user mistake (raw delimiters in the userinfo).
#[derive(Debug, Clone)]
enum Placement {
    /// `scheme://[user]:PASSWORD@host...`, as typed.
    Userinfo { user: String },
    /// `scheme://user:ENCODED@host...`.
    UserinfoEncoded { user: String },
    /// `scheme://PASSWORD@host...` (no colon: the password has none either).
    UserinfoAlone,
    /// `scheme://host/path?...&NAME=VALUE&...`, `&` in the value encoded (a raw one would
    /// start another parameter), or the whole value encoded.
    Query { name: &'static str, encoded: bool },
}

fn placement() -> impl Strategy<Value = Placement> {
    let user = "[a-z0-9]{0,6}";
    prop_oneof![
        user.prop_map(|user| Placement::Userinfo { user }),
        user.prop_map(|user| Placement::UserinfoEncoded { user }),
        Just(Placement::UserinfoAlone),
        (
            prop_oneof![Just("pass"), Just("password"), Just("PASS"), Just("p%61ss")],
            any::<bool>()
        )
            .prop_map(|(name, encoded)| Placement::Query { name, encoded }),
    ]
}

/// A URL holding `password`; hosts are loopback and ports closed (1-3), so a URL that
/// builds connects nowhere that answers.
fn url_with(scheme: &str, host: &str, tail: &str, placement: &Placement, password: &str) -> String {
    match placement {
        Placement::Userinfo { user } => format!("{scheme}{user}:{password}@{host}{tail}"),
        Placement::UserinfoEncoded { user } => {
            format!("{scheme}{user}:{}@{host}{tail}", percent_encoded(password))
        }
        Placement::UserinfoAlone => {
            format!("{scheme}{}@{host}{tail}", password.replace(':', ""))
        }
        Placement::Query { name, encoded } => {
            let value = if *encoded {
                percent_encoded(password)
            } else {
                password.replace('&', "%26")
            };
            format!("{scheme}{host}{tail}?db=0&{name}={value}&protocol=2")
        }
    }
}

fn scheme() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("redis://"),
        Just("rediss://"),
        Just("valkey://"),
        Just("unix://"),
        Just("redis+unix://"),
        Just("unix:"),
        Just("http://"),
        Just(""),
        Just(" redis://"),
        Just("REDIS://"),
        Just("redis:/"),
        Just("redis:"),
    ]
}

fn host() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("127.0.0.1:1"),
        Just("127.0.0.2:2"),
        Just("127.0.0.3:3"),
        Just("127.0.0.1:notaport"),
        Just("/nonexistent/redlock.sock"),
        Just(""),
    ]
}

fn tail() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(""),
        Just("/0"),
        Just("/x"),
        Just("/#insecure"),
        Just("?db=1"),
        Just("/?protocol=3")
    ]
}

/// Fails the case if any part of the password shows in `shown`.
fn assert_hidden(shown: &str, password: &str, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        !shown.contains(MARKER) && !shown.contains(password),
        "{what} shows the password {password:?}: {shown}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn redaction_hides_every_password(
        scheme in scheme(),
        host in host(),
        tail in tail(),
        placement in placement(),
        password in password(),
        junk in proptest::collection::vec(any::<u8>(), 0..4),
    ) {
        let url = url_with(scheme, host, tail, &placement, &password);
        assert_hidden(&redact_url(&url), &password, "redact_url")?;
        // The bytes entry point (the C ABI's), with bytes that are not UTF-8 appended.
        let mut bytes = url.clone().into_bytes();
        bytes.extend_from_slice(&junk);
        assert_hidden(&redact_url_bytes(&bytes), &password, "redact_url_bytes")?;
    }

    #[test]
    fn builder_errors_and_debug_never_show_a_password(
        scheme in scheme(),
        host in host(),
        tail in tail(),
        placement in placement(),
        password in password(),
    ) {
        let url = url_with(scheme, host, tail, &placement, &password);
        let runtime = runtime();
        let _entered = runtime.enter();

        let builder = Redlock::builder([url.clone(), url.clone()]);
        assert_hidden(&format!("{builder:?}"), &password, "builder Debug")?;
        // Twice the same URL: refused as a duplicate server, or as unparsable.
        let err = builder.build().expect_err("the same URL twice must be refused");
        assert_hidden(&format!("{err} {err:?}"), &password, "builder error")?;

        let err = Redlock::builder([url.clone()]).quorum(2).build().expect_err("quorum 2 of 1");
        assert_hidden(&format!("{err} {err:?}"), &password, "quorum error")?;

        match Redlock::builder([url.clone()]).build() {
            Ok(client) => {
                assert_hidden(&format!("{client:?}"), &password, "client Debug")?;
                assert_hidden(&client.masters().join(" "), &password, "masters()")?;
            }
            Err(err) => assert_hidden(&format!("{err} {err:?}"), &password, "build error")?,
        }
    }
}

/// One small runtime per case (clients that built start connecting in it; dropping it stops
/// them).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}
