//! Network distance between the generator and its local masters (`--rtt`): loopback answers
//! in about 50 µs, masters in other zones 0.5–2 ms away. A proxy per master adds the round trip
//! (half on the way there, half on the way back, each ± half the jitter), in a process of its
//! own so its CPU stays out of the generator's figures and is measured on its own.
//!
//! The proxy process is this binary again (`redlock-loadgen net-proxy PORT=RTT…`, hidden): it
//! prints the ports it listens on, then forwards until its standard input closes (the parent
//! exited, however it did) or it is killed (the parent dropping [`NetworkProxy`]).

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use redlock_local::proxy::{Direction, FaultProxy};

use crate::error::LoadgenError;
use crate::model::report::NetworkInfo;
use crate::model::values::parse_duration;

/// The named profiles: round trip and jitter.
const PROFILES: [(&str, Rtt); 3] = [
    ("loopback", Rtt::new(0, 0)),
    ("same-zone", Rtt::new(300, 50)),
    ("cross-zone", Rtt::new(1500, 300)),
];

/// Round trip added to one master, ± jitter (µs precision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rtt {
    pub rtt: Duration,
    pub jitter: Duration,
}

impl Rtt {
    const fn new(rtt_us: u64, jitter_us: u64) -> Rtt {
        Rtt {
            rtt: Duration::from_micros(rtt_us),
            jitter: Duration::from_micros(jitter_us),
        }
    }

    /// `1.5ms±0.3ms` (`+-` for `±`), a named profile, or a bare duration (no jitter).
    fn parse(text: &str) -> Result<Rtt, String> {
        if let Some((_, rtt)) = PROFILES.iter().find(|(name, _)| *name == text) {
            return Ok(*rtt);
        }
        let (rtt, jitter) = match text.split_once('±').or_else(|| text.split_once("+-")) {
            Some((rtt, jitter)) => (rtt, Some(jitter)),
            None => (text, None),
        };
        let bad = |e: String| {
            let names: Vec<&str> = PROFILES.iter().map(|(n, _)| *n).collect();
            format!(
                "{text:?}: {e} (a round trip such as 1ms or 1ms±0.2ms, or one of {})",
                names.join(", ")
            )
        };
        let rtt = parse_duration(rtt).map_err(bad)?;
        let jitter = jitter
            .map_or(Ok(Duration::ZERO), parse_duration)
            .map_err(bad)?;
        if jitter > rtt {
            return Err(bad(format!(
                "the jitter {jitter:?} is larger than the round trip {rtt:?}"
            )));
        }
        if rtt > Duration::from_secs(1) {
            return Err(bad(format!(
                "{rtt:?} is more than the 1 s a round trip may add"
            )));
        }
        Ok(Rtt { rtt, jitter })
    }

    /// The spec the proxy process reads back (µs, exact).
    fn spec(&self) -> String {
        format!("{}us±{}us", self.rtt.as_micros(), self.jitter.as_micros())
    }
}

/// `--rtt`: one round trip for every master, or one per master (comma-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkProfile {
    /// As written.
    pub name: String,
    rtts: Vec<Rtt>,
}

impl NetworkProfile {
    /// Parses `--rtt`; the error names the part at fault.
    pub fn parse(text: &str) -> Result<NetworkProfile, String> {
        let rtts = text
            .split(',')
            .map(|part| Rtt::parse(part.trim()))
            .collect::<Result<Vec<Rtt>, String>>()?;
        Ok(NetworkProfile {
            name: text.to_string(),
            rtts,
        })
    }

    /// The round trip of each of `n` masters; an error when a per-master list is not `n` long.
    pub fn per_master(&self, n: usize) -> Result<Vec<Rtt>, String> {
        match self.rtts.as_slice() {
            [one] => Ok(vec![*one; n]),
            list if list.len() == n => Ok(list.to_vec()),
            list => Err(format!(
                "--rtt {}: {} round trips for {n} masters (give one, or one per master)",
                self.name,
                list.len()
            )),
        }
    }

