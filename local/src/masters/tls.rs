//! TLS-only masters: the certificates they serve, and a throw-away self-signed one.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The certificates of TLS-only masters ([`LocalMasters::start_tls_with`](super::LocalMasters::start_tls_with)).
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The server's certificate (PEM), for 127.0.0.1.
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The CA whose client certificates the server accepts (`--tls-ca-cert-file`).
    pub client_ca: PathBuf,
    /// Require a client certificate signed by `client_ca` (mutual TLS).
    pub require_client_cert: bool,
}

impl TlsFiles {
    /// The server's `--tls-*` arguments.
    pub(super) fn add_server_args(&self, command: &mut Command) {
        let auth_clients = if self.require_client_cert {
            "yes"
        } else {
            "no"
        };
        command
            .arg("--tls-cert-file")
            .arg(&self.cert)
            .arg("--tls-key-file")
            .arg(&self.key)
            .arg("--tls-ca-cert-file")
            .arg(&self.client_ca)
            .args(["--tls-auth-clients", auth_clients]);
    }
}

/// A fresh self-signed certificate for 127.0.0.1 in `dir` (`server.crt`, `server.key`).
pub(super) fn self_signed(dir: &Path) -> io::Result<TlsFiles> {
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    // Output captured (not shown): openssl's own words go into the error if it fails.
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args([OsStr::new("-keyout"), key.as_os_str()])
        .args([OsStr::new("-out"), cert.as_os_str()])
        .stdin(Stdio::null())
        .output();
    match made {
        Ok(out) if out.status.success() => Ok(TlsFiles {
            client_ca: cert.clone(),
            cert,
            key,
            require_client_cert: false,
        }),
        Ok(out) => Err(io::Error::other(format!(
            "openssl could not make a test certificate ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::other(
            "openssl not found: install it (`apt-get install openssl`) for TLS masters",
        )),
        Err(e) => Err(e),
    }
}
