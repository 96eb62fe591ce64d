//! The masters one `bench-peers` run measures against: started on this machine for the run
//! (the default), or given by URL (`--master-urls`), e.g. masters on other hosts, so that the
//! client's CPU does not share cores with theirs.
//!
//! Given masters must be kept for the benchmark: the harness deletes every key on them
//! between drivers (as it does on its own masters), so it refuses to start on a master that
//! holds any key. Their CPU per cycle comes from `INFO cpu`, which works across hosts; the
//! local masters' comes from `/proc` (every thread of each server).

use std::cell::RefCell;
use std::time::Duration;

use redis::{ConnectionAddr, IntoConnectionInfo};
use redlock_core::redact_url;
use redlock_local::LocalMasters;

/// How long the harness waits for a given master to connect or answer one of its commands.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the masters of a run come from.
pub enum Masters<'a> {
    /// Started for this run on loopback (`LocalMasters`), stopped when dropped.
    Local(Box<LocalMasters>),
    /// Given by the user; flushed between drivers, never stopped.
    Given(&'a GivenMasters),
}

impl std::fmt::Debug for Masters<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Masters::Local(local) => write!(f, "Masters::Local({} masters)", local.len()),
            Masters::Given(given) => write!(f, "Masters::{given:?}"),
        }
    }
}

impl Masters<'_> {
    /// The URLs the drivers connect to.
    pub fn urls(&self) -> Vec<String> {
        match self {
            Masters::Local(local) => local.urls(),
            Masters::Given(given) => given.masters.iter().map(|m| m.url.clone()).collect(),
        }
    }

    /// The local masters, when they were started for this run.
    pub fn local(&self) -> Option<&LocalMasters> {
        match self {
            Masters::Local(local) => Some(local),
            Masters::Given(_) => None,
        }
    }

    /// CPU the masters have used so far; `None` when one of them cannot say.
    pub fn cpu_used(&self) -> Option<Duration> {
        match self {
            Masters::Local(local) => Some(local_cpu(local)),
            Masters::Given(given) => given.cpu_used().ok(),
        }
    }

    /// Keys on all masters together.
    pub fn key_count(&self) -> Result<u64, String> {
        match self {
            Masters::Local(local) => (0..local.len())
                .map(|i| local.key_count(i).map_err(|e| e.to_string()))
                .sum(),
            Masters::Given(given) => given.key_count(),
        }
    }

    /// Deletes every key on every master.
    pub fn flush_all(&self) -> Result<(), String> {
        match self {
            Masters::Local(local) => local.flush_all().map_err(|e| e.to_string()),
            Masters::Given(given) => given.flush_all(),
        }
    }
}

/// CPU time the local masters' processes have used so far (every thread, from
/// `/proc/PID/task/*/schedstat`, in nanoseconds); zero where it cannot be read.
fn local_cpu(masters: &LocalMasters) -> Duration {
    let mut total = Duration::ZERO;
    for i in 0..masters.len() {
        let Ok(Some(pid)) = masters.pid(i) else {
            continue;
        };
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let on_cpu = std::fs::read_to_string(task.path().join("schedstat"))
                .ok()
                .and_then(|text| text.split_whitespace().next()?.parse::<u64>().ok());
            total += Duration::from_nanos(on_cpu.unwrap_or(0));
        }
    }
    total
}

/// Masters the user runs; one plain connection each for the harness's own commands.
pub struct GivenMasters {
    masters: Vec<GivenMaster>,
}

struct GivenMaster {
    /// As given (passed to the drivers; may hold a password, so never printed).
    url: String,
    /// `host:port`, for messages.
    address: String,
    connection: RefCell<redis::Connection>,
}

impl std::fmt::Debug for GivenMasters {
    /// Addresses only: a URL may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Given({})", self.addresses().join(", "))
    }
}