    /// True when some master is further away than loopback.
    pub fn adds_latency(&self) -> bool {
        self.rtts.iter().any(|r| !r.rtt.is_zero())
    }
}

/// The proxy process in front of the local masters, and the profile it plays.
#[derive(Debug)]
pub struct NetworkProxy {
    child: Child,
    /// Where the client connects instead of each master.
    pub urls: Vec<String>,
    profile: NetworkProfile,
    rtts: Vec<Rtt>,
}

impl NetworkProxy {
    /// Starts the proxy process in front of the masters listening on `ports` (loopback).
    pub fn start(profile: &NetworkProfile, ports: &[u16]) -> Result<NetworkProxy, LoadgenError> {
        let rtts = profile
            .per_master(ports.len())
            .map_err(LoadgenError::Usage)?;
        let failed = |e: &dyn std::fmt::Display| {
            LoadgenError::Failed(format!(
                "starting the network proxy (--rtt {}): {e}",
                profile.name
            ))
        };
        let exe = std::env::current_exe().map_err(|e| failed(&e))?;
        let mut command = Command::new(exe);
        command.arg("net-proxy");
        command.args(
            ports
                .iter()
                .zip(&rtts)
                .map(|(p, r)| format!("{p}={}", r.spec())),
        );
        // Its own process group: a Ctrl-C for the generator (which ends its run cleanly) must
        // not take the network away mid-run; the generator ends the proxy itself.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| failed(&e))?;
        let listening = child.stdout.take().ok_or_else(|| failed(&"no stdout"));
        let mut proxy = NetworkProxy {
            child,
            urls: Vec::new(),
            profile: profile.clone(),
            rtts,
        };
        proxy.urls = read_ports(listening?, ports.len()).map_err(|e| failed(&e))?;
        Ok(proxy)
    }

    /// CPU the proxy process has used so far (`None` where /proc cannot tell).
    pub fn cpu(&self) -> Option<Duration> {
        process_cpu_of(self.child.id())
    }

    /// What a report records: the profile and, over `wall`, the CPU the proxy used from
    /// `cpu_before`.
    pub fn info(&self, cpu_before: Option<Duration>, wall: Duration) -> NetworkInfo {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        NetworkInfo {
            profile: self.profile.name.clone(),
            rtt_ms: self.rtts.iter().map(|r| ms(r.rtt)).collect(),
            jitter_ms: self.rtts.iter().map(|r| ms(r.jitter)).collect(),
            proxy_cpu_s: self
                .cpu()
                .zip(cpu_before)
                .map(|(end, start)| end.saturating_sub(start).as_secs_f64()),
            wall_s: wall.as_secs_f64(),
        }
    }
}

impl Drop for NetworkProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long the proxy process may take to say its ports.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The proxy's first line, `ports P0 P1 …`, as `redis://` URLs (an EOF: it failed to start,
/// having said why on its standard error), within [`START_TIMEOUT`].
fn read_ports(out: ChildStdout, n: usize) -> Result<Vec<String>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    // Read on a thread of its own: a proxy that never answers is killed (on drop) and its
    // pipe closes, which ends the thread.
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(out).read_line(&mut line).map(|_| line);
        let _ = tx.send(read);
    });
    let line = rx
        .recv_timeout(START_TIMEOUT)
        .map_err(|_| format!("it did not say its ports within {START_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
    let ports: Vec<u16> = line
        .strip_prefix("ports ")
        .ok_or_else(|| format!("it said {line:?} instead of its ports"))?
        .split_whitespace()
        .map(|p| p.parse().map_err(|_| format!("bad port {p:?}")))
        .collect::<Result<_, String>>()?;
    if ports.len() != n {
        return Err(format!("{} ports for {n} masters", ports.len()));
    }
    Ok(ports
        .iter()
        .map(|p| format!("redis://127.0.0.1:{p}"))
        .collect())
}

/// User + system CPU of process `pid` (`/proc/PID/stat`, in clock ticks).
fn process_cpu_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count from the ')' that closes it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
    let total = ticks(11)? + ticks(12)?;
    // SAFETY: sysconf only reads a configuration value.
    let per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_s = u64::try_from(per_s).ok().filter(|&t| t > 0)?;
    Some(Duration::from_micros(total * 1_000_000 / per_s))
}

