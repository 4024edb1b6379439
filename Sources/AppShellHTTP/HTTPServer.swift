import AppShellConcurrency
import CMicroHTTPD
import Glibc
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: an internal epoll thread pool calls one responder.
///
/// ```swift
/// let server = HTTPServer(configuration: config, responder: router)
/// try server.start()
/// waitForTerminationSignal()
/// server.shutdown()
/// ```
///
/// A started server is owned by its daemon as well: `start()` gives libmicrohttpd a strong
/// reference for its callbacks, and `shutdown()` takes it back once the daemon has stopped. So a
/// server runs until it is shut down, even when nothing else holds it.
public final class HTTPServer: Sendable {
    /// The settings the server was made with.
    public let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let log: AccessLog
    private let state = Locked(State())
    /// Request counters.
    public let statistics: ServerStatistics
    /// The open event streams.
    let streams: EventStreamRegistry
    /// The requests waiting for a deferred answer.
    let deferredResponses = DeferredResponses()
    /// Set once a graceful shutdown began: responses then carry `Connection: close`.
    let draining = Atomic<Bool>(false)
    /// The responder when it is a router: then requests are counted by route. Held by reference:
    /// an optional `Router` bound per request was copied each time (a dozen reference counts).
    let router: RouterReference?
    /// Requests by route, status and latency (also in `statistics.requests`).
    let requestMetrics: RequestMetrics
    /// The label index of requests answered before any route: the last one.
    let unroutedLabel: Int

    /// The daemon pointer (libmicrohttpd's daemon functions are thread-safe) and the strong
    /// reference to the server its callbacks use as their `cls`.
    private struct Daemon: @unchecked Sendable {
        let pointer: OpaquePointer
        let server: Unmanaged<HTTPServer>
    }

    private struct State {
        var daemon: Daemon?
        var port = 0
        var stopped = false
    }

    /// A server that answers every request with `responder` and counts into `statistics`; call
    /// `start()` to listen. The event streams' heartbeats run on `timers` (the app's shared queue,
    /// which its owner starts and stops), or on a queue of the server's own when it is `nil`.
    public init(
        configuration: HTTPServerConfiguration, responder: any HTTPResponder,
        statistics: ServerStatistics = ServerStatistics(), timers: TimerQueue? = nil
    ) {
        self.configuration = configuration
        self.statistics = statistics
        self.responder = responder
        self.log = AccessLog(enabled: configuration.accessLog)
        self.streams = EventStreamRegistry(
            limit: configuration.eventStreamLimit, limitPerAddress: configuration.eventStreamLimitPerIP,
            statistics: statistics, timers: timers)
        router = (responder as? Router).map(RouterReference.init)
        requestMetrics = statistics.adopt(routes: router?.router.routeLabels ?? [])
        unroutedLabel = requestMetrics.routes.count - 1
    }

    /// The number of requests waiting for a deferred answer now (their connections suspended).
    public var waitingDeferredResponses: Int { deferredResponses.count }

    /// The number of event streams open now.
    public var openEventStreams: Int { streams.count }

    /// The bound port (the real one when configured with port 0); 0 before `start()`.
    public var port: Int { state.withLock { $0.port } }

