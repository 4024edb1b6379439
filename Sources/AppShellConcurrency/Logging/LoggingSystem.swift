import Synchronization

/// The process's logging: the handler every `Logger(label:)` gets, and the level it starts at.
///
/// By default every entry becomes the line the server has always written (`StandardLogHandler`),
/// from `info` up. An app sends them elsewhere by bootstrapping its own handler first thing in
/// `main`, before `ShellCommand.run` makes the server's loggers:
///
/// ```swift
/// LoggingSystem.bootstrap { label in CollectorLogHandler(label: label) }
/// exit(ShellCommand.run(NotesConfiguration.self) { … })
/// ```
///
/// The level comes from the `logLevel` key (`APPSHELL_LOG_LEVEL`), which `ShellCommand` applies
/// once the configuration is loaded. Both are read each time a logger is made, without a lock (a
/// password check's low-priority thread may log, and must not hold up a normal one); a logger
/// already made (a server's access log, made when the server is) keeps what it got.
public enum LoggingSystem {
    /// Makes the handler of a logger labelled `label`.
    public typealias HandlerFactory = @Sendable (_ label: String) -> any LogHandler

    /// A factory on the heap, for an atomic reference to it.
    private final class Factory: Sendable {
        let make: HandlerFactory
        init(_ make: @escaping HandlerFactory) { self.make = make }
    }

    /// The factory in use. One that is replaced is never released: a logger being made may be
    /// reading it (a bootstrap or two in a process's life, a few bytes each).
    private static let factory = Atomic(Unmanaged.passRetained(Factory { _ in StandardLogHandler() }))

    /// The level's `severity`.
    private static let severity = Atomic(Logger.Level.info.severity)

    /// Sends the entries of every logger made from now on to the handlers `makeHandler` makes.
    /// Call it once, before the server starts; `bootstrap { _ in StandardLogHandler() }` restores the
    /// default.
    public static func bootstrap(_ makeHandler: @escaping HandlerFactory) {
        _ = factory.exchange(Unmanaged.passRetained(Factory(makeHandler)), ordering: .acquiringAndReleasing)
    }

    /// The level of every logger made from now on (default `info`).
    public static var logLevel: Logger.Level {
        get { Logger.Level(severity: severity.load(ordering: .relaxed)) }
        set { severity.store(newValue.severity, ordering: .relaxed) }
    }

    /// The handler factory and the level.
    static var current: (makeHandler: HandlerFactory, logLevel: Logger.Level) {
        (factory.load(ordering: .acquiring).takeUnretainedValue().make, logLevel)
    }
}

extension Logger {
    /// The framework's logger for errors, warnings and notices (label `appshell`), made anew from
    /// `LoggingSystem` for each use: what it logs is rare, and a later bootstrap reaches it.
    package static var appshell: Logger { Logger(label: "appshell") }
}
