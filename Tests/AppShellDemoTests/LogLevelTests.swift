import AppShell
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The `logLevel` key (`APPSHELL_LOG_LEVEL`): one of swift-log's levels, checked like every key,
/// and applied to the process's log: above `info` the access log is left out, the server's events
/// stay.
@Suite struct LogLevelTests {
    @Test func theKeyTakesTheLevelsAndRefusesAnythingElse() throws {
        func load(_ environment: [String: String]) throws(ConfigurationError) -> ShellConfiguration {
            try ShellConfiguration.load(path: "/nonexistent/config.json", required: false, environment: environment)
        }
        #expect(try load([:]).logLevel == .info)
        #expect(try load(["APPSHELL_LOG_LEVEL": "debug"]).logLevel == .debug)
        let levels = #""trace", "debug", "info", "notice", "warning", "error", "critical""#
        #expect(throws: ConfigurationError("environment: APPSHELL_LOG_LEVEL must be one of \(levels), got \"loud\"")) {
            try load(["APPSHELL_LOG_LEVEL": "loud"])
        }
    }

    @Test func aBadLevelIsAConfigurationError() throws {
        let running = try CommandTests.run(environment: ["APPSHELL_LOG_LEVEL": "verbose"])
        #expect(running.waitForExit() == 2)
        #expect(running.errorText.hasPrefix("appshell: configuration error: environment: APPSHELL_LOG_LEVEL must be"))
    }

    @Test func aboveInfoTheAccessLogIsLeftOutAndEventsStay() throws {
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "true", "APPSHELL_LOG_LEVEL": "notice",
        ])
        let port = try running.port()
        #expect(try TestClient(port: port).get("/healthz").status == 200)
        running.terminate()
        #expect(running.waitForExit() == 0)
        let lines = running.outputText.split(separator: "\n").compactMap { try? JSON(parsing: String($0)) }
        #expect(!lines.contains { $0["path"] != nil }, "\(lines)")
        let lifecycle = ["listening", "stopping", "stopped"]
        #expect(lines.compactMap { $0["event"]?.stringValue }.filter(lifecycle.contains) == lifecycle)
    }
}
