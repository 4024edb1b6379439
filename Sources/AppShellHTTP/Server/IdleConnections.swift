import CMicroHTTPD

/// The connections of one event loop that wait for a request, oldest first, and what the loop
/// does with them: a connection kept alive after an answer is closed once it has waited
/// `keepAliveMicros`, and when the loop's open connections near its share of the limit the
/// oldest waiting ones are closed to make room for new clients.
///
/// DESIGN: a connection that holds a slot without a request in progress costs the server a slot
/// and nothing else; a client that opens many and sends nothing, or one request each, would hold
/// every slot for the whole idle timeout (issue 31: five addresses locked everyone out for 60 s).
/// As nginx reuses its idle keep-alive connections when it runs out, the loop reclaims the
/// waiting ones, oldest first, once it has more than `pressure` open; as Apache's `KeepAliveTimeout`, a
/// connection kept alive waits 5 s for its next request, not the 30 s a slow request may take.
/// Two lists: connections that have not sent a request yet (libmicrohttpd's own idle timeout ends
/// them) and connections kept alive after an answer (this timeout ends them); each is in the order
/// its connections began to wait, so both are kept with appends and unlinks alone.
///
/// A connection is closed by shutting its socket down: libmicrohttpd sees the end of the stream at
/// its next turn and closes the connection as it does for a client that left. Only the loop's own
/// thread uses its lists (its connections' callbacks run there), so nothing is locked; the socket
/// is shut down while libmicrohttpd still holds it open (it reports a connection closed, and so
/// takes it off the list, before it closes the socket).
final class IdleConnections {
    /// A list of waiting connections, linked through their `PendingRequest`s.
    private struct List {
        var head: PendingRequest?
        var tail: PendingRequest?

        mutating func append(_ pending: PendingRequest) {
            pending.idleNext = nil
            pending.idlePrevious = tail
            if let tail { tail.idleNext = pending } else { head = pending }
            tail = pending
        }

        mutating func remove(_ pending: PendingRequest) {
            let next = pending.idleNext
            let previous = pending.idlePrevious
            if let previous { previous.idleNext = next } else { head = next }
            if let next { next.idlePrevious = previous } else { tail = previous }
            pending.idleNext = nil
            pending.idlePrevious = nil
        }
    }

    /// Connections that have not begun a request yet.
    private var unused = List()
    /// Connections kept alive after an answer.
    private var keptAlive = List()
    /// The connections this loop holds open now.
    private(set) var open = 0
    /// Of those, the ones shut down here that libmicrohttpd has not reported closed yet.
    private var closing = 0
    /// The open connections the loop keeps at most by closing waiting ones: seven eighths of its
    /// share, so that clients arriving while the reclaimed connections close find room
    /// (libmicrohttpd stops accepting at the share itself). Beyond it, answers close their
    /// connection.
    let pressure: Int
    private let keepAliveMicros: Int
    /// How long a connection that has not sent a request yet is spared: a client sends its request
    /// line at once, and a reclaim must not close a connection just accepted before it could.
    static let unusedGraceMicros = 1_000_000
    /// How long a new connection may take to begin its first request before it is closed (an
    /// HTTPS server's: the handshake comes first); `nil`: libmicrohttpd's idle timeout alone.
    private let firstRequestMicros: Int?
    private let statistics: ServerStatistics

    /// The lists of a loop whose daemon admits `share` connections; a connection kept alive is
    /// closed after `keepAliveSeconds` without a request, and a new one after
    /// `firstRequestSeconds` without its first (when given).
    init(share: Int, keepAliveSeconds: Int, firstRequestSeconds: Int? = nil, statistics: ServerStatistics) {
        // A share of one has no room to make: its one connection is the only one there is.
        pressure = share < 2 ? share : share - max(1, share / 8)
        keepAliveMicros = max(1, keepAliveSeconds) * 1_000_000
        firstRequestMicros = firstRequestSeconds.map { max(1, $0) * 1_000_000 }
        self.statistics = statistics
    }