impl GivenMasters {
    /// Connects to every URL and checks that it is a Redis that holds no key. An error names
    /// the URL (without its password) and what is wrong with it.
    pub fn connect(urls: &[String]) -> Result<GivenMasters, String> {
        if urls.is_empty() {
            return Err("--master-urls names no master".to_string());
        }
        let mut masters: Vec<GivenMaster> = Vec::with_capacity(urls.len());
        for (position, url) in urls.iter().enumerate() {
            let master = GivenMaster::connect(position, url)?;
            if let Some(first) = masters.iter().position(|m| m.address == master.address) {
                return Err(format!(
                    "--master-urls names {} twice (masters {} and {}): Redlock's masters must be independent",
                    master.address,
                    first + 1,
                    position + 1
                ));
            }
            let keys = master.key_count()?;
            if keys > 0 {
                return Err(format!(
                    "master {} holds {keys} key(s); bench-peers deletes every key on its masters \
                     between drivers, so give it masters kept for the benchmark (empty)",
                    master.address
                ));
            }
            masters.push(master);
        }
        Ok(GivenMasters { masters })
    }

    /// The masters' `host:port`s, for the report.
    pub fn addresses(&self) -> Vec<String> {
        self.masters.iter().map(|m| m.address.clone()).collect()
    }

    fn cpu_used(&self) -> Result<Duration, String> {
        self.masters.iter().map(GivenMaster::cpu_used).sum()
    }

    fn key_count(&self) -> Result<u64, String> {
        self.masters.iter().map(GivenMaster::key_count).sum()
    }

    fn flush_all(&self) -> Result<(), String> {
        self.masters
            .iter()
            .try_for_each(|m| m.query::<()>(&["FLUSHALL"]))
    }
}

impl GivenMaster {
    fn connect(position: usize, url: &str) -> Result<GivenMaster, String> {
        let shown = |why: String| format!("--master-urls, master {}: {why}", position + 1);
        if url.trim().is_empty() {
            return Err(shown("the URL is empty".to_string()));
        }
        let info = url
            .into_connection_info()
            .map_err(|e| shown(format!("{:?} is not a redis:// URL ({e})", redact_url(url))))?;
        let address = match info.addr() {
            ConnectionAddr::Tcp(host, port) => format!("{host}:{port}"),
            other => {
                return Err(shown(format!(
                    "{other}: the harness talks to given masters over plain TCP (redis://host:port) only"
                )))
            }
        };
        let client = redis::Client::open(info).map_err(|e| shown(format!("{address}: {e}")))?;
        let connection = client
            .get_connection_with_timeout(COMMAND_TIMEOUT)
            .map_err(|e| shown(format!("cannot connect to {address}: {e}")))?;
        connection
            .set_read_timeout(Some(COMMAND_TIMEOUT))
            .and_then(|()| connection.set_write_timeout(Some(COMMAND_TIMEOUT)))
            .map_err(|e| shown(format!("{address}: {e}")))?;
        Ok(GivenMaster {
            url: url.to_string(),
            address,
            connection: RefCell::new(connection),
        })
    }

    fn query<T: redis::FromRedisValue>(&self, command: &[&str]) -> Result<T, String> {
        let mut cmd = redis::cmd(command[0]);
        cmd.arg(&command[1..]);
        cmd.query(&mut *self.connection.borrow_mut())
            .map_err(|e| format!("master {}: {}: {e}", self.address, command.join(" ")))
    }

    fn key_count(&self) -> Result<u64, String> {
        self.query(&["DBSIZE"])
    }

    /// The server's user + system CPU (`used_cpu_user` + `used_cpu_sys` of `INFO cpu`).
    fn cpu_used(&self) -> Result<Duration, String> {
        let text: String = self.query(&["INFO", "cpu"])?;
        parse_cpu(&text).ok_or_else(|| {
            format!(
                "master {}: INFO cpu has no used_cpu_user / used_cpu_sys",
                self.address
            )
        })
    }
}

