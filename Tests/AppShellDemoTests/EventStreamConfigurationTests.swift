import AppShell
import AppShellDemo
import Testing

/// The event-stream limits: defaults, variables and ranges.
@Suite struct EventStreamConfigurationTests {
    static func load(_ environment: [String: String]) throws -> DemoConfiguration {
        try DemoConfiguration.load(path: "/nonexistent/config.json", required: false, environment: environment)
    }

    @Test func defaultsLeaveAQuarterOfTheConnectionsToOtherRequests() throws {
        let defaults = try Self.load([:])
        #expect(defaults.server.maxEventStreams == 768)
        #expect(defaults.server.maxEventStreams * 4 <= defaults.server.maxConnections * 3)
        #expect(defaults.server.maxEventStreamsPerIP == 64)
        #expect(defaults.server.eventStreamBacklogBytes == 65_536)
    }

    @Test func variablesSetThem() throws {
        let configured = try Self.load([
            "APPSHELL_MAX_EVENT_STREAMS": "10", "APPSHELL_MAX_EVENT_STREAMS_PER_IP": "0",
            "APPSHELL_EVENT_STREAM_BACKLOG_BYTES": "4096",
        ])
        #expect(configured.server.maxEventStreams == 10)
        #expect(configured.server.maxEventStreamsPerIP == 0)
        #expect(configured.server.eventStreamBacklogBytes == 4096)
    }

    @Test(arguments: [
        ("APPSHELL_MAX_EVENT_STREAMS", "0", "an integer from 1 to 1000000"),
        ("APPSHELL_MAX_EVENT_STREAMS_PER_IP", "-1", "an integer from 0 to 1000000"),
        ("APPSHELL_EVENT_STREAM_BACKLOG_BYTES", "100", "an integer from 1024 to 1073741824"),
    ])
    func outOfRangeValuesStopTheStart(variable: String, value: String, expected: String) {
        #expect(throws: ConfigurationError.self) { try Self.load([variable: value]) }
        do {
            _ = try Self.load([variable: value])
        } catch {
            #expect("\(error)".contains("\(variable) must be \(expected)"))
        }
    }
}
