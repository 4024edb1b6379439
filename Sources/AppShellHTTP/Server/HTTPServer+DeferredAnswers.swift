import CMicroHTTPD

// The access handler's part in deferred answers (`PendingResponse`): waiting for one, and taking
// it when the handler is called again.
extension HTTPServer {
    /// Waits for the answer of a deferred response without holding the loop: the request is
    /// parked or its connection suspended until it comes (see `PendingResponse`); answered at once
    /// when it is there already, or 503 when the server is shutting down.
    func wait(
        for promise: PendingResponse, headers: HTTPHeaders, on connection: OpaquePointer, _ pending: PendingRequest
    ) -> MHD_Result {
        guard deferredResponses.admit(promise) else {
            promise.answer(HTTPServer.shuttingDown, unlessClaimed: false)
            promise.cancel()
            pending.errorCause = .shuttingDown
            return send(HTTPServer.shuttingDown, on: connection, pending)
        }
        let loop = promise.isBrief ? EventLoop.current : nil
        switch promise.answerOrWait(connection, on: loop) {
        case .answer(let answer):
            deferredResponses.remove(promise)
            return send(answer.adding(headers), on: connection, pending)
        case .parked:
            loop?.park()
            pending.deferred = (promise, headers, loop)
        case .suspended:
            pending.deferred = (promise, headers, nil)
            // Answered (its connection resumed, then closed by libmicrohttpd), its work cancelled.
            hangups.watch(pending.socket, for: promise) { promise.clientWentAway() }
        }
        return .YES
    }

    /// The access handler called again for a request waiting for `deferred` (parked on its loop,
    /// or its connection resumed): sends the answer if it is there, else the request waits again.
    func answerAgain(
        _ deferred: (pending: PendingResponse, headers: HTTPHeaders, parkedOn: EventLoop?),
        on connection: OpaquePointer, _ pending: PendingRequest
    ) -> MHD_Result {
        guard case .answer(let answer) = deferred.pending.answerOrWait(connection, on: deferred.parkedOn)
        else { return .YES }
        hangups.unwatch(deferred.pending)
        if let loop = deferred.parkedOn {
            loop.unpark()
            // Its bytes go out at the loop's next turn: no waiting for it.
            loop.turnAgain = true
        }
        pending.deferred = nil
        deferredResponses.remove(deferred.pending)
        return send(answer.adding(deferred.headers), on: connection, pending)
    }
}
