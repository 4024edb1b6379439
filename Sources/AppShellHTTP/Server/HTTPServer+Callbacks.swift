import CMicroHTTPD
import Glibc

// libmicrohttpd's C callbacks. They cannot capture context: the server comes back through the
// `cls` pointer and each connection's `PendingRequest` through its socket context, which is also
// each request's `*con_cls`. Who keeps them alive while a callback runs:
//
// - the server: its daemons (one per event loop) share a strong reference, taken in `start()`
//   and given back by `shutdown()` after the loops ended and `MHD_stop_daemon` returned for each,
//   when no callback runs any more;
// - a `PendingRequest`: retained when its connection starts, released after both its connection's
//   close and its last request's completion (`close()` and `complete()` say which came last).
//
// So a callback reads them with `takeUnretainedValue()`, which borrows without taking ownership.

/// Decides whether to keep a new connection: not once a graceful shutdown has begun, nor one
/// over the per-address limit (counted here, uncounted when the connection closes).
let acceptPolicyCallback: MHD_AcceptPolicyCallback = { cls, address, _ in
    let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
    if server.draining.load(ordering: .relaxed) { return .NO }
    return server.connectionsPerAddress.admit(ClientAddress(address).ipAddress?.client) ? .YES : .NO
}

/// Called when a connection starts (its `PendingRequest` is made) and when it closes.
let connectionCallback: MHD_NotifyConnectionCallback = { cls, connection, socketContext, event in
    guard let cls, let socketContext else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    switch event {
    case .CONNECTION_NOTIFY_STARTED:
        // HTTPS: the certificate loaded last, before the handshake begins.
        if server.configuration.tls != nil, let connection,
            let credentials = server.certificates.withLock({ $0?.current.credentials })
        {
            _ = appshell_mhd_use_tls_credentials(connection, credentials)
        }
        let pending = PendingRequest()
        pending.peer = ClientAddress(connection.flatMap(appshell_mhd_client_address)).ipAddress?.client
        pending.socket = connection.map(appshell_mhd_connection_fd) ?? -1
        pending.loop = EventLoop.current
        pending.loop?.idle.opened(pending, now: Clock.monotonicMicros())
        socketContext.pointee = Unmanaged.passRetained(pending).toOpaque()
        server.statistics.connectionCounter.add(1, ordering: .relaxed)
    case .CONNECTION_NOTIFY_CLOSED:
        guard let raw = socketContext.pointee else { return }
        socketContext.pointee = nil
        let pending = Unmanaged<PendingRequest>.fromOpaque(raw)
        pending.takeUnretainedValue().loop?.idle.closed(pending.takeUnretainedValue())
        server.connectionsPerAddress.release(pending.takeUnretainedValue().peer)
        if pending.takeUnretainedValue().close() { server.release(pending) }
    }
}

/// Called with the raw request target as soon as the request line is parsed; returns the
/// connection's `PendingRequest`, which becomes the request's `*con_cls`.
let requestStartedCallback: appshell_mhd_uri_log_callback = { cls, uri, connection in
    let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
    server.statistics.inFlightCounter.add(1, ordering: .relaxed)
    let target = uri.map { String(cString: $0) } ?? ""
    // For the latency histogram and the access log's duration.
    let startMicros = Clock.monotonicMicros()
    guard let raw = connection.flatMap(appshell_mhd_socket_context) else {
        // Not expected (every connection is reported started): one for this request alone,
        // released when it completes.
        let pending = PendingRequest()
        pending.begin(target: target, startMicros: startMicros, route: server.unroutedLabel)
        _ = pending.close()
        server.statistics.connectionCounter.add(1, ordering: .relaxed)
        return Unmanaged.passRetained(pending).toOpaque()
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
    pending.loop?.idle.requestBegan(pending)
    pending.begin(target: target, startMicros: startMicros, route: server.unroutedLabel)
    return raw
}

/// Called once more for every chunk of the body and once at the end.
let accessHandlerCallback: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, uploadData, uploadSize, requestContext in
    guard let cls, let connection, let uploadSize, let requestContext, let raw = requestContext.pointee
    else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
    return server.handle(
        connection, pending, line: (method, url, version), upload: uploadData, uploadSize: uploadSize)
}

