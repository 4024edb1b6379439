// Answering a request without a socket: the path tests take in process (AppShellTesting's
// in-process mode), through the same steps as a request read from a connection.

extension HTTPServer {
    /// Answers a request made of its parts as the server answers one read from a connection, on the
    /// calling thread, with no socket and no libmicrohttpd; the server need not be started.
    ///
    /// The request goes the same way a connection's goes after libmicrohttpd parsed it: the target
    /// is checked (400 with `Connection: close` when it does not parse), the client address is
    /// resolved through `trustedProxies`, a body the responder does not read is dropped and one over
    /// `maxBodyBytes` is answered 413, then `allowedHosts`, the responder (the router, counted by
    /// route in the metrics), the mapping of a thrown error to its answer, and a deferred answer
    /// (`Response.deferred`: a password check, a group commit) waited for — at most
    /// `timeoutMilliseconds`, `nil` when it did not come. The answer carries `X-Request-ID`,
    /// `Connection: close` while shutting down, and the `Content-Length` libmicrohttpd would write.
    ///
    /// What it does not exercise: libmicrohttpd's parsing and framing (the request line, header
    /// syntax and limits, `Transfer-Encoding`, `Expect: 100-continue`), the socket-level limits
    /// (connections, per-address connections, memory per connection, idle timeouts), keep-alive,
    /// and event streams: a stream's answer comes back with its status and header fields and no
    /// events (the stream is ended at once, never admitted). A file's body is read into the answer.
    package func respondInProcess(
        method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        remoteAddress: String = "127.0.0.1", timeoutMilliseconds: Int = 10_000
    ) -> Response? {
        let pending = PendingRequest()
        pending.begin(target: target, startMicros: Clock.monotonicMicros(), route: unroutedLabel)
        pending.method = method.rawValue
        pending.requestID = RequestID.Value(headers[RequestID.headerName])
        statistics.inFlightCounter.add(1, ordering: .relaxed)
        defer {
            if pending.status != 0 { count(pending) }
            statistics.completedCounter.add(1, ordering: .relaxed)
            statistics.inFlightCounter.subtract(1, ordering: .releasing)
        }
        var response = firstAnswer(
            method: method, target: target, headers: headers, body: body, remoteAddress: remoteAddress, pending)
        while case .deferred(let promise) = response.body {
            let headers = response.headers
            guard deferredResponses.admit(promise) else {
                promise.answer(HTTPServer.shuttingDown, unlessClaimed: false)
                pending.errorCause = .shuttingDown
                response = HTTPServer.shuttingDown
                break
            }
            let answer = promise.waitForAnswer(milliseconds: timeoutMilliseconds)
            deferredResponses.remove(promise)
            guard let answer else { return nil }
            response = answer.adding(headers)
        }
        return finished(response, method: method, pending)
    }

    /// The responder's first answer (it may be deferred), or the server's own refusal.
    private func firstAnswer(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], remoteAddress: String,
        _ pending: PendingRequest
    ) -> Response {
        let parts: Request.Parts
        do throws(HTTPError) {
            parts = try Request.parse(method: method, target: target)
        } catch {
            var response = Response.error(error, for: nil)
            response.headers.add(name: "Connection", value: "close")
            return response
        }
        let peer = ClientAddress(text: remoteAddress)
        let client = configuration.trustedProxies.client(of: peer, headers: headers)
        func request(body: [UInt8]) -> Request {
            Request(
                method: method, target: target, parts: parts, headers: headers, body: body, address: peer,
                client: client, requestID: pending.requestID)
        }
        var kept = body
        if !body.isEmpty {
            let headersOnly = request(body: [])
            if !responder.acceptsBody(headersOnly) {
                kept = []
            } else {
                let limit = min(configuration.maxBodyBytes, responder.maxBodyBytes(for: headersOnly) ?? .max)
                if body.count > limit { return tooLarge(limit) }
            }
        }
        return answer(request(body: kept), pending)
    }

    /// `response` as a client would read it: its body in memory, with the fields the server adds.
    private func finished(_ response: Response, method: HTTPMethod, _ pending: PendingRequest) -> Response {
        var answer = Response(status: response.status, headers: SecurityHeaders.adding(to: response.headers))
        var bytes: [UInt8] = []
        switch response.body {
        case .bytes(let body):
            bytes = body
            // A 304 states its own length; 1xx and 204 carry none (RFC 9110 §8.6).
            let status = response.status.rawValue
            if response.status != .notModified && status >= 200 && status != 204 {
                answer.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            }
        case .file(let file):
            bytes = file.readAll() ?? []
            answer.headers.replaceOrAdd(name: "Content-Length", value: String(bytes.count))
        case .stream(let stream):
            stream.discard()
        case .deferred:
            break  // not reached: waited for by the caller
        }
        if draining.load(ordering: .relaxed) { answer.headers.replaceOrAdd(name: "Connection", value: "close") }
        answer.headers.replaceOrAdd(name: RequestID.headerName, value: pending.requestID.text)
        answer.body = .bytes(method == .head ? [] : bytes)
        pending.status = response.status.rawValue
        pending.bytes = bytes.count
        pending.answeredMicros = Clock.monotonicMicros()
        return answer
    }
}
