/// Where the server and an app write what happens: the access log, errors, libmicrohttpd's
/// messages, security and lifecycle events, each an entry with a level and metadata that a
/// `LogHandler` turns into output.
///
/// Shaped like swift-log's `Logger`: a value with a `label` naming what logs, a `logLevel` below
/// which entries are dropped, and `metadata` added to every entry. An entry below the level costs
/// one comparison: its message and metadata are closures, evaluated only when it is written.
///
/// ```swift
/// let logger = Logger(label: "notes.sync")
/// logger.info("synced", metadata: ["notes": .integer(count)])
/// ```
///
/// `Logger(label:)` takes its handler and level from `LoggingSystem`: by default the lines the
/// server has always written (`StandardLogHandler`), from the level of the `logLevel` key. An app
/// sends every entry elsewhere with `LoggingSystem.bootstrap(_:)` at the start of its `main`.
public struct Logger: Sendable {
    /// What logs: `appshell` for the framework's errors, `appshell.access` for request lines, an
    /// app's own name for its loggers. Handlers may route or format by it.
    public let label: String

    /// The lowest level written; entries below it are dropped before their message is made.
    public var logLevel: Level

    /// Added to every entry's metadata (an entry's own values win for the same key).
    public var metadata: Metadata

    /// What receives the entries at or above `logLevel`.
    public var handler: any LogHandler

    /// A logger labelled `label` with the handler and level of `LoggingSystem`.
    public init(label: String) {
        let system = LoggingSystem.current
        self.init(label: label, handler: system.makeHandler(label), logLevel: system.logLevel)
    }

    /// A logger labelled `label` that gives its entries from `logLevel` up to `handler`.
    public init(label: String, handler: any LogHandler, logLevel: Level = .info, metadata: Metadata = [:]) {
        self.label = label
        self.handler = handler
        self.logLevel = logLevel
        self.metadata = metadata
    }

    /// The value of `metadata` named `key` (swift-log's spelling); setting `nil` removes it.
    public subscript(metadataKey key: String) -> MetadataValue? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Whether an entry at `level` is written: the comparison that guards every entry, for a caller
    /// that decides once (the access log, per server) rather than per entry.
    @inlinable
    public func logs(_ level: Level) -> Bool { level.severity >= logLevel.severity }

    /// Gives an entry at `level` to the handler, when `level` is at or above `logLevel`; `message`
    /// and `metadata` are evaluated only then.
    @inlinable
    public func log(
        level: Level, _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard logs(level) else { return }
        write(
            level: level, message: message(), metadata: metadata(),
            location: (file: file, function: function, line: line))
    }

    /// Makes the entry and hands it over (kept out of line: callers inline only the comparison).
    @usableFromInline
    func write(
        level: Level, message: String, metadata: Metadata, location: (file: String, function: String, line: UInt)
    ) {
        let merged = self.metadata.isEmpty ? metadata : self.metadata.merging(metadata)
        handler.log(
            LogEntry(
                label: label, level: level, message: message, metadata: merged, file: location.file,
                function: location.function, line: location.line))
    }
}

extension Logger {
    /// How much an entry matters, from the most detailed to the most urgent (swift-log's levels, which
    /// are syslog's without alert and emergency).
    public enum Level: String, Sendable, CaseIterable, Comparable {
        /// Every step, for following one request or one session's work.
        case trace
        /// Details for finding a fault: messages the server expects, such as libmicrohttpd's on a
        /// client leaving an event stream.
        case debug
        /// What the server does normally: one access-log line per request (the default level).
        case info
        /// Normal but significant: the server listening and stopping, security events, a store
        /// working again.
        case notice
        /// Something to look at that the server works around: a configuration that may not be meant.
        case warning
        /// A failure of one request or one piece of work; the server goes on.
        case error
        /// A failure that stops the server or leaves it unable to serve.
        case critical

        /// The level's rank: `trace` 0 … `critical` 6.
        @inlinable
        public var severity: Int {
            switch self {
            case .trace: 0
            case .debug: 1
            case .info: 2
            case .notice: 3
            case .warning: 4
            case .error: 5
            case .critical: 6
            }
        }

        /// The level of rank `severity` (`critical` beyond).
        init(severity: Int) { self = Level.allCases.first { $0.severity >= severity } ?? .critical }

        /// Whether `lhs` is less severe than `rhs`.
        @inlinable
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.severity < rhs.severity }
    }
}

extension Logger {
    /// An entry at `trace` (see `log(level:_:metadata:file:function:line:)`).
    @inlinable
    public func trace(
        _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .trace, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// An entry at `debug` (see `log(level:_:metadata:file:function:line:)`).
    @inlinable
    public func debug(
        _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .debug, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// An entry at `info` (see `log(level:_:metadata:file:function:line:)`).
    @inlinable
    public func info(
        _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .info, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// An entry at `notice` (see `log(level:_:metadata:file:function:line:)`).
    @inlinable
    public func notice(
        _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .notice, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// An entry at `warning` (see `log(level:_:metadata:file:function:line:)`).
    @inlinable
    public func warning(
        _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .warning, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// An entry at `error` (see `log(level:_:metadata:file:function:line:)`).
    @inlinable
    public func error(
        _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .error, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// An entry at `critical` (see `log(level:_:metadata:file:function:line:)`).
    @inlinable
    public func critical(
        _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .critical, message(), metadata: metadata(), file: file, function: function, line: line)
    }
}