/// Called when a request is done (sent, failed or timed out).
let completedCallback: MHD_RequestCompletedCallback = { cls, _, requestContext, _ in
    guard let cls, let requestContext, let raw = requestContext.pointee else { return }
    requestContext.pointee = nil
    let retained = Unmanaged<PendingRequest>.fromOpaque(raw)
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let pending = retained.takeUnretainedValue()
    if pending.status != 0 { server.count(pending) }
    if let deferred = pending.deferred {
        // Completed while waiting (the connection failed): its answer has nowhere to go.
        deferred.parkedOn?.unpark()
        server.hangups.unwatch(deferred.pending)
        deferred.pending.detach()
        server.deferredResponses.remove(deferred.pending)
        pending.deferred = nil
    }
    server.releaseBody(pending)
    server.statistics.completedCounter.add(1, ordering: .relaxed)
    server.statistics.inFlightCounter.subtract(1, ordering: .releasing)
    if pending.complete() {
        server.release(retained)
    } else {
        // The connection stays open: it waits for its next request.
        pending.loop?.idle.keptAlive(pending, now: Clock.monotonicMicros())
    }
}

/// Gives libmicrohttpd the next bytes of an event stream.
private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return -1 }
    return Unmanaged<EventStream>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, capacity: capacity)
}

/// Called when libmicrohttpd is done with an event stream's response (the connection ended).
private let streamReleased: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let stream = Unmanaged<EventStream>.fromOpaque(cls).takeRetainedValue()
    stream.finish()
}

extension HTTPServer {
    /// Releases a connection's state for the last time.
    fileprivate func release(_ pending: Unmanaged<PendingRequest>) {
        pending.release()
        statistics.connectionCounter.subtract(1, ordering: .relaxed)
    }

