//! The connection layer as users meet it: a fresh client's first lock reaches every master, a
//! reconnect keeps that true, and a master that cannot be used says why.

use crate::common;

use std::time::Duration;

use common::{builder, eventually, holders, masters, with_key, TLS_SERVER};
use redlock_core::{FailureKind, FanOut, Outcome, Redlock};

const TTL: Duration = Duration::from_secs(10);
/// How long a straggling request may take to land on a healthy master: generous, so a busy
/// machine passes; an idle one takes well under a millisecond.
const LANDS_WITHIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_clients_first_lock_reaches_every_master_and_release_clears_them_all() {
    // Short-lived programs create a client and lock at once, while connections are still
    // opening: nothing may be dropped to keep order, so the lock lands on all 5 masters.
    let m = masters(5);
    let mut released_everywhere = 0;
    for fanout in [FanOut::Concurrent, FanOut::Sequential] {
        for round in 0..50 {
            let key = format!("fresh:{fanout}:{round}");
            // A per-master timeout a starved CPU cannot exceed: this test is about order.
            let redlock = builder(&m, fanout)
                .instance_timeout(Duration::from_secs(5))
                .build()
                .unwrap();
            let lock = redlock.try_acquire(&key, TTL).await.unwrap();
            eventually(
                &format!("round {round} ({fanout}): token on all 5 masters"),
                LANDS_WITHIN,
                || holders(&m, &key, lock.token()).len() == 5,
            )
            .await;
            let released = redlock.release(&lock).await.unwrap();
            if released.granted() == 5 {
                released_everywhere += 1;
            }
            eventually(
                &format!("round {round} ({fanout}): no key left after release"),
                LANDS_WITHIN,
                || with_key(&m, &key).is_empty(),
            )
            .await;
        }
    }
    println!("release reported 5 of 5 in {released_everywhere} of 100 rounds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_master_restarts_the_client_reconnects_and_locks_land_on_it_again() {
    let m = masters(5);
    let redlock = builder(&m, FanOut::Concurrent)
        .instance_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    for round in 0..5 {
        let restarted = round % 5;
        m.restart(restarted).unwrap();
        // The restarted server is empty: once a connection of ours shows up in its client
        // list, the client has reconnected (no timing assumed).
        eventually(
            &format!("the client reconnects to restarted master {restarted}"),
            LANDS_WITHIN,
            || {
                let reply = m.command(restarted, &["CLIENT", "LIST"]).unwrap();
                let clients = reply.as_text().unwrap_or_default();
                clients.contains("cmd=info") || clients.contains("cmd=evalsha")
            },
        )
        .await;
        let key = format!("restart:{round}");
        let lock = redlock.try_acquire(&key, TTL).await.unwrap();
        eventually(
            &format!("round {round}: token on all 5 masters"),
            LANDS_WITHIN,
            || holders(&m, &key, lock.token()).len() == 5,
        )
        .await;
        redlock.release(&lock).await.unwrap();
        eventually(&format!("round {round}: no key left"), LANDS_WITHIN, || {
            with_key(&m, &key).is_empty()
        })
        .await;
    }
}

/// Acquires once (no retry) on a fresh client and returns the error.
async fn failure_of(urls: Vec<String>) -> redlock_core::Error {
    // Sequential: every master is asked and answers (concurrent fan-out stops listening once
    // failures alone decide the round).
    let redlock = Redlock::builder(urls)
        .fanout(FanOut::Sequential)
        .retry_count(0)
        .build()
        .unwrap();
    // Let every connect attempt end (refused, handshake refused), so the vote shows causes
    // rather than timeouts; bounded.
    redlock.wait_connected(Duration::from_secs(10)).await;
    redlock
        .acquire("cause", TTL)
        .await
        .expect_err("must not be acquired")
}

fn assert_every_master_failed(err: &redlock_core::Error, kind: FailureKind, words: &str) {
    assert!(err.is_unavailable(), "{err}");
    let vote = err.vote().expect("a vote");
    for m in vote.masters() {
        assert_eq!(
            m.outcome,
            Outcome::Failed(kind),
            "master {}: {err}",
            m.master
        );
        let cause = m.error.as_deref().unwrap_or_default();
        assert!(cause.contains(words), "master {} cause {cause:?}", m.master);
    }
    let message = err.to_string();
    assert!(message.contains(words), "{message}");
    assert!(message.contains(kind.describe()), "{message}");
    assert!(!message.contains("answered 0"), "{message}");
}

#[tokio::test]
async fn a_wrong_or_missing_password_is_named_with_the_servers_words() {
    let m = redlock_local::LocalMasters::start_with_password(3, "right-one").unwrap();
    let wrong: Vec<String> = m
        .urls()
        .iter()
        .map(|u| u.replace("right-one", "wrong-one"))
        .collect();
    let err = failure_of(wrong).await;
    assert_every_master_failed(&err, FailureKind::Auth, "WRONGPASS");
    assert!(
        err.to_string()
            .contains("3 of 3 masters refused authentication"),
        "{err}"
    );
    assert!(!err.to_string().contains("wrong-one"), "{err}");

    let missing: Vec<String> = m
        .urls()
        .iter()
        .map(|u| u.replace(":right-one@", ""))
        .collect();
    assert!(!missing[0].contains("right-one"), "{missing:?}");
    let err = failure_of(missing).await;
    assert_every_master_failed(&err, FailureKind::Auth, "NOAUTH");
}

#[tokio::test]
async fn a_closed_port_is_named_as_refused() {
    // Sockets bound but never listening: connects are refused, and no server started by a
    // test running in parallel can take these ports.
    let held: Vec<tokio::net::TcpSocket> = (0..3)
        .map(|_| {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            socket
        })
        .collect();
    let urls = held
        .iter()
        .map(|s| format!("redis://{}", s.local_addr().unwrap()))
        .collect();
    let err = failure_of(urls).await;
    assert_every_master_failed(&err, FailureKind::Connection, "connection refused");
}

/// A connect still under way at a round's deadline is not the master's silence: when it fails
/// within the round's catch-up wait (one more per-master timeout), the request it held fails
/// with the connect's cause. The masters here accept and never answer the login handshake,
/// which the client gives up after 1 s, after the 900 ms deadline and well inside the 1.8 s a
/// round may wait (the order is the client's own timers', whatever the machine's pace).
#[tokio::test]
async fn a_connect_that_fails_after_the_deadline_is_named_with_its_cause_not_as_a_timeout() {
    let mut urls = Vec::new();
    let mut silent = tokio::task::JoinSet::new();
    for _ in 0..3 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("redis://{}", listener.local_addr().unwrap()));
        silent.spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
    }
    // Concurrent: the vote is read when the round ends (sequential fan-out reads it after the
    // last master, by when the first one's connect has long failed).
    let redlock = Redlock::builder(urls)
        .fanout(FanOut::Concurrent)
        .retry_count(0)
        .instance_timeout(Duration::from_millis(900))
        .build()
        .unwrap();
    let err = redlock
        .acquire("connecting", TTL)
        .await
        .expect_err("must not be acquired");
    silent.abort_all();
    assert!(err.is_unavailable(), "{err}");
    let vote = err.vote().expect("a vote");
    // The round is decided by the failures of a quorum; the last master may not be awaited.
    let failed = vote
        .masters()
        .iter()
        .filter(|m| {
            m.outcome == Outcome::Failed(FailureKind::Connection)
                && m.error
                    .as_deref()
                    .unwrap_or_default()
                    .contains("did not answer the handshake")
        })
        .count();
    let not_awaited = vote
        .masters()
        .iter()
        .filter(|m| m.outcome == Outcome::NotAwaited);
    assert!(failed >= 2 && failed + not_awaited.count() == 3, "{err}");
    assert!(!err.to_string().contains("timed out"), "{err}");
}

