//! The `floor` reference driver of `make bench-peers` (W1 only): one thread, one blocking
//! socket per master, and per cycle a plain `SET key token NX PX ttl` written to every master
//! and every reply read, then a plain `DEL` the same way. No lock logic: no script, no
//! validity, no token check, no quorum shortcut, no async runtime.
//!
//! Why: it is what one serial cycle of these commands costs on this machine and these
//! masters, measured in the same run as everything else, so a W1 figure can be read against
//! it (a library can come close to it, not far beyond it).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

use redlock_peers_workload::BlockingClient;

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

    /// Writes `command` to every master, then reads one reply line from each; returns how
    /// many replies were `expected`.
    fn everywhere(&self, command: &[&str], expected: &str) -> Result<usize, String> {
        let mut encoded = format!("*{}\r\n", command.len());
        for arg in command {
            encoded.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        let mut masters = self.masters.lock().map_err(|e| e.to_string())?;
        for m in masters.iter_mut() {
            m.writer
                .write_all(encoded.as_bytes())
                .map_err(|e| e.to_string())?;
        }
        let mut line = String::new();
        let mut matched = 0;
        for m in masters.iter_mut() {
            line.clear();
            m.reader.read_line(&mut line).map_err(|e| e.to_string())?;
            matched += usize::from(line.trim_end() == expected);
        }
        Ok(matched)
    }
}

impl BlockingClient for Floor {
    type Guard = String;
    fn acquire(&self, key: &str) -> Result<String, String> {
        let ttl = self.ttl_ms.to_string();
        let token = "0123456789abcdef0123456789abcdef01234567";
        let granted = self.everywhere(&["SET", key, token, "NX", "PX", &ttl], "+OK")?;
        let n = self.masters.lock().map_err(|e| e.to_string())?.len();
        if granted > n / 2 {
            Ok(key.to_string())
        } else {
            Err(format!("{granted} of {n} masters granted"))
        }
    }
    fn release(&self, key: String) -> Result<(), String> {
        self.everywhere(&["DEL", &key], ":1").map(drop)
    }
}
