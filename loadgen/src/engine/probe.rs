//! Fail fast: before anything is measured, a quorum of the masters must be reachable. When it
//! is not, every master is asked for a `PING` (through redis-rs, as the client connects) and
//! the command exits 1 at once with each master's cause: refused, wrong password, TLS, ...

use std::time::Duration;

use redlock_core::{FanOut, Redlock};

use crate::engine::target::Target;
use crate::error::LoadgenError;

/// How long the masters get to be reached before a command gives up.
pub const REACH_WITHIN: Duration = Duration::from_secs(3);

/// Checks that at least a quorum (`quorum`, or the majority) of `target`'s masters accept a
/// connection within [`REACH_WITHIN`]; otherwise fails naming each master's cause.
pub async fn require_quorum(target: &Target, quorum: Option<usize>) -> Result<(), LoadgenError> {
    let mut builder = Redlock::builder(target.urls.iter().cloned()).fanout(FanOut::Concurrent);
    if let Some(q) = quorum {
        builder = builder.quorum(q);
    }
    let redlock = builder.build()?;
    let needed = redlock.settings().quorum;
    let reached = redlock.wait_connected(REACH_WITHIN).await;
    if reached >= needed {
        return Ok(());
    }
    let display = target.display_urls();
    let causes = futures_util::future::join_all(target.urls.iter().map(|u| ping(u))).await;
    let mut message = format!(
        "only {reached} of {} masters could be reached within {:?}; a lock needs {needed}:",
        target.urls.len(),
        REACH_WITHIN
    );
    for (i, ((url, raw), cause)) in display.iter().zip(&target.urls).zip(causes).enumerate() {
        let mut cause = match cause {
            Ok(()) => "answered PING to a separate probe (the client could not connect in time)"
                .to_string(),
            Err(cause) => cause,
        };
        if ["ssl_ca_certs", "ssl_certfile", "ssl_keyfile"]
            .iter()
            .any(|p| raw.contains(p))
        {
            cause.push_str(" (seen by a plain redis-rs probe, without the URL's ssl_* files)");
        }
        message.push_str(&format!("\n  m{i} {url}: {cause}"));
    }
    Err(LoadgenError::Failed(message))
}

/// One `PING` over a fresh connection, bounded; the cause when it fails (never the password).
async fn ping(url: &str) -> Result<(), String> {
    let client = redis::Client::open(url).map_err(|e| scrub(url, &e.to_string()))?;
    let attempt = async {
        let mut con = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut con).await
    };
    match tokio::time::timeout(REACH_WITHIN, attempt).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(scrub(url, &describe(&e))),
        Err(_) => Err(format!("no answer within {REACH_WITHIN:?} (timeout)")),
    }
}

/// The error's text with the error kind made explicit where the text alone is vague.
fn describe(e: &redis::RedisError) -> String {
    let text = e.to_string();
    match e.kind() {
        redis::ErrorKind::AuthenticationFailed if !text.contains("auth") => {
            format!("authentication failed: {text}")
        }
        _ => text,
    }
}

/// `text` with the URL's password (if any) replaced by `***`.
fn scrub(url: &str, text: &str) -> String {
    let password = redis::Client::open(url).ok().and_then(|c| {
        c.get_connection_info()
            .redis_settings()
            .password()
            .map(str::to_string)
    });
    match password {
        Some(p) if !p.is_empty() => text.replace(&p, "***"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_echoed() {
        let url = "redis://user:S3cretPass@127.0.0.1:1";
        assert_eq!(
            scrub(url, "bad S3cretPass here"),
            "bad *** here".to_string()
        );
        assert_eq!(scrub("redis://127.0.0.1:1", "plain"), "plain");
    }
}
