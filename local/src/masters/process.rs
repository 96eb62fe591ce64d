//! One master's process, and the probes that start one: a free port, its first PING, the end
//! of its log.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use crate::resp::{self, Decoder, Reply};

/// A started master, while it runs.
pub(super) struct Server {
    pub(super) port: u16,
    pub(super) child: Option<Child>,
    pub(super) paused: bool,
    /// Its wall clock's offset from the real one, in ms (masters with a fake clock).
    pub(super) clock_offset_ms: i64,
}

impl Server {
    pub(super) fn pid(&self) -> Option<i32> {
        self.child.as_ref().map(|c| c.id() as i32)
    }
    pub(super) fn signal(&self, sig: libc::c_int) -> std::io::Result<()> {
        let Some(pid) = self.pid() else {
            return Ok(());
        };
        // SAFETY: kill(2) with a pid we started and still own (not yet reaped).
        if unsafe { libc::kill(pid, sig) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    pub(super) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill(); // SIGKILL works on a stopped process too
            let _ = child.wait();
        }
        self.paused = false;
    }
}

pub(super) fn free_port() -> std::io::Result<u16> {
    loop {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        if port != 6379 {
            return Ok(port);
        }
    }
}

/// True once the server on `port` answers PING (after AUTH with `password`).
pub(super) fn ping(port: u16, password: Option<&str>) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut decoder = Decoder::default();
    let mut ask = |args: &[&str], want: &str| {
        stream.write_all(&resp::encode(args)).is_ok()
            && decoder.read(&mut stream).ok() == Some(Reply::Status(want.into()))
    };
    password.is_none_or(|password| ask(&["AUTH", password], "OK")) && ask(&["PING"], "PONG")
}

pub(super) fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
