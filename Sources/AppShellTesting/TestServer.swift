import AppShellHTTP

/// How a test reaches the app: over a socket or in process.
public enum TestMode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A real server on 127.0.0.1 and a free port (`LiveServer`): everything a browser meets,
    /// libmicrohttpd's parsing, keep-alive, limits and event streams included.
    case live
    /// No socket: each request goes straight into the server's responder path
    /// (`InProcessClient`); quicker, with no port, and what it leaves out is listed there.
    case inProcess

    /// The mode's name, for test names.
    public var description: String { rawValue }
}

/// An app under test in one of the two modes, with one client API over both: a test takes a
/// `TestMode` (`@Test(arguments: TestMode.allCases)`) and runs the same requests either way.
///
/// ```swift
/// let server = try TestServer(mode, responder: try app.makeResponder())
/// let client = server.client()
/// #expect(try client.get("/healthz").status == 200)
/// ```
public final class TestServer: Sendable {
    /// The mode this server answers in.
    public let mode: TestMode
    /// The server: listening when live; never started in process (its responder path is used).
    package let server: HTTPServer
    private let live: LiveServer?
    /// The port a live server listens on; `nil` in process.
    public var port: Int? { live?.port }

    /// `responder` with `configuration` (for a live server its host and port are replaced); live
    /// servers start listening now.
    public convenience init(
        _ mode: TestMode, configuration: HTTPServerConfiguration = LiveServer.testConfiguration,
        responder: any HTTPResponder
    ) throws {
        try self.init(mode, configuration: configuration, responder: responder, statistics: ServerStatistics())
    }

    /// `responder` with `configuration` (for a live server its host and port are replaced),
    /// counting into `statistics` (an app's, for its `/metrics`); live servers start listening now.
    package init(
        _ mode: TestMode, configuration: HTTPServerConfiguration = LiveServer.testConfiguration,
        responder: any HTTPResponder, statistics: ServerStatistics
    ) throws {
        self.mode = mode
        switch mode {
        case .live:
            let live = try LiveServer(configuration: configuration, responder: responder, statistics: statistics)
            self.live = live
            server = live.server
        case .inProcess:
            live = nil
            server = HTTPServer(configuration: configuration, responder: responder, statistics: statistics)
        }
    }

    /// A new client with an empty cookie jar; it keeps the server running for as long as it lives.
    public func client() -> any HTTPTestClient {
        if let live {
            let client = live.client()
            client.keptAlive = live
            return client
        }
        return InProcessClient(server: server)
    }

    /// Stops a live server gracefully (nothing to stop in process).
    @discardableResult
    public func stop(timeoutSeconds: Int = 5) -> Bool { live?.stop(timeoutSeconds: timeoutSeconds) ?? true }
}
