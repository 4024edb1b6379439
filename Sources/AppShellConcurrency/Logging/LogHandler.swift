/// What receives a `Logger`'s entries and writes them somewhere: standard output and error by
/// default (`StandardLogHandler`), or wherever an app sends them (`LoggingSystem.bootstrap(_:)`).
///
/// A handler is called on whichever thread logs — the server's event loops for the access log,
/// with a request waiting — so it must be safe to call from many threads at once and should not
/// block for long: hand slow output (a network collector) to a queue of its own.
public protocol LogHandler: Sendable {
    /// Writes `entry`, which is at or above its logger's level already.
    func log(_ entry: LogEntry)
}

/// One thing logged: who logged it, how much it matters, what happened, and the values that go
/// with it.
public struct LogEntry: Sendable {
    /// The label of the logger that made it (`Logger.label`).
    public var label: String
    /// Its level.
    public var level: Logger.Level
    /// What happened, in a few words (for the access log, `request`; for an event, its name).
    public var message: String
    /// The values that go with it, the logger's first: for a request, `requestID`, `client`,
    /// `method`, `path`, `status`, `bytes` and `micros`; for an error while answering a request,
    /// its `requestID`.
    public var metadata: Logger.Metadata
    /// The source file (`#fileID`) that logged it.
    public var file: String
    /// The function that logged it.
    public var function: String
    /// The line that logged it.
    public var line: UInt

    /// An entry of these parts.
    public init(
        label: String, level: Logger.Level, message: String, metadata: Logger.Metadata = [:], file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) {
        self.label = label
        self.level = level
        self.message = message
        self.metadata = metadata
        self.file = file
        self.function = function
        self.line = line
    }
}
