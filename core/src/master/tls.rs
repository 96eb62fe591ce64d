//! TLS for `rediss://` masters (rustls with the ring provider).
//!
//! Trust: the system's roots (rustls-native-certs, which also reads `SSL_CERT_FILE` and
//! `SSL_CERT_DIR`), loaded once per process. `#insecure` at the end of a URL skips
//! certificate verification (self-signed test servers only).

use std::sync::{Arc, LazyLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;

use crate::vote::FailureKind;

use super::Failure;

static PROVIDER: LazyLock<Arc<CryptoProvider>> =
    LazyLock::new(|| Arc::new(rustls::crypto::ring::default_provider()));

/// The system's trust roots, loaded once (reading them takes milliseconds).
static SYSTEM_ROOTS: LazyLock<Arc<RootCertStore>> = LazyLock::new(|| {
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(found.certs);
    Arc::new(roots)
});

/// The client configuration of a `rediss://` master.
pub(crate) fn client_config(insecure: bool) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(Arc::clone(&PROVIDER))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?;
    let config = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate))
            .with_no_client_auth()
    } else {
        builder
            .with_root_certificates(Arc::clone(&SYSTEM_ROOTS))
            .with_no_client_auth()
    };
    Ok(Arc::new(config))
}

/// Runs the TLS handshake over `tcp`; a failure names the certificate problem.
pub(crate) async fn handshake(
    config: &Arc<ClientConfig>,
    host: &str,
    tcp: TcpStream,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, Failure> {
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        Failure::new(
            FailureKind::Tls,
            format!("{host:?} is not a valid TLS server name: {e}"),
        )
    })?;
    tokio_rustls::TlsConnector::from(Arc::clone(config))
        .connect(name, tcp)
        .await
        .map_err(|e| Failure::new(FailureKind::Tls, format!("TLS handshake failed: {e}")))
}

/// `#insecure`: accepts any certificate (signatures are still checked, so the handshake is
/// real TLS; only the identity is not).
#[derive(Debug)]
struct AcceptAnyCertificate;

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &PROVIDER.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &PROVIDER.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        PROVIDER
            .signature_verification_algorithms
            .supported_schemes()
    }
}
