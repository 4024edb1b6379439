import Glibc

/// How the HTTP server listens and the limits it enforces.
public struct HTTPServerConfiguration: Sendable, Equatable {
    /// The address to bind: an IPv4 or IPv6 literal (`127.0.0.1`, `0.0.0.0`, `::1`).
    public var host = "127.0.0.1"
    /// The TCP port; 0 lets the system pick a free one (read it back from `HTTPServer.port`).
    public var port = 8080
    /// The server's event loops: each a thread of its own running a libmicrohttpd daemon
    /// (epoll), all accepting from one listening socket (`EventLoop`).
    public var threads = HTTPServerConfiguration.processorCount
    /// The largest request body accepted; longer bodies get 413 and are never buffered. A route
    /// may accept less (`HTTPResponder.maxBodyBytes(for:)`: the app shell's actions take 16 KiB).
    public var maxBodyBytes = 1_048_576
    /// The bytes all request bodies being received may hold together; a body that does not fit
    /// gets 503 with `Retry-After` and its connection closes. Each body holds its declared length
    /// (`Content-Length`) from its first byte, or what arrived of a chunked one.
    public var maxBufferedBodyBytes = 67_108_864
    /// libmicrohttpd's per-connection memory: the request line and headers must fit in it
    /// (a larger header block gets 431). 16 KiB holds a `Cookie` field of about 7 800 bytes
    /// (libmicrohttpd keeps the parsed cookies in the same memory) and other fields of about
    /// 15 600: nginx and Apache allow 8 KiB per field. libmicrohttpd zeroes all of it after every
    /// request, so it costs time per request as well as memory per connection.
    public var connectionMemoryBytes = 16_384
    /// Open connections at most, across all clients.
    public var maxConnections = 1024
    /// Open connections at most from one IP address.
    public var maxConnectionsPerIP = 256
    /// Seconds a connection may sit idle before it is closed. libmicrohttpd reads 0 as "never",
    /// which would let a slow client hold a connection for ever: the server uses at least 1.
    public var idleTimeoutSeconds = 30
    /// Seconds a connection kept alive after an answer may wait for its next request before it is
    /// closed (Apache's `KeepAliveTimeout`). Near `maxConnections` the server closes waiting
    /// connections sooner, oldest first, and answers with `Connection: close`.
    public var keepAliveTimeoutSeconds = 5
    /// The host names requests may name; any other gets 421 before the responder runs.
    public var allowedHosts = AllowedHosts.loopback
    /// The proxies whose `X-Forwarded-For` gives `Request.clientAddress` (none by default).
    public var trustedProxies = TrustedProxies.none
    /// Seconds a graceful shutdown waits for in-flight requests before closing them.
    public var shutdownTimeoutSeconds = 10
    /// Whether each request writes a JSON access-log line to standard output.
    public var accessLog = true
    /// Seconds between heartbeat comments on open event streams (0: none).
    public var eventHeartbeatSeconds = 15
    /// Open event streams at most, across all clients; a further one gets 503 with `Retry-After`.
    /// Whatever this says, streams never take more than three quarters of `maxConnections`: the
    /// rest stay free for ordinary requests.
    public var maxEventStreams = 768
    /// Open event streams at most from one IP address (0: no limit of its own); a further one gets
    /// 429 with `Retry-After`. Never more than three quarters of `maxConnectionsPerIP` (when that
    /// is set). Behind a reverse proxy every client has the proxy's address: raise both.
    public var maxEventStreamsPerIP = 64
    /// The bytes an event stream may hold queued for a client that does not read them; a stream
    /// that falls further behind is ended and its connection closed (an `EventSource` reconnects
    /// with `Last-Event-ID` and gets the current state).
    public var eventStreamBacklogBytes = 65_536

    /// HTTPS: the files of the certificate chain and the private key; `nil` (the default)
    /// serves plain HTTP. With them the server speaks only HTTPS (TLS 1.2 and 1.3) on `port`.
    public var tls: TLSFiles?
    /// The `max-age` of the `Strict-Transport-Security` field every HTTPS answer carries, in
    /// seconds (0: none). Two years, as Mozilla's guidelines say.
    public var strictTransportSecuritySeconds = 63_072_000

    /// HTTPS: seconds a new connection may take to shake hands and begin its first request; past
    /// them it is closed (a stalled handshake holds a connection slot no longer).
    public var handshakeTimeoutSeconds = 10

    /// The PEM files an HTTPS server loads (again on `HTTPServer.reloadCertificate()`).
    public struct TLSFiles: Sendable, Equatable {
        /// The certificate, then the chain up to (not including) the root.
        public var certificatePath: String
        /// The certificate's private key, unencrypted.
        public var keyPath: String

        /// The files at `certificatePath` and `keyPath`.
        public init(certificatePath: String, keyPath: String) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
        }
    }

    /// The defaults.
    public init() {}

    /// The streams the server admits in all: `maxEventStreams`, within three quarters of
    /// `maxConnections`.
    var eventStreamLimit: Int { min(maxEventStreams, maxConnections * 3 / 4) }

    /// The streams the server admits from one address (0: no limit): `maxEventStreamsPerIP`,
    /// within three quarters of `maxConnectionsPerIP`.
    var eventStreamLimitPerIP: Int {
        guard maxConnectionsPerIP > 0 else { return maxEventStreamsPerIP }
        let room = max(1, maxConnectionsPerIP * 3 / 4)
        return maxEventStreamsPerIP > 0 ? min(maxEventStreamsPerIP, room) : room
    }

    /// The number of online processors (at least 1).
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
