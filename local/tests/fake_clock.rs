//! Masters with a fake wall clock (libfaketime): a jump on one master expires its keys at its
//! next command, and only its; a jemalloc server is refused with its reason.

use redlock_local::resp::Reply;
use redlock_local::{LocalError, LocalMasters, ServerKind};

#[test]
fn a_forward_jump_expires_the_keys_of_that_master_only_and_survives_a_restart() {
    let masters = LocalMasters::of(ServerKind::Valkey)
        .with_fake_clock()
        .start(2)
        .expect("valkey masters under libfaketime (make deps-valkey, make deps)");
    assert!(masters.has_fake_clock());
    for i in 0..2 {
        let set = masters
            .command(i, &["SET", "k", "v", "PX", "60000"])
            .unwrap();
        assert_eq!(set, Reply::Status("OK".into()));
    }
    assert_eq!(masters.shift_clock(0, 120_000).unwrap(), 120_000);
    assert_eq!(
        masters.get(0, "k").unwrap(),
        None,
        "m0's 60 s key outlived a +120 s jump"
    );
    assert_eq!(
        masters.get(1, "k").unwrap().as_deref(),
        Some("v"),
        "m1's clock moved too"
    );
    // Back again: a new key lives its full TTL on m0.
    assert_eq!(masters.shift_clock(0, -120_000).unwrap(), 0);
    masters
        .command(0, &["SET", "k", "v", "PX", "60000"])
        .unwrap();
    let ttl = masters.command(0, &["PTTL", "k"]).unwrap();
    assert!(matches!(ttl, Reply::Integer(ms) if ms > 50_000), "{ttl:?}");
    // A restarted master keeps its clock's offset.
    masters.shift_clock(1, 120_000).unwrap();
    masters.restart(1).unwrap();
    assert_eq!(masters.clock_offset_ms(1).unwrap(), 120_000);
    masters
        .command(1, &["SET", "k", "v", "PX", "60000"])
        .unwrap();
    masters.shift_clock(1, -120_000).unwrap();
    let ttl = masters.command(1, &["PTTL", "k"]).unwrap();
    assert!(
        matches!(ttl, Reply::Integer(ms) if ms > 150_000),
        "a jump back lengthens: {ttl:?}"
    );
}

#[test]
fn a_jemalloc_server_is_refused_a_fake_clock_with_what_to_use() {
    let version = std::process::Command::new(ServerKind::Redis.binary())
        .arg("--version")
        .output()
        .expect("redis-server is installed");
    let jemalloc = String::from_utf8_lossy(&version.stdout).contains("malloc=jemalloc");
    let started = LocalMasters::of(ServerKind::Redis)
        .with_fake_clock()
        .start(1);
    match started {
        Err(e @ LocalError::NoFakeClock { .. }) => {
            assert!(jemalloc, "refused a libc build: {e}");
            let text = e.to_string();
            assert!(
                text.contains("jemalloc") && text.contains("--server valkey"),
                "{text}"
            );
        }
        Err(other) => panic!("unexpected error: {other}"),
        Ok(masters) => {
            assert!(!jemalloc, "a jemalloc build was started under libfaketime");
            assert!(masters.has_fake_clock());
        }
    }
    // Masters without a fake clock refuse a jump.
    let plain = LocalMasters::of(ServerKind::Valkey).start(1).unwrap();
    let err = plain.shift_clock(0, 1000).unwrap_err().to_string();
    assert!(err.contains("not started with a fake clock"), "{err}");
}