/// `used_cpu_user` + `used_cpu_sys` from the text of `INFO cpu`.
fn parse_cpu(info: &str) -> Option<Duration> {
    let field = |name: &str| {
        info.lines()
            .find_map(|line| line.trim().strip_prefix(name)?.strip_prefix(':'))
            .and_then(|value| value.trim().parse::<f64>().ok())
            .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
    };
    Some(Duration::from_secs_f64(
        field("used_cpu_user")? + field("used_cpu_sys")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_masters_report_keys_and_cpu_and_flush() {
        let local = LocalMasters::start(2).expect("start 2 masters");
        let given_masters = GivenMasters::connect(&local.urls()).expect("connect");
        let masters = Masters::Given(&given_masters);
        assert_eq!(masters.key_count(), Ok(0));
        let before = masters.cpu_used().expect("INFO cpu");
        for i in 0..2 {
            for n in 0..300 {
                local
                    .command(i, &["SET", &format!("k{n}"), "v"])
                    .expect("SET");
            }
        }
        assert_eq!(masters.key_count(), Ok(600));
        let after = masters.cpu_used().expect("INFO cpu");
        assert!(
            after > before,
            "600 SETs used no CPU: {before:?} -> {after:?}"
        );
        masters.flush_all().expect("FLUSHALL");
        assert_eq!(masters.key_count(), Ok(0));
        assert_eq!(masters.urls(), local.urls());
    }

    #[test]
    fn a_master_holding_keys_is_refused_by_address() {
        let local = LocalMasters::start(2).expect("start 2 masters");
        local
            .command(1, &["SET", "someone-elses", "data"])
            .expect("SET");
        let err = GivenMasters::connect(&local.urls()).expect_err("refused");
        let address = format!("127.0.0.1:{}", local.port(1).expect("port"));
        assert!(
            err.contains(&address) && err.contains("holds 1 key"),
            "{err}"
        );
        assert_eq!(
            local.get(1, "someone-elses").expect("GET"),
            Some("data".into())
        );
    }

    #[test]
    fn bad_urls_are_named() {
        let local = LocalMasters::start(1).expect("start 1 master");
        let url = local.urls().remove(0);
        let twice = GivenMasters::connect(&[url.clone(), url.clone()]).expect_err("twice");
        assert!(
            twice.contains("twice") && twice.contains("masters 1 and 2"),
            "{twice}"
        );

        let not_url =
            GivenMasters::connect(&[url.clone(), "localhost:1".into()]).expect_err("not a URL");
        assert!(
            not_url.contains("master 2") && not_url.contains("redis://"),
            "{not_url}"
        );

        let secret =
            GivenMasters::connect(&["redis//:hunter2@127.0.0.1:1".into()]).expect_err("not a URL");
        assert!(
            secret.contains("\"***@127.0.0.1:1\" is not a redis:// URL")
                && !secret.contains("hunter2"),
            "{secret}"
        );

        let empty = GivenMasters::connect(&[" ".into()]).expect_err("empty");
        assert!(empty.contains("master 1: the URL is empty"), "{empty}");

        // A port nobody listens on. On 127.0.0.2, so that a master another test starts on
        // 127.0.0.1 meanwhile cannot take it.
        let port = std::net::TcpListener::bind(("127.0.0.2", 0))
            .and_then(|listener| listener.local_addr())
            .expect("probe a free port")
            .port();
        let refused =
            GivenMasters::connect(&[format!("redis://127.0.0.2:{port}")]).expect_err("refused");
        assert!(
            refused.contains(&format!("cannot connect to 127.0.0.2:{port}")),
            "{refused}"
        );
    }

    #[test]
    fn info_cpu_is_read_as_user_plus_sys() {
        let info = "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:0.250000\r\nused_cpu_sys_children:9.0\r\n";
        assert_eq!(parse_cpu(info), Some(Duration::from_millis(1_750)));
        assert_eq!(parse_cpu("# CPU\r\nused_cpu_sys:1.0\r\n"), None);
        assert_eq!(parse_cpu("used_cpu_user:x\r\nused_cpu_sys:1\r\n"), None);
    }
}
