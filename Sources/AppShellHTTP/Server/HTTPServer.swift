import AppShellConcurrency
import CMicroHTTPD
import Glibc
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: event loops of its own (`EventLoop`, one per configured
/// thread, each with a daemon) call one responder.
///
/// ```swift
/// let server = HTTPServer(configuration: config, responder: router)
/// try server.start()
/// waitForTerminationSignal()
/// server.shutdown()
/// ```
///
/// A started server is owned by its daemons as well: `start()` gives libmicrohttpd a strong
/// reference for its callbacks, and `shutdown()` takes it back once the daemons have stopped. So
/// a server runs until it is shut down, even when nothing else holds it.
package final class HTTPServer: Sendable {
    /// The settings the server was made with.
    package let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let log: AccessLog
    private let state = Locked(State())
    /// Request counters.
    package let statistics: ServerStatistics
    /// The open event streams.
    let streams: EventStreamRegistry
    /// The requests waiting for a deferred answer.
    let deferredResponses = DeferredResponses()
    /// The sockets of suspended connections (open event streams, requests waiting for a deferred
    /// answer), watched for a hang-up by one thread.
    let hangups = HangupWatcher()
    /// Set once a graceful shutdown began: responses then carry `Connection: close`.
    let draining = Atomic<Bool>(false)
    /// The responder when it is a router: then requests are counted by route. Held by reference:
    /// an optional `Router` bound per request was copied each time (a dozen reference counts).
    let router: RouterReference?
    /// Requests by route, status and latency (also in `statistics.requests`).
    let requestMetrics: RequestMetrics
    /// The label index of requests answered before any route: the last one.
    let unroutedLabel: Int

    /// The open connections of each client address (the per-address limit).
    let connectionsPerAddress: ConnectionsPerAddress
    /// The bytes the request bodies being received hold now (at most `maxBufferedBodyBytes`).
    let bufferedBodyBytes = Atomic<Int>(0)
    /// HTTPS: the certificate new connections get (loaded by `start()`).
    let certificates = Locked<TLSCertificates?>(nil)
    /// HTTPS: the `Strict-Transport-Security` value every answer carries, NUL-terminated.
    let strictTransportSecurity: [CChar]?

    /// The running event loops, the socket their daemons accept from, and the strong reference to
    /// the server the daemons' callbacks use as their `cls`.
    private struct Running: @unchecked Sendable {
        let loops: [EventLoop]
        let listener: ListeningSocket
        let server: Unmanaged<HTTPServer>
    }

    private struct State {
        var running: Running?
        var port = 0
        var stopped = false
    }

    /// A server that answers every request with `responder` and counts into `statistics`; call
    /// `start()` to listen. The event streams' heartbeats run on `timers` (the app's shared queue,
    /// which its owner starts and stops), or on a queue of the server's own when it is `nil`.
    package init(
        configuration: HTTPServerConfiguration, responder: any HTTPResponder,
        statistics: ServerStatistics = ServerStatistics(), timers: TimerQueue? = nil
    ) {
        self.configuration = configuration
        self.statistics = statistics
        self.responder = responder
        self.log = AccessLog(enabled: configuration.accessLog)
        self.streams = EventStreamRegistry(
            limit: configuration.eventStreamLimit, limitPerAddress: configuration.eventStreamLimitPerIP,
            statistics: statistics, timers: timers, hangups: hangups)
        connectionsPerAddress = ConnectionsPerAddress(limit: configuration.maxConnectionsPerIP)
        router = (responder as? Router).map(RouterReference.init)
        requestMetrics = statistics.adopt(routes: router?.router.routeLabels ?? [])
        unroutedLabel = requestMetrics.routes.count - 1
        strictTransportSecurity =
            configuration.tls != nil && configuration.strictTransportSecuritySeconds > 0
            ? Array("max-age=\(configuration.strictTransportSecuritySeconds)".utf8CString) : nil
    }

    /// HTTPS: loads the certificate and key files again; new connections get the new pair, open
    /// ones keep theirs. A pair that cannot be used leaves the one in use (the result says why).
    /// `nil` for a plain-HTTP server or one not started.
    package func reloadCertificate() -> TLSReload? {
        certificates.withLock { $0 }?.reload()
    }

    /// HTTPS: `reloadCertificate()` when the certificate or key file changed since it was last
    /// loaded and has not changed since the previous call; `nil` when there was nothing to load
    /// (or the server speaks plain HTTP). Called every few seconds, it reloads a renewed pair a
    /// call or two after the renewal wrote it.
    package func reloadCertificateIfFilesChanged() -> TLSReload? {
        certificates.withLock { $0 }?.reloadIfFilesChanged()
    }

    /// HTTPS: the serial number (hex) of the certificate new connections get; `nil` for plain HTTP.
    package var certificateSerialNumber: String? { certificates.withLock { $0?.current.serialNumber } }

    /// The number of requests waiting for a deferred answer now (their connections suspended).
    package var waitingDeferredResponses: Int { deferredResponses.count }

    /// The turns the event loops took so far.
    var eventLoopTurns: Int {
        state.withLock { $0.running?.loops ?? [] }.reduce(0) { $0 + $1.turns.load(ordering: .relaxed) }
    }

    /// The number of event streams open now.
    package var openEventStreams: Int { streams.count }

    /// The bound port (the real one when configured with port 0); 0 before `start()`.
    package var port: Int { state.withLock { $0.port } }

    /// Binds and starts the event loops; throws when the address is invalid or in use.
    package func start() throws(HTTPServerError) {
        let config = configuration
        var identity: TLSIdentity?
        if let files = config.tls {
            do {
                let loaded = try TLSCertificates(certificatePath: files.certificatePath, keyPath: files.keyPath)
                certificates.withLock { $0 = loaded }
                identity = loaded.current
            } catch {
                throw HTTPServerError(error.description)
            }
        }
        let listener = try ListeningSocket(host: config.host, port: config.port, backlog: 1024)
        // The daemons' reference, given back by `shutdown()` after `MHD_stop_daemon`.
        let retained = Unmanaged.passRetained(self)
        let count = max(1, config.threads)
        var loops: [EventLoop] = []
        for index in 0..<count {
            // Each daemon takes its share of the connection limit, as libmicrohttpd's pool does.
            let share = config.maxConnections / count + (index < config.maxConnections % count ? 1 : 0)
            var settings = appshell_mhd_settings(
                flags: MHD_USE_EPOLL.rawValue | MHD_USE_TURBO.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
                    | MHD_USE_ERROR_LOG.rawValue | (listener.isIPv6 ? MHD_USE_IPv6.rawValue : 0),
                listen_socket: listener.descriptor, connection_limit: UInt32(max(1, share)),
                connection_timeout_seconds: UInt32(max(1, config.idleTimeoutSeconds)),
                connection_memory_limit: config.connectionMemoryBytes, strict_for_client: 1,
                accept_policy: acceptPolicyCallback, access_handler: accessHandlerCallback,
                completed_handler: completedCallback,
                uri_log_handler: requestStartedCallback, connection_handler: connectionCallback,
                message_handler: libraryMessageCallback, context: retained.toOpaque(), tls_certificate: nil,
                tls_key: nil, tls_priorities: nil)
            guard let daemon = HTTPServer.startDaemon(&settings, identity) else {
                HTTPServer.stop(loops, listener)
                retained.release()
                throw HTTPServerError("could not start libmicrohttpd on \(config.host):\(config.port)")
            }
            loops.append(
                EventLoop(
                    daemon: daemon, name: count == 1 ? "appshell-http" : "appshell-http-\(index)",
                    idle: IdleConnections(
                        share: max(1, share), keepAliveSeconds: config.keepAliveTimeoutSeconds,
                        firstRequestSeconds: config.tls == nil ? nil : config.handshakeTimeoutSeconds,
                        statistics: statistics),
                    servesTLS: config.tls != nil))
        }
        state.withLock {
            $0.running = Running(loops: loops, listener: listener, server: retained)
            $0.port = listener.port
        }
        for loop in loops { loop.start() }
        streams.start(heartbeatSeconds: config.eventHeartbeatSeconds)
        hangups.start()
    }

    /// Starts a daemon from `settings`, serving HTTPS with `identity` when there is one (TLS 1.2
    /// and 1.3, `TLSCertificates.priorities`). libmicrohttpd reads the PEM text while it starts.
    private static func startDaemon(_ settings: inout appshell_mhd_settings, _ identity: TLSIdentity?) -> OpaquePointer?
    {
        guard let identity else { return appshell_mhd_start(&settings) }
        settings.flags |= MHD_USE_TLS.rawValue
        return identity.certificatePEM.withUnsafeBufferPointer { certificate in
            identity.keyPEM.withUnsafeBufferPointer { key in
                TLSCertificates.priorities.withCString { priorities in
                    settings.tls_certificate = certificate.baseAddress
                    settings.tls_key = key.baseAddress
                    settings.tls_priorities = priorities
                    defer { (settings.tls_certificate, settings.tls_key, settings.tls_priorities) = (nil, nil, nil) }
                    return appshell_mhd_start(&settings)
                }
            }
        }
    }

    /// Stops the daemons of `loops` (whose threads have ended) and closes `listener`, which each
    /// daemon gives back first (`MHD_quiesce_daemon`): it is closed once.
    private static func stop(_ loops: [EventLoop], _ listener: ListeningSocket) {
        for loop in loops {
            _ = MHD_quiesce_daemon(loop.daemon)
            MHD_stop_daemon(loop.daemon)
        }
        listener.close()
    }

    /// Stops gracefully: refuses new connections, lets in-flight requests finish for up to
    /// `timeoutSeconds` (the configured shutdown timeout by default), then closes everything.
    /// Returns whether every in-flight request finished in time. Safe to call more than once.
    @discardableResult
    package func shutdown(timeoutSeconds: Int? = nil) -> Bool {
        guard
            let running = state.withLock({ state -> Running? in
                guard !state.stopped, let running = state.running else { return nil }
                state.stopped = true
                return running
            })
        else { return true }
        // Stop accepting: from now on a new connection is closed as soon as it is accepted.
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
        // work outlived the timeout are answered 503 (their work cancelled), and given a moment to
        // be sent; work that had not begun finds its request answered and does nothing. Work
        // committing its outcome is given that moment to answer itself (its 503 would say
        // nothing was done); still there after it, it is answered 503 too.
        let answered = deferredResponses.answerAll(
            with: HTTPServer.shuttingDown, evenIfClaimed: true, evenIfFinishing: false)
        if answered > 0 || deferredResponses.count > 0 {
            let grace = Clock.monotonicMicros() + 500_000
            while statistics.inFlightCounter.load(ordering: .acquiring) > 0 && Clock.monotonicMicros() < grace {
                usleep(5_000)
            }
        }
        if deferredResponses.answerAll(with: HTTPServer.shuttingDown, evenIfClaimed: true) > 0 {
            let grace = Clock.monotonicMicros() + 100_000
            while statistics.inFlightCounter.load(ordering: .acquiring) > 0 && Clock.monotonicMicros() < grace {
                usleep(5_000)
            }
        }
        hangups.stop()
        for loop in running.loops { loop.stop() }
        HTTPServer.stop(running.loops, running.listener)
        state.withLock { $0.running = nil }
        // No callback runs after MHD_stop_daemon: the daemons' reference can go (this is never
        // the last one, the caller holds the server).
        running.server.release()
        return finished
    }

    /// The answer to a request the server will not finish because it is shutting down.
    static let shuttingDown = Response.error(
        HTTPError(.serviceUnavailable, "the server is shutting down", headers: ["Retry-After": "5"]), for: nil)

    // No deinit: a started server is held by its daemons until `shutdown()`, so one that is
    // deinitialised has no daemon left to stop.
}

/// A router held by reference (see `HTTPServer.router`).
final class RouterReference: Sendable {
    let router: Router

    init(_ router: Router) { self.router = router }
}