    fileprivate func handle(
        _ connection: OpaquePointer, _ pending: PendingRequest,
        line: (method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?),
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        if !pending.headersSeen {
            // First call: headers only. Answering now would be an "early response" that closes
            // the connection, so only a request whose body must not be read is answered.
            pending.headersSeen = true
            pending.method = line.method.map { String(cString: $0) } ?? ""
            pending.requestID = HTTPServer.requestID(of: connection)
            if let method = line.method, let url = line.url, let version = line.version,
                let refusal = refuseHead(connection, pending, method: method, url: url, version: version)
            {
                return send(refusal, on: connection, pending)
            }
            let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length")
            if MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") != nil {
                if let refusal = refuseFraming(connection, withContentLength: length != nil) {
                    return send(refusal, on: connection, pending)
                }
            } else if length.map({ strcmp($0, "0") == 0 }) ?? true {
                return .YES  // no body
            }
            let declared = length.flatMap { Int(String(cString: $0)) }
            pending.bodyBytesToCome = declared ?? -1
            // A body is coming: collected only for a responder that reads it.
            guard let limit = bodyLimit(connection, pending) else {
                // A client waiting for 100 Continue gets the answer instead and never sends the
                // body (RFC 9110 §10.1.1); the connection then closes.
                if let expect = MHD_lookup_connection_value(connection, .HEADER_KIND, "Expect"),
                    strcasecmp(expect, "100-continue") == 0
                {
                    return send(respond(connection, pending), on: connection, pending)
                }
                pending.discardsBody = true
                return .YES
            }
            if let refusal = beginBody(declared: declared, limit: limit, pending) {
                return send(refusal, on: connection, pending)
            }
            return .YES
        }
        if uploadSize.pointee != 0 {
            let count = uploadSize.pointee
            // More of the body may be in the socket already, with no event to come for it: the
            // loop turns again at once even while it has parked requests (see `EventLoop`).
            if pending.bodyBytesToCome >= 0 { pending.bodyBytesToCome -= count }
            if pending.bodyBytesToCome != 0 { EventLoop.current?.turnAgain = true }
            if !pending.discardsBody { receiveBody(upload, count: count, pending) }
            uploadSize.pointee = 0
            return .YES
        }
        if pending.isWaitingForAnswer { return .YES }
        if let deferred = pending.deferred { return answerAgain(deferred, on: connection, pending) }
        if let refusal = bodyRefusal(pending) { return send(refusal, on: connection, pending) }
        return send(respond(connection, pending), on: connection, pending)
    }

    /// Queues `response` on `connection` (waiting for it first when it is deferred).
    func send(_ response: Response, on connection: OpaquePointer, _ pending: PendingRequest) -> MHD_Result {
        if case .deferred(let promise) = response.body {
            return wait(for: promise, headers: response.headers, on: connection, pending)
        }
        pending.status = response.status.rawValue
        pending.bytes = response.body.count
        pending.answeredMicros = Clock.monotonicMicros()
        let draining = draining.load(ordering: .relaxed)
        // Near the connection limit, or shutting down, the connection closes after this answer.
        let closes = draining || pending.loop?.idle.underPressure == true
        if draining && response.status == .serviceUnavailable && pending.errorCause == nil {
            pending.errorCause = .shuttingDown
        }
        let made: OpaquePointer?
        // Every answer carries its own `X-Request-ID`, so a prepared response is not shared between
        // connections: each connection keeps its own (see `reusableHandle`), and a changed one, or
        // one that must say `Connection: close`, is made anew (the prepared bytes are borrowed).
        if let prepared = response.prepared, !closes, prepared.isUnchanged(response),
            let handle = pending.reusableHandle(for: prepared, response, adding: addStrictTransportSecurity)
        {
            return queue(handle, response.status, on: connection)
        } else if let prepared = response.prepared, let handle = prepared.newHandle(for: response) {
            made = handle
        } else if case .stream(let stream) = response.body {
            if pending.method == "HEAD" {
                // The header block alone, with no stream opened. The GET has no length, so neither
                // may the HEAD (RFC 9110 §8.6); libmicrohttpd 0.9.75 would send a chunked answer's
                // last chunk even to HEAD, so this one is framed as a 304 without a length is: no
                // `Content-Length`, and the connection closes after the header block.
                stream.discard()
                made = HTTPServer.headersOnlyResponse(length: nil)
                if let made { HTTPServer.addHeaders(response.headers, to: made) }
            } else if let refusal = admit(stream, on: connection, pending) {
                return send(refusal, on: connection, pending)
            } else {
                // The stream's request never completes: the buffer its header fields were read into
                // is let go now rather than held for as long as the stream stays open.
                pending.headers = HTTPHeaders()
                let retained = Unmanaged.passRetained(stream)
                made = MHD_create_response_from_callback(
                    appshell_mhd_size_unknown, HTTPServer.streamBlockBytes, streamReader, retained.toOpaque(),
                    streamReleased)
                if let made {
                    HTTPServer.addHeaders(response.headers, to: made)
                    // A stream the server ends (its backlog, shutdown, a rotated session) closes its
                    // connection: it is not kept alive for a request the client never sends on it.
                    MHD_add_response_header(made, "Connection", "close")
                } else {
                    // Ended now (nothing else would end it); a response that fails to queue below
                    // is destroyed, and its free callback ends its stream.
                    retained.release()
                    stream.discard()
                }
            }
        } else {
            made = HTTPServer.makeResponse(response)
        }
        guard let made else {
            statistics.count(.responseFailed)
            return .NO
        }
        defer { MHD_destroy_response(made) }
        if closes { MHD_add_response_header(made, "Connection", "close") }
        addStrictTransportSecurity(to: made, unlessIn: response.headers)
        pending.requestID.withCString { id, _ in _ = MHD_add_response_header(made, RequestID.cHeaderName, id) }
        return queue(made, response.status, on: connection)
    }

    /// Queues `made` (the caller keeps its own reference); a failure is counted.
    private func queue(_ made: OpaquePointer, _ status: HTTPStatus, on connection: OpaquePointer) -> MHD_Result {
        let queued = MHD_queue_response(connection, UInt32(status.rawValue), made)
        if queued == .NO { statistics.count(.responseFailed) }
        return queued
    }
}
