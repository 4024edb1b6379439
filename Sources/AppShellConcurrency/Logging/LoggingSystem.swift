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
/// once the configuration is loaded. Both are read under a lock each time a logger is made; a
/// logger already made (a server's access log, made when the server is) keeps what it got.
public enum LoggingSystem {
    /// Makes the handler of a logger labelled `label`.
    public typealias HandlerFactory = @Sendable (_ label: String) -> any LogHandler

    private struct State {
        var makeHandler: HandlerFactory
        var logLevel: Logger.Level
    }

    private static let state = Locked(State(makeHandler: { _ in StandardLogHandler() }, logLevel: .info))

    /// Sends the entries of every logger made from now on to the handlers `makeHandler` makes.
    /// Call it once, before the server starts; `bootstrap { _ in StandardLogHandler() }` restores the
    /// default.
    public static func bootstrap(_ makeHandler: @escaping HandlerFactory) {
        state.withLock { $0.makeHandler = makeHandler }
    }

    /// The level of every logger made from now on (default `info`).
    public static var logLevel: Logger.Level {
        get { state.withLock { $0.logLevel } }
        set { state.withLock { $0.logLevel = newValue } }
    }

    /// The handler factory and the level, read together.
    static var current: (makeHandler: HandlerFactory, logLevel: Logger.Level) {
        state.withLock { ($0.makeHandler, $0.logLevel) }
    }
}

extension Logger {
    /// The framework's logger for errors, warnings and notices (label `appshell`), made anew from
    /// `LoggingSystem` for each use: what it logs is rare, and a later bootstrap reaches it.
    package static var appshell: Logger { Logger(label: "appshell") }
}
