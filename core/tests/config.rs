//! Bad configuration is rejected up front, naming the value; passwords never leak.

use crate::common;

use std::time::Duration;

use common::*;
use redlock_core::{FanOut, Redlock};

fn invalid(result: redlock_core::Result<Redlock>) -> String {
    let err = result.expect_err("configuration must be rejected");
    assert!(err.is_invalid_argument(), "{err}");
    err.to_string()
}

#[tokio::test]
async fn bad_configuration_names_the_bad_value() {
    let none: Vec<String> = Vec::new();
    assert!(invalid(Redlock::builder(none).build()).contains("masters"));

    let urls = [
        "redis://127.0.0.1:1",
        "redis://127.0.0.1:2",
        "redis://127.0.0.1:3",
    ];
    let msg = invalid(Redlock::builder(urls).quorum(1).build());
    assert!(msg.contains("quorum 1") && msg.contains('2'), "{msg}");
    let msg = invalid(Redlock::builder(urls).quorum(4).build());
    assert!(msg.contains("quorum 4"), "{msg}");
    let msg = invalid(Redlock::builder(urls).drift_factor(1.5).build());
    assert!(msg.contains("1.5"), "{msg}");
    let msg = invalid(Redlock::builder(urls).drift_factor(f64::NAN).build());
    assert!(msg.contains("NaN"), "{msg}");
    let msg = invalid(
        Redlock::builder(urls)
            .instance_timeout(Duration::ZERO)
            .build(),
    );
    assert!(msg.contains("instance_timeout"), "{msg}");

    let msg = invalid(Redlock::builder(["not a url"]).build());
    assert!(msg.contains("not a url"), "{msg}");
    let msg = invalid(Redlock::builder(["http://127.0.0.1:7000"]).build());
    assert!(msg.contains("http://127.0.0.1:7000"), "{msg}");
}

#[tokio::test]
async fn bad_operation_arguments_are_invalid_arguments() {
    let m = masters(3);
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let err = redlock
            .acquire("", Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(
            err.is_invalid_argument() && err.to_string().contains("resource"),
            "{err}"
        );
        let err = redlock.acquire("k", Duration::ZERO).await.unwrap_err();
        assert!(
            err.is_invalid_argument() && err.to_string().contains("ttl 0ns"),
            "{err}"
        );
        // ttl not above the drift allowance (10 ms × 0.01 + 2 ms would leave ~nothing).
        let err = redlock
            .try_acquire("k", Duration::from_millis(2))
            .await
            .unwrap_err();
        assert!(
            err.is_invalid_argument() && err.to_string().contains("2ms"),
            "{err}"
        );
        let mut lock = redlock.acquire("k", Duration::from_secs(1)).await.unwrap();
        let err = redlock.extend(&mut lock, Duration::ZERO).await.unwrap_err();
        assert!(err.is_invalid_argument(), "{err}");
        redlock.release(&lock).await.unwrap();
        assert!(with_key(&m, "k").is_empty());
    }
}

