//! The `floor` reference driver of `make bench-peers`: one thread, one blocking socket per
//! master, and per cycle a plain `SET key token NX PX ttl` written to every master and every
//! reply read, then a plain `DEL` the same way. No lock logic: no script, no validity, no
//! token check, no quorum shortcut, no async runtime. In W2 every task's command of a round
//! goes out in one write per master (pipelined), then all the replies are read.
//!
//! Why: it is what these commands cost on this machine and these masters, measured in the
//! same run as everything else, so a W1 rate or a W2 CPU figure can be read against it (a
//! library can come close to it, not far beyond it).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

use redlock_peers_workload::{BlockingClient, RoundClient};

#[derive(Debug)]
struct Master {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

/// Plain sockets to every master, used by one thread at a time.
#[derive(Debug)]
pub struct Floor {
    masters: Mutex<Vec<Master>>,
    ttl_ms: u128,
}

impl Floor {
    /// Connects to every `redis://host:port` URL (no password, no TLS: the harness's masters).
    pub fn connect(urls: &[String], ttl: Duration) -> Result<Floor, String> {
        let masters = urls
            .iter()
            .map(|url| {
                let addr = url
                    .strip_prefix("redis://")
                    .filter(|a| !a.contains('@') && !a.contains('/'))
                    .ok_or_else(|| {
                        format!("{url}: the floor driver takes redis://host:port only")
                    })?;
                let writer = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
                writer.set_nodelay(true).map_err(|e| e.to_string())?;
                let reader = BufReader::new(writer.try_clone().map_err(|e| e.to_string())?);
                Ok(Master { writer, reader })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Floor {
            masters: Mutex::new(masters),
            ttl_ms: ttl.as_millis(),
        })
    }

    /// Writes `commands` to every master in one write, then reads one reply line per command
    /// from each; returns, per command, how many replies were `expected`.
    fn everywhere(&self, commands: &[Vec<&str>], expected: &str) -> Result<Vec<usize>, String> {
        let mut encoded = String::new();
        for command in commands {
            encoded.push_str(&format!("*{}\r\n", command.len()));
            for arg in command {
                encoded.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
            }
        }
        let mut masters = self.masters.lock().map_err(|e| e.to_string())?;
        for m in masters.iter_mut() {
            m.writer
                .write_all(encoded.as_bytes())
                .map_err(|e| e.to_string())?;
        }
        let mut line = String::new();
        let mut matched = vec![0; commands.len()];
        for m in masters.iter_mut() {
            for count in matched.iter_mut() {
                line.clear();
                m.reader.read_line(&mut line).map_err(|e| e.to_string())?;
                *count += usize::from(line.trim_end() == expected);
            }
        }
        Ok(matched)
    }

    fn masters(&self) -> Result<usize, String> {
        Ok(self.masters.lock().map_err(|e| e.to_string())?.len())
    }
}

const TOKEN: &str = "0123456789abcdef0123456789abcdef01234567";

impl RoundClient for Floor {
    fn acquire_all(&self, keys: &[String]) -> Result<Vec<Result<(), String>>, String> {
        let ttl = self.ttl_ms.to_string();
        let commands: Vec<Vec<&str>> = keys
            .iter()
            .map(|key| vec!["SET", key, TOKEN, "NX", "PX", &ttl])
            .collect();
        let n = self.masters()?;
        Ok(self
            .everywhere(&commands, "+OK")?
            .into_iter()
            .map(|granted| match granted > n / 2 {
                true => Ok(()),
                false => Err(format!("{granted} of {n} masters granted")),
            })
            .collect())
    }
    fn release_all(&self, keys: &[String]) -> Result<(), String> {
        let commands: Vec<Vec<&str>> = keys.iter().map(|key| vec!["DEL", key]).collect();
        self.everywhere(&commands, ":1").map(drop)
    }
}

impl BlockingClient for Floor {
    type Guard = String;
    fn acquire(&self, key: &str) -> Result<String, String> {
        self.acquire_all(&[key.to_string()])?
            .remove(0)
            .map(|()| key.to_string())
    }
    fn release(&self, key: String) -> Result<(), String> {
        self.release_all(&[key])
    }
}
