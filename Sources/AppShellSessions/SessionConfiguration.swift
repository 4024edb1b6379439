/// Timeouts and limits of the session registry.
public struct SessionConfiguration: Sendable, Equatable {
    /// A session unused for this long expires (seconds).
    public var idleTimeoutSeconds: Int64 = 1800
    /// A session expires this long after it was created, however much it is used (seconds).
    public var absoluteTimeoutSeconds: Int64 = 28_800
    /// Sessions held in memory at most; beyond it the least recently used are dropped from memory
    /// (stored ones load again on their next request).
    public var maxSessionsInMemory = 100_000
    /// How often the sweeper removes expired sessions from memory and from the store (seconds).
    public var sweepIntervalSeconds = 60

    /// The defaults.
    public init() {}

    /// How stale the stored `accessed` time of a session may get before a read-only request
    /// refreshes it: often enough for the idle timeout, rarely enough that reads cost no writes.
    var touchIntervalSeconds: Int64 { max(1, min(60, idleTimeoutSeconds / 4)) }
}
