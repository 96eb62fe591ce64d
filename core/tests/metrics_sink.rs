//! A binding's metrics sink (`RedlockBuilder::metrics_sink`) receives the measurements of
//! `docs/src/design.md#observability` from won, contended and unavailable acquisitions on
//! real local masters.

use crate::common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redlock_core::{AttemptResult, FanOut, Measurement, MetricsSink, Redlock};
use redlock_local::LocalMasters;

#[derive(Default)]
struct Collected(Mutex<Vec<Measurement>>);

impl MetricsSink for Collected {
    fn record(&self, measurement: Measurement) {
        self.0.lock().unwrap().push(measurement);
    }
}

#[tokio::test]
async fn the_sink_sees_every_operation_attempt_and_request() {
    let masters = LocalMasters::start(3).expect("masters");
    let sink = Arc::new(Collected::default());
    let builder = || {
        Redlock::builder(masters.urls())
            .fanout(FanOut::Concurrent)
            .retry_count(0)
            .metrics_sink(sink.clone())
    };
    let holder = common::connected(builder()).await;
    let rival = common::connected(builder()).await;
    let lock = holder
        .acquire("sink:r", Duration::from_secs(10))
        .await
        .expect("won");
    let err = rival
        .acquire("sink:r", Duration::from_secs(10))
        .await
        .expect_err("contended");
    assert!(err.is_not_acquired(), "{err}");
    holder.release(&lock).await.expect("released");
    masters.kill(1).expect("kill");
    masters.kill(2).expect("kill");
    let err = rival
        .acquire("sink:r", Duration::from_secs(10))
        .await
        .expect_err("two of three down");
    assert!(err.is_unavailable(), "{err}");

    let seen = sink.0.lock().unwrap().clone();
    let outcomes: Vec<&str> = seen
        .iter()
        .filter_map(|m| match m {
            Measurement::Acquire { outcome, seconds } => {
                assert!(*seconds > 0.0);
                Some(outcome.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(outcomes, ["acquired", "not_acquired", "unavailable"]);
    let results: Vec<&str> = seen
        .iter()
        .filter_map(|m| match m {
            Measurement::Attempt { result } => Some(result.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["won", "clean_loss", "unavailable"]);
    let held: i64 = seen
        .iter()
        .map(|m| match m {
            Measurement::LocksHeld { delta } => *delta,
            _ => 0,
        })
        .sum();
    assert_eq!(held, 0);
    assert_eq!(
        seen.iter()
            .filter(|m| matches!(m, Measurement::Release { .. }))
            .count(),
        1
    );
    let operations: BTreeSet<&str> = seen
        .iter()
        .filter_map(|m| match m {
            Measurement::Request { operation, .. } => Some(*operation),
            _ => None,
        })
        .collect();
    assert_eq!(operations, BTreeSet::from(["EVALSHA", "SET"]));
    let failed: BTreeSet<usize> = seen
        .iter()
        .filter_map(|m| match m {
            Measurement::Request {
                master,
                error_type: Some(kind),
                ..
            } => {
                assert!(!kind.is_empty());
                Some(*master)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        failed,
        BTreeSet::from([1, 2]),
        "only the killed masters failed"
    );
}

#[tokio::test]
async fn a_fenced_acquire_is_measured_once_per_master_and_operation() {
    let masters = LocalMasters::start(3).expect("masters");
    let sink = Arc::new(Collected::default());
    let client = common::connected(
        Redlock::builder(masters.urls())
            .fanout(FanOut::Sequential)
            .fencing(true)
            .metrics_sink(sink.clone()),
    )
    .await;
    let lock = client
        .acquire("sink:fenced", Duration::from_secs(10))
        .await
        .expect("won");
    assert!(lock.fencing_token().is_some());
    client.release(&lock).await.expect("released");
    let seen = sink.0.lock().unwrap().clone();
    let requests = |operation: &str| {
        seen.iter()
            .filter(|m| matches!(m, Measurement::Request { operation: o, .. } if *o == operation))
            .count()
    };
    // One measurement per master whose answer the fenced attempt waited for (both rounds
    // together; round 2 stops waiting at quorum), and one per master for the release: all
    // scripts (a fenced acquire sends no `SET`; Redis 7 releases with the script).
    let attempt_at = seen
        .iter()
        .position(|m| matches!(m, Measurement::Attempt { .. }))
        .expect("an attempt");
    let acquired = seen[..attempt_at]
        .iter()
        .filter(|m| {
            matches!(
                m,
                Measurement::Request {
                    operation: "EVALSHA",
                    ..
                }
            )
        })
        .count();
    assert!((2..=3).contains(&acquired), "{seen:?}");
    assert_eq!(requests("EVALSHA"), acquired + 3, "{seen:?}");
    assert_eq!(requests("SET"), 0, "{seen:?}");
    assert!(seen.contains(&Measurement::Attempt {
        result: AttemptResult::Won
    }));
}
