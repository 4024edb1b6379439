import AppShellConcurrency

/// The server's open event streams: how many there may be, a watcher that ends a stream as soon as
/// its client hangs up, a heartbeat, and all of them ended at shutdown.
///
/// A suspended connection is not polled by libmicrohttpd, so a client that went away would only be
/// noticed at the next write: a `HangupWatcher` (the server's, or the registry's own) watches every
/// stream's socket; the heartbeats are a repeating timer on a `TimerQueue` (the server's shared one, or the registry's
/// own).
///
/// libmicrohttpd must not be stopped with a connection still suspended: once `closeAll` began,
/// under the same lock that admits streams, no stream is admitted any more.
final class EventStreamRegistry: Sendable {
    /// Whether a new stream may open, and why not.
    enum Admission: Equatable {
        /// Tracked and watched until it ends.
        case admitted
        /// `limit` streams are open.
        case refusedInAll
        /// `limitPerAddress` streams are open from the client's address.
        case refusedForAddress
        /// The server is shutting down.
        case refusedShuttingDown
    }

    private struct Entry {
        let stream: EventStream
        let address: String
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var perAddress: [String: Int] = [:]
        var nextToken: UInt64 = 1
        var closing = false
        var started = false
        /// The heartbeat's timer, while it is scheduled.
        var heartbeat: TimerQueue.Timer?
    }

    /// Streams open at most, and from one address at most (0: no limit per address).
    let limit: Int
    let limitPerAddress: Int
    private let state = Locked(State())
    /// What ends a stream whose client hung up; started and stopped with the registry if it is its own.
    private let hangups: HangupWatcher
    private let ownsHangups: Bool
    /// Where the heartbeats run; started and stopped with the registry if it is its own.
    private let timers: TimerQueue
    private let ownsTimers: Bool

    /// Where the number of open streams is kept for `/metrics`.
    private let statistics: ServerStatistics

    /// A registry that admits `limit` streams in all and `limitPerAddress` from one address, keeps
    /// their number in `statistics`, sends heartbeats on `timers` (a queue of its own if `nil`) and
    /// watches the streams' sockets with `hangups` (a watcher of its own if `nil`).
    init(
        limit: Int, limitPerAddress: Int, statistics: ServerStatistics = ServerStatistics(),
        timers: TimerQueue? = nil, hangups: HangupWatcher? = nil
    ) {
        self.statistics = statistics
        ownsTimers = timers == nil
        self.timers = timers ?? TimerQueue(name: "appshell-heartbeats")
        self.limit = limit
        self.limitPerAddress = limitPerAddress
        ownsHangups = hangups == nil
        self.hangups = hangups ?? HangupWatcher(name: "appshell-event-streams")
    }

    /// Streams open now.
    var count: Int { state.withLock { $0.entries.count } }

    /// Tracks `stream` until it ends and watches `socket` (its connection's, or -1) for the client
    /// hanging up — unless the limits are reached or shutdown began.
    func admit(_ stream: EventStream, address: String, socket: Int32) -> Admission {
        let admission = state.withLock { state -> (Admission, UInt64) in
            if state.closing { return (.refusedShuttingDown, 0) }
            if state.entries.count >= limit { return (.refusedInAll, 0) }
            let fromAddress = state.perAddress[address, default: 0]
            if limitPerAddress > 0 && fromAddress >= limitPerAddress { return (.refusedForAddress, 0) }
            let token = state.nextToken
            state.nextToken += 1
            state.entries[token] = Entry(stream: stream, address: address)
            statistics.streamCounter.add(1, ordering: .relaxed)
            state.perAddress[address] = fromAddress + 1
            return (.admitted, token)
        }
        guard admission.0 == .admitted else { return admission.0 }
        let token = admission.1
        // Resumed and ended with an error: libmicrohttpd closes its connection.
        hangups.watch(socket, for: stream) { stream.abandon() }
        stream.onClose { [weak self] in self?.remove(token) }
        return .admitted
    }

    private func remove(_ token: UInt64) {
        let removed = state.withLock { state -> EventStream? in
            guard let entry = state.entries.removeValue(forKey: token) else { return nil }
            statistics.streamCounter.subtract(1, ordering: .relaxed)
            let left = state.perAddress[entry.address, default: 1] - 1
            state.perAddress[entry.address] = left > 0 ? left : nil
            return entry.stream
        }
        if let removed { hangups.unwatch(removed) }
    }

    /// Starts watching the streams' sockets (when the watcher is the registry's own) and sends a
    /// heartbeat comment on every stream every `heartbeatSeconds` (0: none).
    func start(heartbeatSeconds: Int) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.closing
        }
        guard first else { return }
        if ownsHangups { hangups.start() }
        guard heartbeatSeconds > 0 else { return }
        let rounds = UInt64(Self.heartbeatRounds)
        let round = Locked<UInt64>(0)
        // A round every interval / rounds (250 ms for 15 s), in whole milliseconds.
        let step = max(1, Int64(heartbeatSeconds) * 1000 / Int64(Self.heartbeatRounds))
        let heartbeat = timers.schedule(every: step) { [weak self] in
            let current = round.withLock { round in
                defer { round = (round + 1) % rounds }
                return round
            }
            for stream in self?.streams(inHeartbeatRound: current) ?? [] { stream.comment("heartbeat") }
        }
        // Closed meanwhile: `closeAll` did not see the timer, so it is cancelled here.
        let closed = state.withLock { state -> Bool in
            if !state.closing { state.heartbeat = heartbeat }
            return state.closing
        }
        if closed { timers.cancel(heartbeat) } else if ownsTimers { timers.start() }
    }

    /// The heartbeat rounds a heartbeat interval is split into: each stream gets its heartbeat in
    /// the round its token falls in, once per interval.
    ///
    /// All of them at once would resume every open connection in one burst, and libmicrohttpd
    /// looks through all of its suspended connections for each batch of resumed ones (0.9.75's
    /// `resume_suspended_connections`): with 15 000 open streams one such burst held the server's
    /// thread for 0.3–0.5 s, which a request arriving then waited out. In 60 rounds a burst is a
    /// sixtieth of the streams.
    static let heartbeatRounds = 60

    /// The open streams whose heartbeat is due in `round` (of `heartbeatRounds`): those whose
    /// token falls in it, so that every stream is in exactly one round.
    func streams(inHeartbeatRound round: UInt64) -> [EventStream] {
        let rounds = UInt64(Self.heartbeatRounds)
        return state.withLock { state in
            state.entries.compactMap { $0.key % rounds == round % rounds ? $0.value.stream : nil }
        }
    }

    /// Refuses new streams from now on, stops the watcher if it is the registry's own and ends every
    /// open stream once what it has queued is sent.
    func closeAll() {
        let (streams, heartbeat) = state.withLock { state in
            state.closing = true
            defer { state.heartbeat = nil }
            return (state.entries.values.map(\.stream), state.heartbeat)
        }
        // No heartbeat is written after this (one being written is waited for), nor after a stream
        // has been ended below.
        if let heartbeat { timers.cancel(heartbeat) }
        if ownsTimers { timers.stop() }
        if ownsHangups { hangups.stop() }
        for stream in streams { stream.close() }
    }
}
