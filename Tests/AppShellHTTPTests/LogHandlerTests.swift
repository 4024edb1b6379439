import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// An app's handler (`LoggingSystem.bootstrap`) gets what the server logs as entries: a request's
/// access-log entry, a handler's error, a message of libmicrohttpd, each with its label, level and
/// metadata.
@Suite(.serialized) struct LogHandlerTests {
    /// Keeps every entry it is given, and passes all but request entries on to the default
    /// handler: tests running meanwhile in this process that read standard error (RequestIDTests)
    /// still find their lines there.
    final class Capture: LogHandler {
        let entries = Locked<[LogEntry]>([])
        func log(_ entry: LogEntry) {
            entries.withLock { $0.append(entry) }
            if entry.label != StandardLogHandler.accessLabel { StandardLogHandler().log(entry) }
        }
        var all: [LogEntry] { entries.withLock { $0 } }
    }

    /// Waits up to five seconds for an entry `matching`.
    static func entry(in capture: Capture, matching: (LogEntry) -> Bool) -> LogEntry? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let found = capture.all.first(where: matching) { return found }
            usleep(10_000)
        }
        return nil
    }

    @Test func anAppsHandlerGetsTheAccessLogErrorsAndLibraryMessages() throws {
        struct Failure: Error {}
        let capture = Capture()
        LoggingSystem.bootstrap { _ in capture }
        defer { LoggingSystem.bootstrap { _ in StandardLogHandler() } }
        var router = Router()
        router.get("/ok") { _ in .text("ok") }
        router.get("/fail") { _ in throw Failure() }
        var configuration = LiveServer.testConfiguration
        configuration.accessLog = true
        let live = try LiveServer(configuration: configuration, responder: router)
        defer { live.stop() }
        let client = live.client()
        let marker = "log-handler-\(UUID().uuidString.prefix(8))"
        #expect(try client.get("/ok", headers: [("X-Request-ID", marker + "-ok")]).status == 200)
        #expect(try client.get("/fail", headers: [("X-Request-ID", marker + "-fail")]).status == 500)
        // No Host header: libmicrohttpd answers 400 and says why.
        _ = try client.raw(Array("GET /ok HTTP/1.1\r\n\r\n".utf8))

        let request = try #require(
            Self.entry(in: capture) {
                $0.label == "appshell.access" && $0.metadata["requestID"] == .string(marker + "-ok")
            })
        #expect(request.level == .info)
        #expect(request.message == "request")
        #expect(
            request.metadata.map(\.key) == ["requestID", "client", "method", "path", "status", "bytes", "micros"])
        #expect(request.metadata["path"] == "/ok" && request.metadata["status"] == 200)
        #expect(request.metadata["client"] == "127.0.0.1")

        let failure = try #require(
            Self.entry(in: capture) { $0.label == "appshell" && $0.metadata["requestID"] == .string(marker + "-fail") })
        #expect(failure.level == .error)
        #expect(failure.message.hasPrefix("GET /fail failed: "))

        let library = try #require(
            Self.entry(in: capture) { $0.label == "appshell.libmicrohttpd" && $0.message.contains("without") })
        #expect(library.level == .error)
    }

    /// A logger made takes the process's level then; one made before keeps its own.
    @Test func loggersTakeTheProcesssLevelWhenMade() {
        let before = Logger(label: "notes")
        LoggingSystem.logLevel = .error
        defer { LoggingSystem.logLevel = .info }
        #expect(Logger(label: "notes").logLevel == .error)
        #expect(before.logLevel == .info)
        #expect(!AccessLog(enabled: true).enabled)
    }

    @Test func theAccessLogIsOffBelowItsLevel() {
        let capture = Capture()
        let quiet = AccessLog(
            enabled: true, logger: Logger(label: "appshell.access", handler: capture, logLevel: .notice))
        #expect(!quiet.enabled)
        let loud = AccessLog(
            enabled: true, logger: Logger(label: "appshell.access", handler: capture, logLevel: .debug))
        #expect(loud.enabled)
        #expect(!AccessLog(enabled: false, logger: Logger(label: "appshell.access", handler: capture)).enabled)
    }
}