    /// Binds and starts the worker threads; throws when the address is invalid or in use.
    public func start() throws(HTTPServerError) {
        let config = configuration
        var storage = sockaddr_storage()
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_USE_TURBO.rawValue | MHD_USE_ITC.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue
        if !SocketAddress.fill(&storage, host: config.host, port: config.port) {
            throw HTTPServerError("host \(config.host) is not an IPv4 or IPv6 address")
        }
        if Int32(storage.ss_family) == AF_INET6 { flags |= MHD_USE_IPv6.rawValue }
        // The daemon's reference, given back by `shutdown()` after `MHD_stop_daemon`.
        let retained = Unmanaged.passRetained(self)
        let context = retained.toOpaque()
        let daemon: OpaquePointer? = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                var settings = appshell_mhd_settings(
                    flags: flags, address: address, thread_pool_size: UInt32(config.threads),
                    connection_limit: UInt32(config.maxConnections),
                    per_ip_connection_limit: UInt32(config.maxConnectionsPerIP),
                    connection_timeout_seconds: UInt32(max(1, config.idleTimeoutSeconds)),
                    connection_memory_limit: config.connectionMemoryBytes, listen_backlog: 1024,
                    strict_for_client: 1,
                    accept_policy: acceptPolicyCallback, access_handler: accessHandlerCallback,
                    completed_handler: completedCallback,
                    uri_log_handler: requestStartedCallback, connection_handler: connectionCallback,
                    context: context)
                return appshell_mhd_start(&settings)
            }
        }
        guard let daemon else {
            retained.release()
            throw HTTPServerError(
                "could not listen on \(config.host):\(config.port) (address in use, or not allowed)")
        }
        state.withLock {
            $0.daemon = Daemon(pointer: daemon, server: retained)
            $0.port = Int(appshell_mhd_bound_port(daemon))
        }
        streams.start(heartbeatSeconds: config.eventHeartbeatSeconds)
    }

    /// Stops gracefully: refuses new connections, lets in-flight requests finish for up to
    /// `timeoutSeconds` (the configured shutdown timeout by default), then closes everything.
    /// Returns whether every in-flight request finished in time. Safe to call more than once.
    @discardableResult
    public func shutdown(timeoutSeconds: Int? = nil) -> Bool {
        guard
            let running = state.withLock({ state -> Daemon? in
                guard !state.stopped, let daemon = state.daemon else { return nil }
                state.stopped = true
                return daemon
            })
        else { return true }
        let daemon = running.pointer
        // Stop accepting: from now on a new connection is closed as soon as it is accepted.
        // (MHD_quiesce_daemon would close the listening socket instead, but with an epoll thread
        // pool it races with the workers and libmicrohttpd 0.9.75 aborts the process.)
        draining.store(true, ordering: .relaxed)
        // Event streams never finish by themselves, and a suspended connection must be resumed
        // before the daemon stops: end them all now, and admit no new one (a client may ask for
        // one again on its open connection).
        streams.closeAll()
        // Requests waiting for a deferred answer (a login's password check, queued or running)
        // are in flight like any other: their work goes on and they are waited for.
        let deadline = Clock.monotonicMicros() + (timeoutSeconds ?? configuration.shutdownTimeoutSeconds) * 1_000_000
        while statistics.inFlightCounter.load(ordering: .acquiring) > 0 && Clock.monotonicMicros() < deadline {
            usleep(5_000)
        }
        let finished = statistics.inFlightCounter.load(ordering: .acquiring) == 0
        // No connection may still be suspended when libmicrohttpd stops (it aborts): those whose
        // work outlived the timeout are answered 503, and given a moment to be sent; work that
        // had not begun finds its request answered and does nothing.
        if deferredResponses.answerAll(with: HTTPServer.shuttingDown, evenIfClaimed: true) > 0 {
            let grace = Clock.monotonicMicros() + 500_000
            while statistics.inFlightCounter.load(ordering: .acquiring) > 0 && Clock.monotonicMicros() < grace {
                usleep(5_000)
            }
        }
        MHD_stop_daemon(daemon)
        state.withLock { $0.daemon = nil }
        // No callback runs after MHD_stop_daemon: the daemon's reference can go (this is never
        // the last one, the caller holds the server).
        running.server.release()
        return finished
    }

    /// The answer to a request the server will not finish because it is shutting down.
    static let shuttingDown = Response.error(
        HTTPError(.serviceUnavailable, "the server is shutting down", headers: ["Retry-After": "5"]), for: nil)

    // No deinit: a started server is held by its daemon until `shutdown()`, so one that is
    // deinitialised has no daemon left to stop.
}

/// A router held by reference (see `HTTPServer.router`).
final class RouterReference: Sendable {
    let router: Router

    init(_ router: Router) { self.router = router }
}
