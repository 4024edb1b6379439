import AppShellHTTP

/// A real `HTTPServer` on 127.0.0.1 and a free port, for tests; stopped by `stop()` or when released.
public final class LiveServer: Sendable {
    /// The running server.
    package let server: HTTPServer

    /// Starts `responder` on a free port with `configuration` (its host and port are replaced).
    public convenience init(
        configuration: HTTPServerConfiguration = LiveServer.testConfiguration, responder: any HTTPResponder
    ) throws {
        try self.init(configuration: configuration, responder: responder, statistics: ServerStatistics())
    }

    /// Starts `responder` on a free port with `configuration` (its host and port are replaced),
    /// counting into `statistics` (an app's, for its `/metrics`).
    package init(
        configuration: HTTPServerConfiguration = LiveServer.testConfiguration, responder: any HTTPResponder,
        statistics: ServerStatistics
    ) throws {
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = 0
        // The suites over TLS (`TestTLS.everywhere`): every live server serves the shared pair.
        var shared: TestTLS?
        if let directory = TestTLS.everywhere, configuration.tls == nil {
            configuration.tls = HTTPServerConfiguration.TLSFiles(
                certificatePath: directory + "/server.pem", keyPath: directory + "/server.key")
            shared = TestTLS(trustFile: directory + "/server.pem")
        }
        server = HTTPServer(configuration: configuration, responder: responder, statistics: statistics)
        try server.start()
        if let shared { TestTLS.register(shared, port: server.port) }
    }

    /// Defaults for tests: two threads, no access log.
    public static var testConfiguration: HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.threads = 2
        configuration.accessLog = false
        return configuration
    }

    /// The port the daemon reported.
    public var port: Int { server.port }

    /// A new client for this server.
    public func client() -> TestClient { TestClient(port: port) }

    /// Stops the server gracefully.
    @discardableResult
    public func stop(timeoutSeconds: Int = 5) -> Bool { server.shutdown(timeoutSeconds: timeoutSeconds) }

    deinit {
        server.shutdown(timeoutSeconds: 0)
        TestTLS.register(nil, port: port)
    }
}