    /// Whether the loop is near its share of the connection limit (counting the connections being
    /// closed): answers then close their connection, so that clients do not hold a slot they do not
    /// use.
    var underPressure: Bool { open > pressure }

    /// Notes a new connection, which waits for its first request.
    func opened(_ pending: PendingRequest, now: Int) {
        open += 1
        pending.waitingSince = now
        pending.waitsAfterAnswer = false
        unused.append(pending)
    }

    /// Notes that a connection's request began: it no longer waits.
    func requestBegan(_ pending: PendingRequest) {
        guard pending.waitingSince >= 0 else { return }
        unlink(pending)
    }

    /// Notes that a connection's request completed and the connection stays open for another.
    func keptAlive(_ pending: PendingRequest, now: Int) {
        guard pending.waitingSince < 0, !pending.connectionClosed else { return }
        pending.waitingSince = now
        pending.waitsAfterAnswer = true
        keptAlive.append(pending)
    }

    /// Notes that a connection closed.
    func closed(_ pending: PendingRequest) {
        open -= 1
        if pending.waitingSince >= 0 { unlink(pending) }
        if pending.shutDown { closing -= 1 }
    }

    /// Closes the connections kept alive past their timeout, the new ones past their first
    /// request's (when there is one) and, beyond `pressure`, the oldest waiting ones until the
    /// loop is back within it (reads the clock only when a connection waits on a timeout or the
    /// loop is beyond it). Returns the milliseconds until the next connection this would close (a
    /// timeout, or beyond `pressure` an unused one's grace), or -1 when there is none.
    func tidy() -> Int32 {
        let beyond = open - closing > pressure
        let firstRequest = firstRequestMicros.flatMap { unused.head == nil ? nil : $0 }
        guard keptAlive.head != nil || beyond || firstRequest != nil else { return -1 }
        let now = Clock.monotonicMicros()
        while let oldest = keptAlive.head, now - oldest.waitingSince >= keepAliveMicros {
            statistics.keepAliveTimeouts.add(1, ordering: .relaxed)
            close(oldest)
        }
        var next = keptAlive.head.map { $0.waitingSince + keepAliveMicros } ?? Int.max
        if let firstRequest {
            while let oldest = unused.head, now - oldest.waitingSince >= firstRequest {
                statistics.firstRequestTimeouts.add(1, ordering: .relaxed)
                close(oldest)
            }
            if let newest = unused.head { next = min(next, newest.waitingSince + firstRequest) }
        }
        if beyond {
            var excess = open - closing - pressure
            while excess > 0, let oldest = oldestWaiting(now: now) {
                statistics.reclaimedConnections.add(1, ordering: .relaxed)
                close(oldest)
                excess -= 1
            }
            // Connections too new to close now may be closed once their grace is over.
            if excess > 0, let newest = unused.head { next = min(next, newest.waitingSince + Self.unusedGraceMicros) }
        }
        guard next != .max else { return -1 }
        return Int32(clamping: max(0, (next - now + 999) / 1000))
    }

    /// The connection that has waited longest, of either list, leaving out those that have not sent
    /// a request yet and were opened within `unusedGraceMicros`.
    private func oldestWaiting(now: Int) -> PendingRequest? {
        let unused = unused.head.flatMap { now - $0.waitingSince >= Self.unusedGraceMicros ? $0 : nil }
        switch (unused, keptAlive.head) {
        case (let first?, let second?): return first.waitingSince <= second.waitingSince ? first : second
        case (let first, let second): return first ?? second
        }
    }

    /// Shuts a waiting connection's socket down and forgets it (it is closed once, whatever the
    /// socket's state): libmicrohttpd closes the connection at its next turn.
    private func close(_ pending: PendingRequest) {
        unlink(pending)
        pending.shutDown = true
        closing += 1
        if pending.socket >= 0 { _ = appshell_shutdown_socket(pending.socket) }
    }

    private func unlink(_ pending: PendingRequest) {
        if pending.waitsAfterAnswer { keptAlive.remove(pending) } else { unused.remove(pending) }
        pending.waitingSince = -1
    }
}