#[tokio::test]
async fn an_untrusted_certificate_is_named_as_a_tls_failure() {
    let m = redlock_local::LocalMasters::of(TLS_SERVER)
        .start_tls(3)
        .unwrap();
    // Without `#insecure` the throw-away self-signed certificate is not trusted.
    let strict: Vec<String> = m
        .urls()
        .iter()
        .map(|u| u.replace("#insecure", ""))
        .collect();
    let err = failure_of(strict).await;
    assert_every_master_failed(&err, FailureKind::Tls, "certificate");

    // With it, the same masters grant the lock.
    let redlock = Redlock::builder(m.urls()).build().unwrap();
    let lock = redlock.acquire("tls", TTL).await.unwrap();
    redlock.release(&lock).await.unwrap();
}

/// A master user limited by an ACL: the book's Rust page lists the commands this client needs.
#[tokio::test]
async fn an_acl_user_with_the_listed_commands_locks_and_one_without_echo_is_told_why() {
    let m = masters(3);
    let needed = "+set +echo +evalsha +script|load +get +del +pexpire";
    let without_echo = "+set +evalsha +script|load +get +del +pexpire";
    for i in 0..3 {
        for (user, rules) in [("locker", needed), ("no-echo", without_echo)] {
            let mut args = vec!["ACL", "SETUSER", user, "on", ">pw", "~*"];
            args.extend(rules.split(' '));
            let reply = m.command(i, &args).expect("ACL SETUSER");
            assert_eq!(reply, redlock_local::resp::Reply::Status("OK".into()));
        }
    }
    let urls_of = |user: &str| -> Vec<String> {
        m.urls()
            .iter()
            .map(|u| u.replacen("redis://", &format!("redis://{user}:pw@"), 1))
            .collect()
    };

    let redlock = Redlock::builder(urls_of("locker"))
        .retry_count(0)
        .build()
        .unwrap();
    redlock.wait_connected(Duration::from_secs(10)).await;
    let mut lock = redlock
        .acquire("acl", TTL)
        .await
        .expect("the listed commands suffice");
    redlock.extend(&mut lock, TTL).await.expect("extend");
    assert_eq!(redlock.release(&lock).await.unwrap().granted(), 3);

    // Every SET went through, but no ECHO confirmed one: nothing counts as a grant, and the
    // cause is the server's own refusal.
    let err = failure_of(urls_of("no-echo")).await;
    assert_every_master_failed(&err, FailureKind::Server, "NOPERM");
    assert!(err.to_string().contains("echo"), "{err}");
    // The failed attempt cleaned up after itself on every master.
    eventually("the unconfirmed SETs deleted", LANDS_WITHIN, || {
        with_key(&m, "cause").is_empty()
    })
    .await;
}