/// The proxy process's side (`net-proxy PORT=RTT …`): a proxy in front of each port adding
/// its round trip, its ports printed on one line, then forwarding until standard input closes.
pub async fn serve(specs: &[String]) -> Result<(), LoadgenError> {
    let mut proxies = Vec::with_capacity(specs.len());
    for spec in specs {
        let bad = |e: String| LoadgenError::Usage(format!("net-proxy {spec:?}: {e}"));
        let (port, rtt) = spec
            .split_once('=')
            .ok_or_else(|| bad("not PORT=RTT".into()))?;
        let port: u16 = port
            .parse()
            .map_err(|_| bad(format!("bad port {port:?}")))?;
        let rtt = Rtt::parse(rtt).map_err(bad)?;
        let proxy = FaultProxy::start(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .await
            .map_err(|e| bad(e.to_string()))?;
        for direction in [Direction::Upstream, Direction::Downstream] {
            proxy.set_latency(direction, rtt.rtt / 2, rtt.jitter / 2);
        }
        proxies.push(proxy);
    }
    let ports: Vec<String> = proxies
        .iter()
        .map(|p| p.local_addr().port().to_string())
        .collect();
    println!("ports {}", ports.join(" "));
    use std::io::Write;
    std::io::stdout()
        .flush()
        .map_err(|e| LoadgenError::Failed(format!("net-proxy: {e}")))?;
    // Until the parent is gone: its end of our standard input closes with it.
    let waited = tokio::task::spawn_blocking(|| {
        use std::io::Read;
        let mut buf = [0u8; 64];
        while std::io::stdin().read(&mut buf).is_ok_and(|n| n > 0) {}
    });
    let _ = waited.await;
    drop(proxies);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_by_name_by_value_and_per_master() {
        let rtt = |p: &str| NetworkProfile::parse(p).unwrap().per_master(5).unwrap();
        assert_eq!(rtt("cross-zone")[4], Rtt::new(1500, 300));
        assert_eq!(rtt("same-zone")[0], Rtt::new(300, 50));
        assert_eq!(rtt("1ms±0.2ms")[0], Rtt::new(1000, 200));
        assert_eq!(rtt("2ms+-1ms")[0], Rtt::new(2000, 1000));
        assert_eq!(rtt("750us")[0], Rtt::new(750, 0));
        let mixed = rtt("loopback,loopback,same-zone,cross-zone,1ms");
        assert_eq!(mixed[0], Rtt::new(0, 0));
        assert_eq!(mixed[4], Rtt::new(1000, 0));
        assert!(!NetworkProfile::parse("loopback").unwrap().adds_latency());
        assert!(NetworkProfile::parse("loopback,1ms")
            .unwrap()
            .adds_latency());
    }

    #[test]
    fn bad_profiles_are_refused_naming_the_part() {
        let err = |p: &str| NetworkProfile::parse(p).unwrap_err();
        assert!(err("far").contains("\"far\""), "{}", err("far"));
        assert!(err("far").contains("cross-zone"));
        assert!(err("1ms±2ms").contains("larger than the round trip"));
        assert!(err("2s").contains("more than the 1 s"));
        let two = NetworkProfile::parse("1ms,2ms").unwrap();
        assert!(two
            .per_master(5)
            .unwrap_err()
            .contains("2 round trips for 5 masters"));
    }

    #[test]
    fn the_spec_the_proxy_reads_is_the_round_trip_exactly() {
        let r = Rtt::new(1500, 300);
        assert_eq!(Rtt::parse(&r.spec()).unwrap(), r);
    }
}
