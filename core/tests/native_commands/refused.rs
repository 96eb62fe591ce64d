//! A master that refuses the native release (renamed away, as managed servers do, or denied
//! by an ACL) is asked again with the script at once, and stays on the script until it
//! reconnects; one that refuses both makes the release fail naming it. On real Valkey 9.1.2
//! (`DELIFEQ`) and real Redis 8.6.3 (`DELEX … IFEQ`), refusing on 1, 3 and 5 of 5 masters.

use std::time::Duration;

use redlock_core::{ErrorKind, FanOut, Redlock, ReleaseCommand};
use redlock_local::{LocalMasters, ServerKind};

use super::{calls, TTL};

/// The native servers, each with the name of its release command.
const NATIVE: [(ServerKind, &str); 2] = [
    (ServerKind::Valkey, "DELIFEQ"),
    (ServerKind::Redis8, "DELEX"),
];
const USER: &str = "app";
const PASSWORD: &str = "app-password";

/// `refusing` masters that refuse `command` (renamed away when `rename`, else denied to the
/// user `app` by an ACL), then `5 - refusing` that take it; the URLs log in as `app`.
fn fleet(server: &ServerKind, command: &str, refusing: usize, rename: bool) -> Fleet {
    let launch = LocalMasters::of(server.clone());
    let refusing_launch = if rename {
        launch
            .clone()
            .with_server_args(["--rename-command", command, ""])
    } else {
        launch.clone()
    };
    let start = |launch: &redlock_local::Launch, n: usize| {
        launch
            .start(n)
            .unwrap_or_else(|e| panic!("cannot start {n} {server} masters: {e}"))
    };
    let groups = vec![
        (start(&refusing_launch, refusing), true),
        (start(&launch, 5 - refusing), false),
    ];
    let deny = format!("-{}", command.to_ascii_lowercase());
    let mut urls = Vec::new();
    for (masters, refuses) in &groups {
        for i in 0..masters.len() {
            let mut rules = vec!["SETUSER", USER, "on", ">app-password", "~*", "+@all"];
            if *refuses && !rename {
                rules.push(&deny);
            }
            acl(masters, i, &rules);
        }
        urls.extend(masters.urls().iter().map(|url| as_app(url)));
    }
    Fleet { groups, urls }
}

struct Fleet {
    /// The refusing masters, then the others.
    groups: Vec<(LocalMasters, bool)>,
    urls: Vec<String>,
}

impl Fleet {
    fn keys(&self) -> u64 {
        self.groups
            .iter()
            .flat_map(|(m, _)| (0..m.len()).map(move |i| m.key_count(i).unwrap()))
            .sum()
    }
}

fn acl(masters: &LocalMasters, index: usize, rules: &[&str]) {
    let mut args = vec!["ACL"];
    args.extend_from_slice(rules);
    let reply = masters.command(index, &args).unwrap();
    assert!(reply.as_text() == Some("OK"), "ACL {rules:?}: {reply:?}");
}

/// `redis://127.0.0.1:P` → `redis://app:app-password@127.0.0.1:P`.
fn as_app(url: &str) -> String {
    url.replacen("redis://", &format!("redis://{USER}:{PASSWORD}@"), 1)
}

async fn client(urls: &[String]) -> Redlock {
    let redlock = Redlock::builder(urls.to_vec())
        .fanout(FanOut::Concurrent)
        .instance_timeout(Duration::from_secs(2))
        .retry_count(0)
        .build()
        .unwrap();
    assert_eq!(redlock.wait_connected(Duration::from_secs(10)).await, 5);
    redlock
}

/// 20 rounds of acquire then release of one key: every acquire wins (the release before it
/// removed the key everywhere), every release releases on all 5.
async fn release_and_acquire_again(redlock: &Redlock, fleet: &Fleet, what: &str) {
    for round in 0..20 {
        let lock = redlock
            .try_acquire("refused:key", TTL)
            .await
            .unwrap_or_else(|e| panic!("{what}: acquire {round}: {e}"));
        let vote = redlock
            .release(&lock)
            .await
            .unwrap_or_else(|e| panic!("{what}: release {round}: {e}"));
        assert_eq!(vote.granted(), 5, "{what}: release {round}: {vote:?}");
        assert_eq!(fleet.keys(), 0, "{what}: keys left after release {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_native_release_falls_back_to_the_script_on_each_refusing_master() {
    for (server, command) in NATIVE {
        for rename in [true, false] {
            for refusing in [1, 3, 5] {
                let how = if rename { "renamed" } else { "denied by ACL" };
                let what = format!("{server}, {command} {how} on {refusing} of 5");
                let fleet = fleet(&server, command, refusing, rename);
                let redlock = client(&fleet.urls).await;
                release_and_acquire_again(&redlock, &fleet, &what).await;
                let servers = redlock.master_servers();
                for (i, info) in servers.iter().enumerate() {
                    let info = info.as_ref().expect("connected");
                    let refused = info.refused.as_ref();
                    if i < refusing {
                        // On the script since the first refusal; the refusal is shown.
                        assert_eq!(info.release, ReleaseCommand::Script, "{what}: {info}");
                        let refused = refused.unwrap_or_else(|| panic!("{what}: {info}"));
                        assert!(refused.cause.starts_with(command), "{what}: {info}");
                        assert_eq!(refused.retried, 1, "{what}: {info}");
                    } else {
                        assert_ne!(info.release, ReleaseCommand::Script, "{what}: {info}");
                        assert_eq!(refused, None, "{what}: {info}");
                    }
                }
                let (refusing_masters, _) = &fleet.groups[0];
                for i in 0..refusing {
                    // 20 releases and no more: the first sent again, the rest sent as scripts.
                    assert_eq!(
                        calls(refusing_masters, i, "evalsha"),
                        20,
                        "{what}: master {i}"
                    );
                }
                let (taking_masters, _) = &fleet.groups[1];
                for i in 0..5 - refusing {
                    assert_eq!(calls(taking_masters, i, "evalsha"), 0, "{what}: master {i}");
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_refused_both_ways_fails_naming_the_master_and_the_permission() {
    for (server, command) in NATIVE {
        let fleet = fleet(&server, command, 1, false);
        // Master 0 now refuses the script too (SCRIPT LOAD stays allowed: the connection
        // opens, and only the release is refused).
        acl(&fleet.groups[0].0, 0, &["SETUSER", USER, "-evalsha"]);
        let redlock = client(&fleet.urls).await;
        let lock = redlock.try_acquire("refused:both", TTL).await.unwrap();
        let error = redlock.release(&lock).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Unavailable, "{server}: {error}");
        let message = error.to_string();
        let permission = format!("+{} or +evalsha", command.to_ascii_lowercase());
        for part in [
            "refused by 1 of 5 masters",
            "master #0 (redis://app:",
            &permission,
        ] {
            assert!(
                message.contains(part),
                "{server}: {part:?} not in {message}"
            );
        }
        assert!(!message.contains(PASSWORD), "{server}: {message}");
        // The others released; the key stays on the refusing master only.
        assert_eq!(error.vote().unwrap().granted(), 4, "{server}: {message}");
        assert_eq!(fleet.keys(), 1, "{server}");
    }
}
