//! The core client against the real sandbox over loopback HTTP.

use casebook_core::ErrorCode;
use casebook_core::net::connection::Connection;

#[tokio::test]
async fn health_reaches_the_sandbox() {
    let sandbox = casebook_sandbox::start(Default::default()).await.unwrap();
    let conn = Connection::new(sandbox.base_url()).unwrap();
    let health = conn.health().await.expect("health answers");
    assert_eq!(health.status.as_deref(), Some("ok"));
    sandbox.stop().await;
}

#[tokio::test]
async fn health_of_a_closed_port_is_a_network_error() {
    // Bind then drop a listener so the port is known to be closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conn = Connection::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let err = conn.health().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Network, "{}", err.message());
}
