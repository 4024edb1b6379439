import AppShellConcurrency
import AppShellJSON
import Glibc
import Testing

/// The logger: its level filters before the message is made, its metadata goes with every entry,
/// and the default handler writes the lines the server always wrote.
@Suite struct LoggerTests {
    /// Keeps every entry it is given.
    final class Capture: LogHandler {
        let entries = Locked<[LogEntry]>([])
        func log(_ entry: LogEntry) { entries.withLock { $0.append(entry) } }
        var all: [LogEntry] { entries.withLock { $0 } }
    }

    @Test func entriesBelowTheLevelAreDroppedWithoutBeingMade() {
        let capture = Capture()
        let logger = Logger(label: "notes.sync", handler: capture, logLevel: .warning)
        var made = 0
        func message(_ text: String) -> String {
            made += 1
            return text
        }
        logger.trace(message("trace"))
        logger.debug(message("debug"))
        logger.info(message("info"))
        logger.notice(message("notice"))
        logger.warning(message("warning"))
        logger.error(message("error"))
        logger.critical(message("critical"))
        #expect(made == 3)
        #expect(capture.all.map(\.message) == ["warning", "error", "critical"])
        #expect(capture.all.map(\.level) == [.warning, .error, .critical])
        #expect(capture.all.allSatisfy { $0.label == "notes.sync" })
        #expect(logger.logs(.error) && !logger.logs(.notice))
    }

    @Test func theLevelsAreOrderedAsSwiftLogs() {
        #expect(
            Logger.Level.allCases.map(\.rawValue) == [
                "trace", "debug", "info", "notice", "warning", "error", "critical",
            ])
        #expect(Logger.Level.allCases == Logger.Level.allCases.sorted())
    }

    @Test func theLoggersMetadataGoesFirstAndTheEntrysWins() throws {
        let capture = Capture()
        var logger = Logger(label: "notes", handler: capture, logLevel: .trace, metadata: ["instance": "a", "zone": 1])
        logger[metadataKey: "region"] = "eu"
        logger.info("synced", metadata: ["zone": 2, "notes": 5])
        let entry = try #require(capture.all.first)
        #expect(entry.metadata.map(\.key) == ["instance", "zone", "region", "notes"])
        #expect(entry.metadata["zone"] == 2)
        #expect(entry.metadata["instance"] == "a")
        #expect(entry.line > 0 && entry.file.hasSuffix("LoggerTests.swift"))
        var metadata: Logger.Metadata = ["a": 1, "b": 2, "a": 3]
        #expect(metadata.map(\.key) == ["a", "b"] && metadata["a"] == 3)
        metadata["a"] = nil
        #expect(metadata.map(\.key) == ["b"])
    }

    /// What `StandardLogHandler` writes for `entries`: (standard output, standard error).
    static func written(_ entries: [LogEntry]) -> (output: String, errors: String) {
        var output: [Int32] = [0, 0]
        var errors: [Int32] = [0, 0]
        pipe(&output)
        pipe(&errors)
        let handler = StandardLogHandler(output: output[1], errors: errors[1])
        for entry in entries { handler.log(entry) }
        close(output[1])
        close(errors[1])
        return (read(output[0]), read(errors[0]))
    }

    static func read(_ descriptor: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(descriptor)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2026-12-06T08:00:35.123456Z`: the `time` field's shape.
    static func isTimestamp(_ text: Substring) -> Bool {
        let shape = Array("0000-00-00T00:00:00.000000Z")
        return text.count == shape.count
            && zip(text, shape).allSatisfy { $1 == "0" ? $0.isASCII && $0.isNumber : $0 == $1 }
    }

    @Test func aRequestIsTheAccessLogsJSONLineOnStandardOutput() throws {
        let entry = LogEntry(
            label: StandardLogHandler.accessLabel, level: .info, message: "request",
            metadata: [
                "requestID": "r-1", "client": "203.0.113.7", "method": "GET", "path": "/a\"b", "status": 200,
                "bytes": 12, "micros": 345,
            ])
        let (output, errors) = Self.written([entry])
        #expect(errors.isEmpty)
        let prefix = #"{"time":""#
        let rest =
            #"","requestID":"r-1","client":"203.0.113.7","method":"GET","path":"/a\"b","status":200,"bytes":12,"micros":345}"#
        #expect(output.hasPrefix(prefix) && output.hasSuffix(rest + "\n"), "\(output)")
        #expect(Self.isTimestamp(output.dropFirst(prefix.count).dropLast(rest.count + 1)), "\(output)")
    }

    @Test func anEventIsAJSONLineWithSortedKeys() throws {
        let entry = LogEntry(
            label: StandardLogHandler.eventLabel, level: .notice, message: "listening",
            metadata: ["url": "http://127.0.0.1:80", "port": 80])
        let output = Self.written([entry]).output
        #expect(output.hasPrefix(#"{"event":"listening","port":80,"time":""#), "\(output)")
        #expect(output.hasSuffix("Z\",\"url\":\"http://127.0.0.1:80\"}\n"), "\(output)")
    }

    @Test func everythingElseIsAPrefixedLineOnStandardError() {
        let entries = [
            LogEntry(label: "appshell", level: .error, message: "GET /x failed: boom", metadata: ["requestID": "r-2"]),
            LogEntry(label: "appshell", level: .warning, message: "\"allowedHosts\" is empty"),
            LogEntry(
                label: "appshell.security", level: .notice, message: "login failed",
                metadata: ["username": "a\"\nb", "client": "::1"]),
            LogEntry(label: "appshell.libmicrohttpd", level: .error, message: "Received HTTP/1.1 request without Host"),
            LogEntry(label: "notes", level: .info, message: "synced", metadata: ["notes": 5]),
        ]
        let (output, errors) = Self.written(entries)
        #expect(output.isEmpty)
        #expect(
            errors.split(separator: "\n") == [
                "appshell: [request r-2] GET /x failed: boom",
                "appshell: warning: \"allowedHosts\" is empty",
                #"appshell: security: login failed username="a\"\nb" client="::1""#,
                "appshell: libmicrohttpd: Received HTTP/1.1 request without Host",
                "appshell: notes: synced notes=5",
            ])
    }
}
