import Synchronization

/// Counters the server keeps as it runs, for `/metrics` and for graceful shutdown.
public final class ServerStatistics: Sendable {
    /// Requests between their request line and their completion.
    let inFlightCounter = Atomic<Int>(0)
    /// Requests completed since start.
    let completedCounter = Atomic<Int>(0)
    /// Connections whose state the server holds.
    let connectionCounter = Atomic<Int>(0)

    /// Fresh counters.
    public init() {}

    /// Requests being processed now.
    public var inFlight: Int { inFlightCounter.load(ordering: .relaxed) }
    /// Requests completed since the server started.
    public var completed: Int { completedCounter.load(ordering: .relaxed) }
    /// Open connections: from their accept until both their close and their last request's end.
    public var openConnections: Int { connectionCounter.load(ordering: .relaxed) }
}
