import AppShellConcurrency
import Glibc

/// How a `TestClient` speaks HTTPS: the CA file it trusts, the name it checks the server's
/// certificate for, and optionally the GnuTLS priorities it offers (to try an old protocol).
///
/// With `APPSHELL_TEST_TLS` set to a directory holding `server.pem` and `server.key` (`make
/// test-tls` makes them), every `LiveServer` serves HTTPS with that pair and every client of its
/// port (`TestClient`, `RawConnection`) speaks TLS to it: the suites run over TLS unchanged.
public struct TestTLS: Sendable, Equatable {
    /// A PEM file of the certificates to trust (a self-signed server certificate is its own CA).
    public var trustFile: String
    /// The name (or IP address) the certificate must be valid for; sent as SNI unless an address.
    public var serverName: String
    /// GnuTLS priorities (`NORMAL:-VERS-ALL:+VERS-TLS1.1`); `nil`: GnuTLS's defaults.
    public var priorities: String?

    /// The directory of the pair every `LiveServer` serves (`APPSHELL_TEST_TLS`), if set.
    public static let everywhere: String? = getenv("APPSHELL_TEST_TLS").map { String(cString: $0) }.flatMap {
        $0.isEmpty ? nil : $0
    }

    /// The ports of the live servers serving HTTPS because of `everywhere`, and how to reach them.
    private static let servers = Locked<[Int: TestTLS]>([:])

    /// Notes that the live server on `port` serves HTTPS trusting `tls` (`nil`: no longer).
    static func register(_ tls: TestTLS?, port: Int) { servers.withLock { $0[port] = tls } }

    /// How to reach the live server on `port`: `nil` when it serves plain HTTP.
    static func registered(port: Int) -> TestTLS? { servers.withLock { $0[port] } }

    /// Trusts `trustFile` for `serverName` (by default the address tests connect to).
    public init(trustFile: String, serverName: String = "127.0.0.1", priorities: String? = nil) {
        self.trustFile = trustFile
        self.serverName = serverName
        self.priorities = priorities
    }
}