#[tokio::test]
async fn passwords_never_appear_in_errors_or_debug_output() {
    let secret = "hunter2-secret";
    let good = |port: u16| format!("redis://user:{secret}@127.0.0.1:{port}");
    let unparsable = format!("redis://user:{secret}@127.0.0.1:notaport");

    let builder = Redlock::builder([good(1), good(2), unparsable.clone()]);
    assert!(!format!("{builder:?}").contains(secret));
    let err = builder.build().unwrap_err();
    assert!(!err.to_string().contains(secret), "{err}");
    assert!(!format!("{err:?}").contains(secret), "{err:?}");
    assert!(err.to_string().contains("user:***@"), "{err}");

    let bad_quorum = Redlock::builder([good(1)]).quorum(3).build().unwrap_err();
    assert!(!format!("{bad_quorum:?}").contains(secret));

    let client = Redlock::builder([good(1), good(2), good(3)])
        .fanout(FanOut::Sequential)
        .build()
        .unwrap();
    assert!(!format!("{client:?}").contains(secret));
    assert!(client.masters().iter().all(|u| !u.contains(secret)));
    // Unreachable masters with credentials: the error still shows no password.
    let err = client
        .try_acquire("k", Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    assert!(!format!("{err} {err:?}").contains(secret));
}

#[tokio::test]
async fn passwords_with_url_delimiters_and_socket_passwords_never_appear() {
    // Each of these used to be printed in full somewhere: the parse error, Debug, masters().
    let secret = "S3cretPass";
    for url in [
        format!("redis://user:{secret}#x@127.0.0.1:1"),
        format!("redis://user:{secret}/x@127.0.0.1:1"),
        format!("redis://user:{secret}?x@127.0.0.1:1"),
        format!("redis://user:x@{secret}@127.0.0.1:1"),
    ] {
        let builder = Redlock::builder([url.clone()]);
        assert!(!format!("{builder:?}").contains(secret), "{builder:?}");
        // The `@` one parses (the client takes the last `@`); the others do not.
        let shown = match builder.build() {
            Ok(client) => format!("{client:?} {:?}", client.masters()),
            Err(err) => format!("{err} {err:?}"),
        };
        assert!(!shown.contains(secret), "{url}: {shown}");
        assert!(shown.contains("user:***@127.0.0.1:1"), "{shown}");
    }
    let socket = format!("unix:///nonexistent/redlock-test.sock?pass={secret}");
    let client = Redlock::builder([socket]).build().unwrap();
    assert!(!format!("{client:?}").contains(secret), "{client:?}");
    assert_eq!(
        client.masters(),
        ["unix:///nonexistent/redlock-test.sock?pass=***"]
    );
}

#[tokio::test]
async fn the_same_server_twice_is_refused_naming_both_positions() {
    // One server under three database numbers would be three votes: a quorum on its own.
    let urls = [
        "redis://127.0.0.1:7001/0",
        "redis://127.0.0.1:7001/1",
        "redis://127.0.0.1:7001/2",
    ];
    let msg = invalid(Redlock::builder(urls).build());
    assert!(
        msg.contains("#1") && msg.contains("#0") && msg.contains("same server"),
        "{msg}"
    );
    assert!(msg.contains("127.0.0.1:7001"), "{msg}");
}

#[test]
fn the_blocking_facade_refuses_the_same_server_twice_too() {
    // The C and Python bindings build through it.
    let err = redlock_core::blocking::Redlock::builder([
        "redis://127.0.0.1:7001",
        "redis://127.0.0.1:7002",
        "redis://:pw@127.0.0.1:7002/3",
    ])
    .build_blocking()
    .unwrap_err();
    let msg = err.to_string();
    assert!(err.is_invalid_argument(), "{msg}");
    assert!(msg.contains("#2") && msg.contains("#1"), "{msg}");
    assert!(!msg.contains(":pw@"), "{msg}");
}

#[test]
fn building_outside_a_runtime_is_an_error_not_a_panic() {
    let err = Redlock::builder(["redis://127.0.0.1:1"])
        .build()
        .unwrap_err();
    assert!(
        err.is_invalid_argument() && err.to_string().contains("runtime"),
        "{err}"
    );
}

#[tokio::test]
async fn masters_with_a_password_work_through_the_url_and_refuse_a_wrong_one() {
    let m = redlock_local::LocalMasters::start_with_password(3, "s3cr3t-pw").unwrap();
    assert!(!format!("{m:?}").contains("s3cr3t-pw"), "{m:?}");
    let redlock = connected(Redlock::builder(m.urls())).await;
    let lock = redlock
        .acquire("auth", Duration::from_secs(5))
        .await
        .unwrap();
    assert!(holders(&m, "auth", lock.token()).len() >= 2);
    redlock.release(&lock).await.unwrap();

    let wrong: Vec<String> = m
        .urls()
        .iter()
        .map(|u| u.replace("s3cr3t-pw", "wrong-pw"))
        .collect();
    let refused = Redlock::builder(wrong).build().unwrap();
    let err = refused
        .try_acquire("auth", Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    assert!(!format!("{err} {err:?}").contains("wrong-pw"));
}

/// `cmdstat_set` calls of master `i` (INFO commandstats): what reached it.
fn set_calls(m: &redlock_local::LocalMasters, i: usize) -> u64 {
    let info = m.command(i, &["INFO", "commandstats"]).expect("INFO");
    let redlock_local::resp::Reply::Bulk(info) = info else {
        panic!("INFO answered {info:?}");
    };
    String::from_utf8_lossy(&info)
        .lines()
        .find_map(|line| line.strip_prefix("cmdstat_set:calls="))
        .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
}

#[tokio::test]
async fn a_resource_name_over_the_limit_is_refused_before_anything_is_sent() {
    let m = masters(3);
    let redlock = client(&m, FanOut::Concurrent).await;
    let before: Vec<u64> = (0..3).map(|i| set_calls(&m, i)).collect();
    let huge = "r".repeat(16 << 20);
    for name in [huge.as_str(), &huge[..redlock_core::MAX_RESOURCE_BYTES + 1]] {
        let err = redlock
            .acquire(name, Duration::from_secs(1))
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(err.is_invalid_argument(), "{msg}");
        assert_eq!(err.invalid().unwrap().parameter(), "resource");
        assert!(msg.contains("65536 bytes"), "the limit is not named: {msg}");
        assert!(msg.len() < 1024, "{} bytes of message", msg.len());
    }
    let after: Vec<u64> = (0..3).map(|i| set_calls(&m, i)).collect();
    assert_eq!(before, after, "a refused acquire reached the masters");

    // At the limit: accepted, and messages that name it stay short.
    let longest = &huge[..redlock_core::MAX_RESOURCE_BYTES];
    let lock = redlock
        .acquire(longest, Duration::from_secs(5))
        .await
        .unwrap();
    let err = redlock
        .try_acquire(longest, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(err.is_not_acquired(), "{err}");
    assert!(
        err.to_string().len() < 4096,
        "{} bytes",
        err.to_string().len()
    );
    assert!(err.to_string().contains("rrr\"…"), "{err}");
    redlock.release(&lock).await.unwrap();
    assert!(with_key(&m, longest).is_empty());
}
