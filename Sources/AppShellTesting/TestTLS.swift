/// How a `TestClient` speaks HTTPS: the CA file it trusts, the name it checks the server's
/// certificate for, and optionally the GnuTLS priorities it offers (to try an old protocol).
public struct TestTLS: Sendable, Equatable {
    /// A PEM file of the certificates to trust (a self-signed server certificate is its own CA).
    public var trustFile: String
    /// The name (or IP address) the certificate must be valid for; sent as SNI unless an address.
    public var serverName: String
    /// GnuTLS priorities (`NORMAL:-VERS-ALL:+VERS-TLS1.1`); `nil`: GnuTLS's defaults.
    public var priorities: String?

    /// Trusts `trustFile` for `serverName` (by default the address tests connect to).
    public init(trustFile: String, serverName: String = "127.0.0.1", priorities: String? = nil) {
        self.trustFile = trustFile
        self.serverName = serverName
        self.priorities = priorities
    }
}
